"""Model selection: offline aliases, and the CUDA / CPU choice, without needing a GPU."""

from pathlib import Path

import numpy as np
import pytest
import torch

from biochunk import models
from biochunk.errors import UserError
from biochunk.generation import model as gm


def test_aliases_resolve_to_files_inside_packages():
    assert Path(models.resolve("minilm", "embed.model"), "config.json").exists()
    assert models.resolve("smollm2-135m", "generate.model").endswith(".gguf")



def test_hub_id_passes_through_when_the_hub_is_online(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert models.resolve("org/some-model", "embed.model") == "org/some-model"


@pytest.mark.parametrize(
    "name, needle",
    [
        ("org/some-model", "embed.model: hub model 'org/some-model' is not in the local Hugging Face cache and the hub is offline"),
        ("/no/such/folder", "embed.model: local path /no/such/folder does not exist"),
        ("./weights/model.safetensors", "embed.model: local path ./weights/model.safetensors does not exist"),
        ("not a model!", "embed.model: 'not a model!' is neither an offline alias, an existing path, nor a valid hub id"),
    ],
)
def test_unresolvable_models_name_the_param(monkeypatch, name, needle):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError) as e:
        models.resolve(name, "embed.model")
    assert str(e.value).startswith(needle) and "offline alias (minilm, smollm2-135m)" in str(e.value)


def test_a_folder_without_a_model_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"train_scorer\.model: folder .* holds no config\.json or modules\.json"):
        models.resolve(str(tmp_path), "train_scorer.model")
    (tmp_path / "config.json").write_text("{}")
    assert models.resolve(str(tmp_path), "train_scorer.model") == str(tmp_path)


def test_a_broken_model_folder_is_one_user_error(tmp_path):
    from biochunk.scoring.lora_scorer import ChunkScorer

    (tmp_path / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(UserError, match=r"^train_scorer\.model: cannot load '.*' \("):
        ChunkScorer(str(tmp_path), 4, 32, seed=0)


class _Captured(Exception):
    pass


def _capture_load(monkeypatch, tmp_path, cuda: bool, bnb: bool = True):
    import importlib.util

    import transformers

    seen = {}

    def fake_model(path, **kw):
        seen.update(kw, path=path)
        raise _Captured

    real_find_spec = importlib.util.find_spec

    def find_spec(name, *a):
        if name == "bitsandbytes":
            return object() if bnb else None
        return real_find_spec(name, *a)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: cuda)
    (tmp_path / "config.json").write_text("{}")  # resolve() wants a folder that holds a model
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: object())
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", fake_model)
    return seen


def test_cuda_selects_4bit_nf4(monkeypatch, tmp_path):
    seen = _capture_load(monkeypatch, tmp_path, cuda=True)
    with pytest.raises(_Captured):
        gm.load_causal_lm(str(tmp_path), "generate.model")
    qc = seen["quantization_config"]
    assert qc.load_in_4bit and qc.bnb_4bit_quant_type == "nf4"
    assert seen["device_map"] == {"": 0}


def test_cpu_selects_fp32(monkeypatch, tmp_path):
    seen = _capture_load(monkeypatch, tmp_path, cuda=False)
    with pytest.raises(_Captured):
        gm.load_causal_lm(str(tmp_path), "generate.model")
    assert seen["dtype"] is torch.float32 and "quantization_config" not in seen


def test_nf4_without_cuda_is_a_user_error(monkeypatch, tmp_path):
    _capture_load(monkeypatch, tmp_path, cuda=False)
    with pytest.raises(UserError, match="generate.quantize: nf4 needs a CUDA GPU"):
        gm.load_causal_lm(str(tmp_path), "generate.model", quantize="nf4")


def test_cuda_without_bitsandbytes_falls_back_to_bf16(monkeypatch, tmp_path):
    # The GPU box of issue 17 has no bitsandbytes: auto must load, not crash on the import.
    seen = _capture_load(monkeypatch, tmp_path, cuda=True, bnb=False)
    with pytest.raises(_Captured):
        gm.load_causal_lm(str(tmp_path), "generate.model")
    assert seen["dtype"] is torch.bfloat16 and "quantization_config" not in seen


def test_cuda_unquantized_is_bf16_and_cpu_device_stays_fp32(monkeypatch, tmp_path):
    seen = _capture_load(monkeypatch, tmp_path, cuda=True)
    with pytest.raises(_Captured):
        gm.load_causal_lm(str(tmp_path), "generate.model", quantize="none")
    assert seen["dtype"] is torch.bfloat16
    seen.clear()
    with pytest.raises(_Captured):  # an explicit CPU device on a CUDA machine (the GPU check's CPU baseline)
        gm.load_causal_lm(str(tmp_path), "generate.model", device="cpu")
    assert seen["dtype"] is torch.float32 and "quantization_config" not in seen


def test_nf4_without_bitsandbytes_is_a_user_error(monkeypatch, tmp_path):
    _capture_load(monkeypatch, tmp_path, cuda=True, bnb=False)
    with pytest.raises(UserError, match="generate.quantize: nf4 needs the bitsandbytes package"):
        gm.load_causal_lm(str(tmp_path), "generate.model", quantize="nf4")


def test_encoder_keeps_fp32_on_cpu_whatever_the_checkpoint_holds(tmp_path):
    # transformers 5 loads a checkpoint in its saved dtype; the GPU check carries MiniLM in fp16.
    from sentence_transformers import SentenceTransformer

    from biochunk.embedding import SentenceEncoder, encoder_dtype

    assert encoder_dtype("auto", "cuda") == "float16" and encoder_dtype("auto", "cpu") == "float32"
    SentenceTransformer(models.resolve("minilm", "embed.model"), device="cpu").half().save(str(tmp_path / "m16"))
    enc = SentenceEncoder(str(tmp_path / "m16"), device="cpu")
    v = enc.encode(["aspirin inhibits COX-1"])
    assert next(enc.model.parameters()).dtype is torch.float32
    assert v.dtype == np.float32 and abs(float(np.linalg.norm(v)) - 1) < 1e-5


@pytest.mark.slow  # two interpreters that import torch and peft: about 12 s
def test_a_stage_log_has_no_advice_to_install_cpu_4bit_kernels():
    """bitsandbytes (imported with peft) asks for `pip install kernels` on a CPU; 4-bit loads on
    CUDA only here, so cli.run drops that one line and keeps the stage's own."""
    import subprocess
    import sys

    body = "import logging\nlogging.getLogger('stage').info('own line')\nimport peft\n"
    plain = f"import logging\nlogging.basicConfig(level=logging.INFO)\n{body}"
    r = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True, check=True)
    if "kernels" not in r.stderr:
        pytest.skip("this bitsandbytes does not warn about its CPU kernels")
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    staged = f"from biochunk import cli\ndef main():\n{indented}cli.run(main)\n"
    r = subprocess.run([sys.executable, "-c", staged], capture_output=True, text=True, check=True)
    assert "own line" in r.stderr and "kernels" not in r.stderr, r.stderr
