"""What reproducible float kernels cost: the pipeline's CPU work with the pins against
the processor's own choice (AVX-512 where it has it).

    python benchmarks/determinism_cost.py [--texts 2000] [--steps 10] [--repeats 3] [--against native|nonstrict|compatible]

``biochunk/numerics.py`` pins torch, MKL, oneDNN, FAISS, OpenBLAS and NumPy to code every
x86-64 processor of a vendor runs alike (AVX2; MKL's AVX2 branch on Intel, its vendor-neutral
COMPATIBLE branch elsewhere), so that a lock file written on one machine matches a clean run
on another of the same vendor. Each measurement
runs in a fresh interpreter (the pins are read when the libraries first run), once with
the pins and once with each variable set to the library's own default, on:

- embed: ``Encoder.encode`` of ``--texts`` sentences of the embedded dataset (MiniLM);
- train_scorer: ``--steps`` LoRA steps of the chunk scorer (batch 8, 5 candidates each);
- generate: ``--steps`` LoRA fine-tuning steps of SmolLM2-135M (batch 4);
- search: FAISS flat inner-product top-10 of 2,000 queries over 50,000 vectors.

``--against nonstrict`` compares instead with MKL without ``STRICT``: the price of ``STRICT``,
which makes MKL's products the same bits whatever the thread count. ``--against compatible``
compares with MKL's vendor-neutral branch (``MKL_CBWR=COMPATIBLE,STRICT``): what pinning
Intel processors to the AVX2 branch instead saves.

It also checks that the pinned embeddings are the same bits in both runs of a pair, and
says whether pinning changed them. Prints a Markdown table (median of ``--repeats``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from biochunk.numerics import MKL_BRANCH, PINS as PIN_VALUES  # noqa: E402  (sets the pins in this process too)

PINS = tuple(var for var, _ in PIN_VALUES)
# What torch, FAISS and OpenBLAS pick on this processor when nothing is pinned (read in a
# process that never imports biochunk); MKL's automatic branch, oneDNN's full ISA and NumPy
# with no feature disabled need no probe.
PROBE = """
import faiss, numpy, threadpoolctl, torch
arch = {i["internal_api"]: i.get("architecture") for i in threadpoolctl.threadpool_info()}.get("openblas") or "Haswell"
print(torch.backends.cpu.get_cpu_capability().lower(), faiss.SIMDConfig.get_level_name(), arch)
"""


def native() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PINS}
    r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    aten, simd, blas = r.stdout.split()
    return {
        "ATEN_CPU_CAPABILITY": aten, "MKL_CBWR": "AUTO", "ONEDNN_MAX_CPU_ISA": "ALL", "FAISS_SIMD_LEVEL": simd,
        "OPENBLAS_CORETYPE": blas, "NPY_DISABLE_CPU_FEATURES": "",
    }  # fmt: skip


WORKER = r"""
import hashlib, json, sys, time
import biochunk  # sets the pins unless the environment already names them
import numpy as np, torch
import pathlib
task, n, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = {"capability": torch.backends.cpu.get_cpu_capability()}
if task == "embed":
    from biochunk.embedding import SentenceEncoder
    folder = pathlib.Path(biochunk.__file__).parent / "datasets" / "embedded"
    texts = [json.loads(l)["SENTENCE"] for f in sorted(folder.glob("*.jsonl")) for l in open(f)]
    texts = (texts * (n // max(1, len(texts)) + 1))[:n]
    enc = SentenceEncoder("minilm", 64, "cpu"); enc.encode(texts[:64])
    t = time.perf_counter(); v = enc.encode(texts); dt = time.perf_counter() - t
    out.update(items=n, seconds=dt, digest=hashlib.md5(v.tobytes()).hexdigest())
elif task == "train_scorer":
    from biochunk.scoring.lora_scorer import Candidates, ChunkScorer, train
    s = ChunkScorer("minilm", 8, 128, seed=42)
    data = [Candidates(f"aspirin inhibits enzyme {i}", [f"chunk {i} {j} relation" for j in range(5)], [0.5] * 5, [j == i % 5 for j in range(5)]) for i in range(64)]
    train(s, data, 1, 8, 2e-3, 42)
    t = time.perf_counter(); train(s, data, steps, 8, 2e-3, 42); dt = time.perf_counter() - t
    out.update(items=steps, seconds=dt)
elif task == "generate":
    from biochunk.generation import generator
    from biochunk.generation.model import load_causal_lm
    lm = load_causal_lm("smollm2-135m", "generate.model", "none")
    generator.add_lora(lm, 8, 42)
    ex = [(f"Extract the triple from: drug {i} inhibits protein {i}.", " Answer:", f"drug {i} | inhibits | protein {i}") for i in range(32)]
    generator.finetune(lm, ex, 1, 4, 1e-3, 42)
    t = time.perf_counter(); generator.finetune(lm, ex, steps, 4, 1e-3, 42); dt = time.perf_counter() - t
    out.update(items=steps, seconds=dt)
elif task == "search":
    from biochunk.retrieval.dense import build_index, search
    rng = np.random.default_rng(0)
    db = rng.standard_normal((50_000, 384)).astype(np.float32); db /= np.linalg.norm(db, axis=1, keepdims=True)
    q = db[:2000] + 0.01
    index = build_index(db)
    t = time.perf_counter(); search(index, q, 10); dt = time.perf_counter() - t
    out.update(items=len(q), seconds=dt)
print(json.dumps(out))
"""


def run(task: str, pinned: bool, n: int, steps: int, unpinned: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PINS}
    if not pinned:
        env.update(unpinned)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-c", WORKER, task, str(n), str(steps)], env=env, capture_output=True, text=True, cwd=ROOT
    )
    if r.returncode != 0:
        raise SystemExit(f"error: {task} ({'pinned' if pinned else 'native'}) failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tasks", nargs="+", default=["embed", "train_scorer", "generate", "search"])
    ap.add_argument("--against", choices=("native", "nonstrict", "compatible"), default="native")
    args = ap.parse_args()
    if args.against == "native":
        unpinned = native()
    elif args.against == "nonstrict":
        # Every pin as biochunk sets it, but MKL's products without STRICT.
        unpinned = dict(PIN_VALUES) | {"MKL_CBWR": MKL_BRANCH.split(",")[0]}
    else:
        # Every pin as biochunk sets it, but MKL on its vendor-neutral branch (SSE2 code): what
        # the AVX2 pin saves on an Intel processor (on others the two are the same pin).
        unpinned = dict(PIN_VALUES) | {"MKL_CBWR": "COMPATIBLE,STRICT"}
    print(f"{platform.machine()}, {os.cpu_count()} CPUs; median of {args.repeats}; {args.against} = {unpinned}\n")
    print(f"| step | unit | pinned | {args.against} | pinned / {args.against} time | pinned capability | {args.against} capability |")
    print("|---|---|---:|---:|---:|---|---|")
    notes = []
    for task in args.tasks:
        res = {True: [], False: []}
        for _ in range(args.repeats):
            for pinned in (True, False):
                res[pinned].append(run(task, pinned, args.texts, args.steps, unpinned))
        rate = {p: statistics.median(r["items"] / r["seconds"] for r in res[p]) for p in res}
        unit = {"embed": "texts/s", "search": "queries/s"}.get(task, "steps/s")
        print(
            f"| {task} | {unit} | {rate[True]:.2f} | {rate[False]:.2f} | {rate[False] / rate[True]:.2f} "
            f"| {res[True][0]['capability']} | {res[False][0]['capability']} |"
        )
        if "digest" in res[True][0]:
            pinned_same = len({r["digest"] for r in res[True]}) == 1
            changed = res[True][0]["digest"] != res[False][0]["digest"]
            notes.append(
                f"- {task}: pinned runs agree bit for bit: {pinned_same}; pinning changes the bits on this CPU: {changed}"
            )
    print("\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
