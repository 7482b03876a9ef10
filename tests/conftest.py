import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# make test runs one pytest-xdist worker per core, and each runs torch on two threads (training
# always takes determinism.TRAIN_THREADS): more threads than cores. OpenMP's default waiting
# spins on a core that the other worker needs; passive waiting yields it. Two knob runs side by
# side took 16.5 s each spinning and 10.7 s passive (6.2 s alone), with the same outputs: the
# policy decides how idle threads wait, never how the work is split.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: without it (-p no:xdist) there is nothing to schedule
def pytest_xdist_make_scheduler(config, log):
    """make test's --dist loadfile, longest file first (tests/schedule.py says why)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.schedule import make_scheduler

    return make_scheduler(config, log)


def metrics_diff_module():
    """scripts/metrics_diff.py as a module (scripts are not a package: the library never imports them)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("metrics_diff", ROOT / "scripts" / "metrics_diff.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def assert_metrics_diff_pairs(items_file: Path, metrics_path: str, values: dict[str, float]) -> None:
    """scripts/metrics_diff.py pairs a change of each metric in ``values`` over a stage's own
    per-item file as written (``metrics_path``: where dvc.yaml writes the stage's metrics): the
    items give back each reported value to 1e-9, so no change is exactly (0, 0), and a value
    they do not give back is refused."""
    md = metrics_diff_module()
    items = md.items_at(items_file.name, None, items_file.parent, md.items_path(metrics_path)[1])
    for key, v in values.items():
        assert md.paired_interval(items, items, key, v, v, 100, 0) == (0.0, 0.0), key
        assert md.paired_interval(items, items, key, v, v + 1e-6, 100, 0) is None, key


@pytest.fixture
def shared_datasets() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real benchmark mirror not found at {SHARED} (only on machines with ../shared)")
    return SHARED


def copy_repo(dest: Path, params: dict | None = None) -> tuple[Path, dict]:
    """What a clean clone holds (tracked and new files; no lock, metrics, plots or tests) at
    ``dest``, with ``params`` (section -> values) merged into its params.yaml, as a git
    repository; and the environment that runs its stages with this interpreter's dvc."""
    from biochunk.io import FAULT_ENV

    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in listed:
        src = ROOT / rel
        if rel == "dvc.lock" or rel.startswith(("metrics/", "plots/", "tests/")) or not src.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    if params:
        data = yaml.safe_load((dest / "params.yaml").read_text())
        for section, values in params.items():
            data[section].update(values)
        (dest / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        # The stages must import the copy's library, not the editable install of this checkout.
        "PYTHONPATH": str(dest),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
    }  # fmt: skip
    env.pop(FAULT_ENV, None)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return dest, env
