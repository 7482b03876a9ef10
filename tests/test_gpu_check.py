"""The GPU check script (issue 17) on the CPU: its dry run, so it cannot rot between GPU loans."""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
ROW_STEPS = {"embed", "train_scorer", "rescore", "finetune_generator", "generate", "dense_search"}


def _script():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def one_thread():
    # The dry run sets one torch thread (a shared CPU); give the rest of the session its own back.
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.slow
def test_dry_run_times_every_step_and_writes_the_report(tmp_path, one_thread) -> None:
    gc = _script()
    rc = gc.main(["--dry-run", "--device", "cpu", "--threads", "1", "--out", str(tmp_path), "--no-baseline"])
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["failures"] == [] and rc == 0
    assert {r["step"] for r in report["rows"]} == ROW_STEPS
    for r in report["rows"]:
        assert r["device"] == "cpu" and r["items_per_s"] > 0 and r["batch_size"] >= 1 and r["dtype"], r
        assert r["peak_gpu_mib"] is None
    assert {c["step"] for c in report["comparison"]} == ROW_STEPS
    assert all(c["ratio_vs_host_cpu"] == 1.0 for c in report["comparison"])  # on the CPU, the host CPU is the device
    checks = report["checks"]
    assert checks["dense_topk_overlap_vs_cpu"] == 1.0
    assert checks["scorer_param_devices"] == checks["generator_param_devices"] == ["cpu"]
    assert checks["nf4"].startswith("not tested: 4-bit NF4 needs a CUDA device")
    assert "random" in report["generator"]
    md = (tmp_path / "gpu_check.md").read_text()
    assert md.startswith("# GPU check") and "## Against the CPU" in md
    assert all(f"| {s} |" in md for s in ROW_STEPS)


def test_the_committed_cpu_baseline_has_every_step() -> None:
    base = json.loads((ROOT / "docs" / "results" / "data" / "gpu-cpu-baseline.json").read_text())
    assert {r["step"] for r in base["rows"]} >= ROW_STEPS and base["failures"] == []
    assert base["device"] == "cpu" and base["note"]  # says what else ran on the machine


def test_budget_overrides_are_checked() -> None:
    gc = _script()
    b = gc.override(gc.BUDGETS["device"], ["embed_batches=64,256", "dense_docs=10", "embed_fp32=no"])
    assert b.embed_batches == (64, 256) and b.dense_docs == 10 and b.embed_fp32 is False
    with pytest.raises(SystemExit, match="KEY one of"):
        gc.override(b, ["nope=1"])
    with pytest.raises(SystemExit, match="unknown bogus"):
        gc.main(["--out", "x", "--steps", "embed,bogus"])


def test_pack_keeps_only_the_cuda13_part_of_bitsandbytes(tmp_path, monkeypatch) -> None:
    gc = _script()
    wheel = tmp_path / "bitsandbytes-0.0-py3-none-manylinux_2_24_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in (
            "bitsandbytes/__init__.py",
            "bitsandbytes/libbitsandbytes_cuda130.so",
            "bitsandbytes/libbitsandbytes_cpu.so",
            "bitsandbytes/libbitsandbytes_cuda128.so",
            "bitsandbytes/libbitsandbytes_rocm72.so",
            "bitsandbytes-0.0.dist-info/METADATA",
        ):
            z.writestr(name, "x")
    # The models are the slow part of a pack; this test is about the wheel.
    monkeypatch.setattr(gc, "_save_encoder", lambda out: out.mkdir())
    monkeypatch.setattr(gc, "_save_generator_config", lambda out: out.mkdir())
    gc.pack(tmp_path / "pack", wheel)
    site = tmp_path / "pack" / "site"
    kept = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    assert kept == [
        "bitsandbytes-0.0.dist-info/METADATA",
        "bitsandbytes/__init__.py",
        "bitsandbytes/libbitsandbytes_cpu.so",
        "bitsandbytes/libbitsandbytes_cuda130.so",
    ]
    assert json.loads((tmp_path / "pack" / "PACK.json").read_text())["total_mib"] < 1
