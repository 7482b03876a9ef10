"""How the paper commands run the pipeline's own stages: each stage script in its own
process (as ``dvc repro`` runs it), all reading one params file written for the experiment,
so a paper's QA rows go through exactly the code and schema of the pipeline."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from biochunk.errors import UserError

ROOT = Path(__file__).resolve().parents[2]  # the repository (benchmarks/papers/ -> ..)


def apply_sets(p: dict, sets: list[str]) -> dict:
    """``section.key=value`` overrides (``--set``) on a params dict; the value is YAML."""
    for s in sets:
        key, _, value = s.partition("=")
        head, _, tail = key.partition(".")
        if not tail or head not in p:
            raise UserError(f"--set {s}: expected section.key=value, e.g. generate.model=smollm2-135m")
        p[head][tail] = yaml.safe_load(value)
    return p


def run_stages(steps: list[list[str]], params_file: Path) -> float:
    """Run each ``[script, *args]`` of ``stages/`` with ``--params params_file``; the wall seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    for step in steps:
        print(f"== {step[0]}", flush=True)
        subprocess.run(
            [sys.executable, str(ROOT / "stages" / step[0]), *step[1:], "--params", str(params_file)], env=env, check=True
        )
    return time.perf_counter() - t0
