"""Model selection: offline aliases, and the CUDA / CPU choice, without needing a GPU."""

from pathlib import Path

import pytest
import torch

from biochunk import models
from biochunk.errors import UserError
from biochunk.generation import model as gm


def test_aliases_resolve_to_files_inside_packages():
    assert Path(models.resolve("minilm", "embed.model"), "config.json").exists()
    assert models.resolve("smollm2-135m", "generate.model").endswith(".gguf")
    assert models.resolve("org/some-model", "embed.model") == "org/some-model"


class _Captured(Exception):
    pass


def _capture_load(monkeypatch, cuda: bool):
    import transformers

    seen = {}

    def fake_model(path, **kw):
        seen.update(kw, path=path)
        raise _Captured

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: object())
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", fake_model)
    return seen


def test_cuda_selects_4bit_nf4(monkeypatch, tmp_path):
    seen = _capture_load(monkeypatch, cuda=True)
    with pytest.raises(_Captured):
        gm.load_causal_lm(str(tmp_path), "generate.model")
    qc = seen["quantization_config"]
    assert qc.load_in_4bit and qc.bnb_4bit_quant_type == "nf4"
    assert seen["device_map"] == {"": 0}


def test_cpu_selects_fp32(monkeypatch, tmp_path):
    seen = _capture_load(monkeypatch, cuda=False)
    with pytest.raises(_Captured):
        gm.load_causal_lm(str(tmp_path), "generate.model")
    assert seen["dtype"] is torch.float32 and "quantization_config" not in seen


def test_nf4_without_cuda_is_a_user_error(monkeypatch, tmp_path):
    _capture_load(monkeypatch, cuda=False)
    with pytest.raises(UserError, match="generate.quantize: nf4 needs a CUDA GPU"):
        gm.load_causal_lm(str(tmp_path), "generate.model", quantize="nf4")
