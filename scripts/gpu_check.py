"""The GPU check (issue 17): the CUDA stages' library code, timed against the CPU.

Runs what the stages run, without dvc: the Encoder (embed), the LoRA chunk scorer's
``train`` and ``score`` (train_scorer), the generator's LoRA ``finetune`` and
``generate`` (generate; also in 4-bit NF4 when bitsandbytes imports and CUDA is
present) and dense ``search`` (rank / retrieve). For every step it records the device,
dtype, batch size, throughput, peak GPU memory, and the same step's CPU throughput,
and writes ``<name>.json`` + ``<name>.md`` under ``--out`` after every step (a run cut
short keeps what it measured).

Inputs are the embedded dataset's sentences (the package ships them) and random
unit vectors for search. The generator has SmolLM2-135M's architecture with random
weights (the GPU machine cannot receive the real weights within its 64 MiB carry):
right for speed and memory, meaningless for output quality; the report says so.

1. Here, pack what travels (MiniLM in fp16, SmolLM2's config + tokenizer, and the
   CUDA 13 part of the bitsandbytes wheel under site/, put on sys.path by --models),
   52 MiB; the working tree adds ~3 MiB, within the 64 MiB a device run carries:
       make gpu-pack        # pip download bitsandbytes, then scripts/gpu_check.py --pack build/gpu-pack --bnb-wheel ...
2. On the lent GPU machine: the device tool's ``run`` with carry ["build/gpu-pack"],
   timeout_s 540, and the command ``bash scripts/gpu_check_device.sh``, which runs
       HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python3 scripts/gpu_check.py --models build/gpu-pack --out "$OUT"
   and keeps log.txt and nvidia-smi.txt beside the report (estimated 3-5 min; never run
   yet; --time-limit skips the steps left after 420 s). It also times the
   machine's own CPU with the ``cpu`` budget for the ratio, and reads this machine's
   committed baseline, docs/results/data/gpu-cpu-baseline.json (table: docs/models.md).
3. The CPU baseline, here:  make gpu-baseline
4. The CPU dry run (tests/test_gpu_check.py):  --dry-run --device cpu --out DIR
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib.metadata as md
import importlib.util
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
import traceback
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars would bury the log on the device
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
# This checkout's package, installed or not (the GPU machine has no install of it).
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from biochunk.models import offline_mode, resolve  # noqa: E402

EMBEDDED = ROOT / "biochunk" / "datasets" / "embedded"
DEFAULT_BASELINE = ROOT / "docs" / "results" / "data" / "gpu-cpu-baseline.json"
PACK_ENCODER, PACK_GENERATOR, PACK_SITE = "minilm-fp16", "smollm2-135m-config", "site"
# Only the CUDA 13 library (and the CPU one it falls back to) of the bitsandbytes wheel:
# bitsandbytes loads the highest same-major build, and the whole wheel (43 MB) would not
# fit beside the encoder in the 64 MiB carry.
BNB_KEEP = ("libbitsandbytes_cuda130.so", "libbitsandbytes_cpu.so")
# Step groups (--steps); each writes rows named after the stage code it times.
STEPS = ("embed", "scorer", "generator", "dense_search", "nf4")


@dataclass(frozen=True)
class Budget:
    """Sizes of one run. The first batch size of each list is the stage's params.yaml value."""

    embed_texts: int = 40_000
    embed_batches: tuple[int, ...] = (64, 512)
    embed_fp32: bool = True  # also time fp32 on CUDA (auto picks fp16 there)
    scorer_steps: int = 60
    scorer_batches: tuple[int, ...] = (8, 64)  # training inputs per step
    candidates: int = 5  # rank.top_k chunks per input
    rescore_pairs: int = 20_000
    rescore_batches: tuple[int, ...] = (64, 512)
    gen_layers: int = 0  # 0: SmolLM2-135M's 30 layers; fewer for a quick run
    gen_hidden: int = 0  # 0: SmolLM2-135M's width (576); smaller for a quick run
    gen_steps: int = 40
    gen_batches: tuple[int, ...] = (4, 32)  # fine-tuning examples per step
    gen_prompts: int = 512
    gen_batch_sizes: tuple[int, ...] = (16, 128)  # prompts decoded together
    new_tokens: int = 32
    dense_docs: int = 1_000_000
    dense_queries: int = 10_000
    dense_k: int = 100
    dense_check_queries: int = 200  # queries re-searched on the CPU to check the GPU's top-k
    dense_blocks: tuple[int, ...] = (1 << 26, 1 << 28)  # TorchIndex scores per block (the first is the default)
    nf4_steps: int = 20
    nf4_prompts: int = 128


BUDGETS = {
    # One H200: a few minutes with model loading and the host CPU's pass (estimated; never run yet).
    "device": Budget(),
    # 2 CPU cores: ~90 s in all (the generator's 30 fp32 layers are most of it).
    "cpu": Budget(
        embed_texts=1_000,
        embed_batches=(64,),
        embed_fp32=False,
        scorer_steps=5,
        scorer_batches=(8,),
        rescore_pairs=640,
        rescore_batches=(64,),
        gen_steps=3,
        gen_batches=(4,),
        gen_prompts=32,
        gen_batch_sizes=(16,),
        dense_docs=100_000,
        dense_queries=1_000,
        dense_check_queries=50,
        dense_blocks=(1 << 26,),
        nf4_steps=2,
        nf4_prompts=8,
    ),
    # The test suite's dry run: every code path, tiny sizes, a 1-layer, 64-wide generator.
    "dry-run": Budget(
        embed_texts=16,
        embed_batches=(8,),
        embed_fp32=False,
        scorer_steps=1,
        scorer_batches=(2,),
        candidates=2,
        rescore_pairs=8,
        rescore_batches=(4,),
        gen_layers=1,
        gen_hidden=64,
        gen_steps=1,
        gen_batches=(2,),
        gen_prompts=2,
        gen_batch_sizes=(2,),
        new_tokens=2,
        dense_docs=2_000,
        dense_queries=50,
        dense_k=10,
        dense_check_queries=10,
        dense_blocks=(4_096,),
        nf4_steps=1,
        nf4_prompts=2,
    ),
}


def override(budget: Budget, items: list[str]) -> Budget:
    """``KEY=VALUE`` overrides (``embed_batches=64,256``), checked against the fields."""
    fields = {f.name: f for f in dataclasses.fields(Budget)}
    changes: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in fields:
            raise SystemExit(f"error: --set {item!r}: expected KEY=VALUE with KEY one of {', '.join(fields)}")
        current = getattr(budget, key)
        if isinstance(current, tuple):
            changes[key] = tuple(int(v) for v in value.split(","))
        elif isinstance(current, bool):
            changes[key] = value.lower() in ("1", "true", "yes")
        else:
            changes[key] = int(value)
    return dataclasses.replace(budget, **changes)


# -- measurement -------------------------------------------------------------------------


@dataclass
class Row:
    step: str
    device: str
    dtype: str
    batch_size: int
    items: int
    unit: str
    seconds: float
    items_per_s: float
    peak_gpu_mib: float | None
    note: str = ""


@dataclass
class Timer:
    seconds: float = 0.0
    peak_gpu_mib: float | None = None


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


@contextmanager
def timed(device: str) -> Iterator[Timer]:
    """Wall time of the block (the GPU synchronised at both ends) and its peak GPU memory."""
    t = Timer()
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    yield t
    _sync(device)
    t.seconds = time.perf_counter() - t0
    if cuda:
        t.peak_gpu_mib = torch.cuda.max_memory_allocated() / 2**20


def row(step: str, device: str, dtype: str, batch: int, items: int, unit: str, t: Timer, note: str = "") -> Row:
    rate = round(items / max(t.seconds, 1e-9), 3)
    return Row(step, device, dtype, batch, items, unit, round(t.seconds, 4), rate, t.peak_gpu_mib, note)


def free(device: str) -> None:
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def param_devices(model: torch.nn.Module) -> list[str]:
    """Every device a parameter or buffer sits on: one entry when nothing was left behind."""
    return sorted({t.device.type for t in list(model.parameters()) + list(model.buffers())})


# -- inputs --------------------------------------------------------------------------------


def embedded_triples() -> pd.DataFrame:
    """The embedded dataset (shipped inside the package) as TRIPLES-like rows."""
    rows = []
    for split in ("train", "dev", "test"):
        for n, line in enumerate((EMBEDDED / f"{split}.jsonl").read_text().splitlines()):
            r = json.loads(line)
            rows.append((f"{split}-{n}", split, r["SENTENCE"], r["SUBJECT_TEXT"], r["PREDICATE"], r["OBJECT_TEXT"]))
    return pd.DataFrame(rows, columns=["id", "split", "sentence", "head", "relation", "tail"])


def windows(text: str, size: int = 5) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


def scorer_candidates(triples: pd.DataFrame, n_candidates: int, seed: int = 0) -> list:
    """Per training sentence: windows of other sentences (one of its own relation first),
    with random cosines: what train_scorer reads from the rankings."""
    from biochunk.scoring.lora_scorer import Candidates, chunk_text_for_scorer

    rng = random.Random(seed)
    train = triples[triples["split"] == "train"]
    by_rel: dict[str, list[str]] = {}
    for s, r in zip(train["sentence"], train["relation"]):
        by_rel.setdefault(r, []).extend(windows(s))
    rels = sorted(by_rel)
    out = []
    for s, r in zip(train["sentence"], train["relation"]):
        picks = [(rng.choice(by_rel[r]), r)]
        others = [x for x in rels if x != r]
        picks += [(rng.choice(by_rel[o]), o) for o in rng.sample(others, min(n_candidates - 1, len(others)))]
        rng.shuffle(picks)
        cos = sorted((rng.uniform(0.3, 0.9) for _ in picks), reverse=True)
        out.append(Candidates(s, [chunk_text_for_scorer(t, (lab,)) for t, lab in picks], cos, [lab == r for _, lab in picks]))
    return out


def generator_inputs(triples: pd.DataFrame) -> tuple[list[tuple[str, str, str]], str, list[str]]:
    """(fine-tuning pairs, shared prompt prefix, test prompt suffixes) through the generate
    stage's own prompt code, one evidence window of the gold relation per sentence."""
    from biochunk.generation.prompts import Evidence, prompt_parts
    from biochunk.generation.triples import pick_examples, training_pairs

    rng = random.Random(1)
    relations = sorted(set(triples["relation"]))
    pool: dict[str, list[str]] = {}
    for s, r in zip(triples["sentence"], triples["relation"]):
        pool.setdefault(r, []).extend(windows(s))
    evidence = {str(i): [Evidence(rng.choice(pool[r]), (r,))] for i, r in zip(triples["id"], triples["relation"])}
    train = triples[triples["split"] == "train"]
    examples = pick_examples(train, evidence, 1, seed=42)
    pairs = training_pairs(train, evidence, examples, relations)
    test = triples[triples["split"] == "test"].drop_duplicates("id")
    parts = [prompt_parts(s, evidence[str(i)], examples, relations) for i, s in zip(test["id"], test["sentence"])]
    return pairs, parts[0][0], [suffix for _, suffix in parts]


def cycle(items: list, n: int) -> list:
    return [items[i % len(items)] for i in range(n)]


# -- models --------------------------------------------------------------------------------


@dataclass
class Models:
    encoder: str  # a sentence-transformers folder or an alias
    generator_config: str  # a folder with config.json + tokenizer files
    source: str


def models_from(pack: Path | None, work: Path) -> Models:
    if pack is None:
        offline_mode()
        _save_generator_config(work / "generator-config")
        return Models("minilm", str(work / "generator-config"), "installed packages (minilm, smollm2-135m config)")
    enc, gen = pack / PACK_ENCODER, pack / PACK_GENERATOR
    for p in (enc, gen):
        if not (p / "config.json").exists():
            raise SystemExit(f"error: {p} is not a packed model; run `make gpu-pack` (scripts/gpu_check.py --pack)")
    if (pack / PACK_SITE).is_dir() and importlib.util.find_spec("bitsandbytes") is None:
        sys.path.append(str((pack / PACK_SITE).resolve()))  # the trimmed bitsandbytes, if the pack has one
        importlib.invalidate_caches()
    return Models(str(enc), str(gen), f"pack {pack}")


def _save_generator_config(out: Path) -> None:
    """SmolLM2-135M-Instruct's config and tokenizer, read from the offline GGUF package."""
    from transformers import AutoConfig, AutoTokenizer

    g = Path(resolve("smollm2-135m", "gpu_check.generator"))
    AutoConfig.from_pretrained(str(g.parent), gguf_file=g.name).save_pretrained(str(out))
    AutoTokenizer.from_pretrained(str(g.parent), gguf_file=g.name).save_pretrained(str(out))
    # transformers 5.24 names its class TokenizersBackend; every 5.x also reads the older name.
    cfg = out / "tokenizer_config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "tokenizer_class": "PreTrainedTokenizerFast"}, indent=2) + "\n")


def random_generator(config_dir: str, layers: int, hidden: int, out: Path) -> dict[str, Any]:
    """A causal LM with the packed architecture and random weights, saved where
    ``load_causal_lm`` can load it (so the check goes through the stage's own loader)."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    config = AutoConfig.from_pretrained(config_dir)
    if getattr(config, "quantization_config", None) is not None:
        del config.quantization_config
    if layers:
        config.num_hidden_layers = layers
    if hidden:  # a narrower model of the same family (dry runs): 4 heads sharing one key/value head
        config.update(
            {
                "hidden_size": hidden,
                "intermediate_size": 2 * hidden,
                "num_attention_heads": 4,
                "num_key_value_heads": 1,
                "head_dim": hidden // 4,
            }
        )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(config_dir).save_pretrained(str(out))
    info = {
        "architecture": type(model).__name__,
        "layers": config.num_hidden_layers,
        "hidden": config.hidden_size,
        "parameters": sum(p.numel() for p in model.parameters()),
        "weights": "random (timing only)",
    }
    del model
    return info


# -- the steps -----------------------------------------------------------------------------


@dataclass
class Context:
    device: str
    budget: Budget
    models: Models
    work: Path
    triples: pd.DataFrame
    checks: dict[str, Any] = field(default_factory=dict)
    generator_dir: Path | None = None
    generator_info: dict[str, Any] = field(default_factory=dict)


def step_embed(ctx: Context) -> list[Row]:
    from biochunk.embedding import SentenceEncoder, encoder_dtype

    b, dev = ctx.budget, ctx.device
    texts = cycle(ctx.triples["sentence"].tolist(), b.embed_texts)
    dtypes = [encoder_dtype("auto", dev)] + (["float32"] if b.embed_fp32 and dev.startswith("cuda") else [])
    rows = []
    for dtype in dtypes:
        enc = SentenceEncoder(ctx.models.encoder, b.embed_batches[0], dev, "gpu_check.encoder", dtype)
        enc.encode(texts[: 2 * max(b.embed_batches)])  # load + warm up
        for bs in b.embed_batches if dtype == dtypes[0] else b.embed_batches[-1:]:
            enc.batch_size = bs
            with timed(dev) as t:
                vecs = enc.encode(texts)
            rows.append(row("embed", dev, dtype, bs, len(texts), "sentences", t))
        ctx.checks.setdefault("embed_param_devices", {})[dtype] = param_devices(enc.model)
        if dev.startswith("cuda"):
            # The GPU's vectors against fp32 on the CPU: the cosine of each pair.
            ref = SentenceEncoder(ctx.models.encoder, 64, "cpu", "gpu_check.encoder", "float32").encode(texts[:256])
            ctx.checks.setdefault("embed_min_cosine_vs_cpu_fp32", {})[dtype] = float((vecs[:256] * ref).sum(1).min())
        del enc
        free(dev)
    return rows


def step_scorer(ctx: Context) -> list[Row]:
    """train_scorer: LoRA training steps, then re-scoring (``score``) with the trained scorer."""
    from biochunk.models import train_dtype
    from biochunk.scoring.lora_scorer import ChunkScorer, score, train

    b, dev = ctx.budget, ctx.device
    data = scorer_candidates(ctx.triples, b.candidates)
    amp = train_dtype(dev) != torch.float32
    rows = []
    for bs in b.scorer_batches:
        scorer = ChunkScorer(ctx.models.encoder, lora_r=8, max_length=128, seed=42, param="gpu_check.scorer", device=dev)
        train(scorer, data, 1, bs, 2e-3, 42)  # warm up
        with timed(dev) as t:
            stats = train(scorer, data, b.scorer_steps, bs, 2e-3, 42)
        pairs = b.scorer_steps * min(bs, len(data)) * b.candidates
        rows.append(
            row(
                "train_scorer",
                dev,
                "fp32 weights, bf16 autocast" if amp else "float32",
                bs,
                pairs,
                "pairs",
                t,
                f"{b.scorer_steps / t.seconds:.2f} steps/s; loss {stats['first_loss']:.3f} -> {stats['last_loss']:.3f}",
            )
        )
        ctx.checks["scorer_param_devices"] = param_devices(scorer.ce)
    rescore = cycle(data, max(1, b.rescore_pairs // b.candidates))
    pairs = sum(len(d.chunks) for d in rescore)
    score(scorer, rescore[:4], 8)  # warm up
    for bs in b.rescore_batches:
        with timed(dev) as t:
            score(scorer, rescore, bs)
        rows.append(row("rescore", dev, "bf16 autocast" if amp else "float32", bs, pairs, "pairs", t))
    del scorer
    free(dev)
    return rows


def _generator(ctx: Context) -> Path:
    if ctx.generator_dir is None:
        ctx.generator_dir = ctx.work / "generator"
        b = ctx.budget
        ctx.generator_info = random_generator(ctx.models.generator_config, b.gen_layers, b.gen_hidden, ctx.generator_dir)
    return ctx.generator_dir


def _finetune_and_generate(
    ctx: Context, quantize: str, steps: int, batches: tuple[int, ...], prompts: int, gen_batches: tuple[int, ...], label: str
) -> list[Row]:
    from biochunk.generation import generator
    from biochunk.generation.model import load_causal_lm

    b, dev = ctx.budget, ctx.device
    pairs, prefix, suffixes = generator_inputs(ctx.triples)
    with timed(dev) as load:
        lm = load_causal_lm(str(_generator(ctx)), "gpu_check.generator", quantize, dev)
    dtype = "nf4 (bf16 compute)" if lm.quantized else str(next(lm.model.parameters()).dtype).removeprefix("torch.")
    footprint = lm.model.get_memory_footprint() / 2**20
    generator.add_lora(lm, 8, seed=42)
    tok = lm.tokenizer
    mean_tokens = np.mean([len(generator.encode_prompt(tok, p, s)) for p, s, _ in pairs[:64]])
    rows = []
    generator.finetune(lm, pairs, 1, batches[0], 1e-3, 42)  # warm up
    for bs in batches:
        with timed(dev) as t:
            stats = generator.finetune(lm, pairs, steps, bs, 1e-3, 42)
        rows.append(
            row(
                f"finetune_generator{label}",
                dev,
                dtype,
                bs,
                steps * bs,
                "examples",
                t,
                f"{steps / t.seconds:.2f} steps/s; ~{mean_tokens:.0f} prompt tokens/example; "
                f"loss {stats['first_loss']:.2f} -> {stats['last_loss']:.2f}; weights {footprint:.0f} MiB; "
                f"load {load.seconds:.1f} s",
            )
        )
    ctx.checks[f"generator{label}_param_devices"] = param_devices(lm.model)
    inputs = cycle(suffixes, prompts)
    generator.generate(lm, prefix, inputs[:2], 2, 2)  # warm up
    for bs in gen_batches:
        with timed(dev) as t:
            out = generator.generate(lm, prefix, inputs, b.new_tokens, bs)
        new = sum(len(tok(o, add_special_tokens=False).input_ids) for o in out)
        rows.append(
            row(
                f"generate{label}",
                dev,
                dtype,
                bs,
                len(inputs),
                "prompts",
                t,
                f"~{new / t.seconds:.0f} new tokens/s (<= {b.new_tokens} per prompt); "
                f"prefix {len(tok(prefix, add_special_tokens=False).input_ids)} tokens cached",
            )
        )
    del lm
    free(dev)
    return rows


def step_generator(ctx: Context) -> list[Row]:
    """generate: LoRA fine-tuning, then decoding, unquantised (bf16 on CUDA, fp32 on CPU)."""
    b = ctx.budget
    return _finetune_and_generate(ctx, "none", b.gen_steps, b.gen_batches, b.gen_prompts, b.gen_batch_sizes, "")


def nf4_status(device: str) -> str | None:
    """None when NF4 can be tried here, else why not."""
    if not device.startswith("cuda"):
        return "not tested: 4-bit NF4 needs a CUDA device"
    if importlib.util.find_spec("bitsandbytes") is None:
        return "not tested: bitsandbytes is not installed (pack it with --bnb-wheel, and put <pack>/site on PYTHONPATH)"
    return None


def step_nf4(ctx: Context) -> list[Row]:
    b = ctx.budget
    why = nf4_status(ctx.device)
    if why:
        ctx.checks["nf4"] = why
        return []
    rows = _finetune_and_generate(ctx, "nf4", b.nf4_steps, b.gen_batches[:1], b.nf4_prompts, b.gen_batch_sizes[-1:], "_nf4")
    ctx.checks["nf4"] = f"tested with bitsandbytes {md.version('bitsandbytes')}"
    return rows


def step_dense_search(ctx: Context) -> list[Row]:
    from biochunk.retrieval.dense import TorchIndex, backend_of, build_index, search, to_device

    b, dev = ctx.budget, ctx.device
    rng = np.random.default_rng(0)
    docs = rng.standard_normal((b.dense_docs, 384), dtype=np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    # Queries near some documents, as real queries sit near their evidence.
    noise = rng.standard_normal((b.dense_queries, 384), dtype=np.float32)
    queries = docs[rng.integers(0, b.dense_docs, b.dense_queries)] + 0.1 * noise
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    use_gpu = "yes" if dev.startswith("cuda") else "no"
    rows = []
    with timed(dev) as build:
        index = to_device(build_index(docs, "flat"), use_gpu)  # the rank stage's path: auto-selected backend
    variants = [(index, "")]
    for block in b.dense_blocks:
        if not (isinstance(index, TorchIndex) and block == index.block_scores):
            where = index.device if isinstance(index, TorchIndex) else "cpu"
            variants.append((TorchIndex(docs, where, block), f"block {block:,} scores"))
    for ix, label in variants:
        search(ix, queries[:8], b.dense_k)  # warm up
        with timed(dev) as t:
            _, ids = search(ix, queries, b.dense_k)
        label = label or (f"block {ix.block_scores:,} scores" if isinstance(ix, TorchIndex) else "")
        rows.append(
            row(
                "dense_search",
                dev,
                f"float32 ({backend_of(ix)})",
                len(queries),
                len(queries),
                "queries",
                t,
                f"{b.dense_docs:,} x 384 vectors, top-{b.dense_k}, exact; {label + '; ' if label else ''}"
                f"index build + transfer {build.seconds:.2f} s",
            )
        )
        n = min(b.dense_check_queries, len(queries))
        if ix is index and n:
            # The top-k against an exact search on the CPU: the share of ids both return.
            _, ref = TorchIndex(docs, "cpu").search(queries[:n], b.dense_k)
            overlap = [len(set(a) & set(r)) / b.dense_k for a, r in zip(ids[:n], ref)]
            ctx.checks["dense_topk_overlap_vs_cpu"] = float(np.mean(overlap))
    del index, variants
    free(dev)
    return rows


STEP_FUNCS: dict[str, Callable[[Context], list[Row]]] = {
    "embed": step_embed,
    "scorer": step_scorer,
    "generator": step_generator,
    "dense_search": step_dense_search,
    "nf4": step_nf4,
}


# -- the report ----------------------------------------------------------------------------


def machine(device: str) -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    for pkg in ("torch", "transformers", "peft", "sentence-transformers", "accelerate", "bitsandbytes", "faiss-cpu", "faiss-gpu"):
        try:
            info[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            info[pkg] = None
    if device.startswith("cuda"):
        p = torch.cuda.get_device_properties(0)
        info.update(
            gpu=p.name,
            gpu_memory_gib=round(p.total_memory / 2**30, 1),
            cuda=torch.version.cuda,
            bf16=torch.cuda.is_bf16_supported(),
            capability=f"{p.major}.{p.minor}",
        )
    return info


def best(rows: list[dict], step: str) -> dict | None:
    hits = [r for r in rows if r["step"] == step]
    return max(hits, key=lambda r: r["items_per_s"]) if hits else None


def comparison(report: dict) -> list[dict]:
    """Per step: the device's best throughput against the host CPU's and the baseline's."""
    base = report.get("baseline", {}).get("rows", [])
    out = []
    for step in dict.fromkeys(r["step"] for r in report["rows"]):
        d, c, bl = best(report["rows"], step), best(report["cpu_rows"], step), best(base, step)
        out.append(
            {
                "step": step,
                "unit": d["unit"],
                "device_items_per_s": d["items_per_s"],
                "device_batch": d["batch_size"],
                "host_cpu_items_per_s": c["items_per_s"] if c else None,
                "ratio_vs_host_cpu": round(d["items_per_s"] / c["items_per_s"], 2) if c else None,
                "baseline_items_per_s": bl["items_per_s"] if bl else None,
                "ratio_vs_baseline": round(d["items_per_s"] / bl["items_per_s"], 2) if bl else None,
            }
        )
    return out


def _fmt(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:,.1f}" if x >= 10 else f"{x:.3g}"
    return str(x)


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"# GPU check: {m.get('gpu', report['device'])}",
        "",
        f"{report['created']} · device `{report['device']}` · budget `{report['budget_name']}` · "
        f"{report['seconds_total']:.0f} s · torch {m['torch']}"
        + (f" (CUDA {m['cuda']})" if m.get("cuda") else "")
        + f" · {m['cpu_count']} CPUs, {m['torch_threads']} torch threads, load {m['load_average_at_start']}",
        "",
        *([f"Note: {report['note']}", ""] if report["note"] else []),
        f"Models: {report['models']['source']}. Generator: {report['generator']}.",
        "",
        "| step | device | dtype | batch | items/s | unit | s | peak GPU MiB | note |",
        "|---|---|---|---:|---:|---|---:|---:|---|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['step']} | {r['device']} | {r['dtype']} | {r['batch_size']} | {_fmt(r['items_per_s'])} | "
            f"{r['unit']} | {r['seconds']:.2f} | {_fmt(r['peak_gpu_mib'])} | {r['note']} |"
        )
    lines += [
        "",
        "## Against the CPU",
        "",
        "Best throughput per step. Host CPU: this run's machine, timed with the `cpu` budget; baseline: "
        f"`{report.get('baseline', {}).get('file', '—')}` ({report.get('baseline', {}).get('machine', '—')}).",
        "",
        "| step | unit | device items/s (batch) | host CPU items/s | × host CPU | baseline items/s | × baseline |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for c in report["comparison"]:
        lines.append(
            f"| {c['step']} | {c['unit']} | {_fmt(c['device_items_per_s'])} ({c['device_batch']}) | "
            f"{_fmt(c['host_cpu_items_per_s'])} | {_fmt(c['ratio_vs_host_cpu'])} | {_fmt(c['baseline_items_per_s'])} | "
            f"{_fmt(c['ratio_vs_baseline'])} |"
        )
    lines += ["", "## Checks", ""] + [f"- {k}: `{json.dumps(v)}`" for k, v in report["checks"].items()]
    if report["failures"]:
        lines += ["", "## Failures", ""] + [f"- **{f['step']}** ({f['where']}): `{f['error']}`" for f in report["failures"]]
    return "\n".join(lines) + "\n"


def write_report(report: dict, out: Path, name: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    report["comparison"] = comparison(report)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    (out / f"{name}.md").write_text(markdown(report))


# -- running -------------------------------------------------------------------------------


def run_steps(
    ctx: Context, steps: list[str], sink: list[dict], report: dict, deadline: float, where: str, save: Callable[[], None]
) -> None:
    for step in steps:
        if time.monotonic() > deadline:
            report["failures"].append({"step": step, "where": where, "error": "skipped: --time-limit reached"})
            continue
        t0 = time.monotonic()
        print(f"[gpu_check] {where}: {step} ...", flush=True)
        try:
            rows = STEP_FUNCS[step](ctx)
        except Exception as e:  # noqa: BLE001 - recorded in the report; the other steps still run
            tb = traceback.format_exc().strip().splitlines()
            report["failures"].append(
                {"step": step, "where": where, "error": f"{type(e).__name__}: {e}"[:500], "traceback": tb[-12:]}
            )
            print("\n".join(tb[-12:]), file=sys.stderr, flush=True)
            free(ctx.device)
            rows = []
        sink.extend(dataclasses.asdict(r) for r in rows)
        print(f"[gpu_check] {where}: {step} done in {time.monotonic() - t0:.1f} s", flush=True)
        save()


def run(args: argparse.Namespace) -> int:
    from biochunk.models import pick_device

    offline_mode()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("error: --device cuda but torch sees no CUDA device")
    budget_name = "dry-run" if args.dry_run else args.budget or ("device" if device.startswith("cuda") else "cpu")
    budget = override(BUDGETS[budget_name], args.set)
    steps = [s.strip() for s in args.steps.split(",")] if args.steps else list(STEPS)
    unknown = set(steps) - set(STEPS)
    if unknown:
        raise SystemExit(f"error: --steps: unknown {', '.join(sorted(unknown))}; allowed: {', '.join(STEPS)}")
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as work:
        failures = _run(args, device, budget_name, budget, steps, Path(work))
    return 1 if failures else 0


def _run(args: argparse.Namespace, device: str, budget_name: str, budget: Budget, steps: list[str], work: Path) -> int:
    """Every step on ``device`` (then on the host CPU), the report rewritten after each; the failures."""
    started, t_start = time.strftime("%Y-%m-%dT%H:%M:%S%z"), time.monotonic()
    deadline = t_start + args.time_limit
    models = models_from(args.models, work)
    report: dict[str, Any] = {
        "version": 1,
        "created": started,
        "device": device,
        "budget_name": budget_name,
        "budget": dataclasses.asdict(budget),
        "machine": machine(device),
        "models": dataclasses.asdict(models),
        "generator": "not built",
        "rows": [],
        "cpu_rows": [],
        "checks": {},
        "failures": [],
        "seconds_total": 0.0,
        "note": args.note,
    }
    baseline = args.baseline or (DEFAULT_BASELINE if DEFAULT_BASELINE.exists() and not args.no_baseline else None)
    if baseline is not None:
        b = json.loads(Path(baseline).read_text())
        shown = Path(baseline).resolve()
        shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
        report["baseline"] = {
            "file": str(shown),
            "machine": b.get("note") or b.get("machine", {}).get("platform"),
            "rows": b["rows"],
        }
    ctx = Context(device, budget, models, work, embedded_triples())

    def save() -> None:
        report["checks"] = dict(ctx.checks)
        if ctx.generator_info:
            i = ctx.generator_info
            report["generator"] = (
                f"{i['architecture']}, {i['layers']} layers of width {i['hidden']}, "
                f"{i['parameters'] / 1e6:.0f}M parameters, {i['weights']}"
            )
        report["seconds_total"] = round(time.monotonic() - t_start, 1)
        write_report(report, args.out, args.name)

    run_steps(ctx, steps, report["rows"], report, deadline, device, save)
    if device.startswith("cuda") and args.cpu_compare:
        # The same steps on this machine's CPU, smaller (NF4 has no CPU path).
        cpu = Context(
            "cpu", BUDGETS["cpu"], models, work, ctx.triples, generator_dir=ctx.generator_dir, generator_info=ctx.generator_info
        )
        run_steps(cpu, [s for s in steps if s != "nf4"], report["cpu_rows"], report, deadline, "cpu", save)
        ctx.checks.update({f"cpu_{k}": v for k, v in cpu.checks.items()})
    elif not device.startswith("cuda"):
        report["cpu_rows"] = list(report["rows"])
    save()
    print(f"[gpu_check] wrote {args.out / (args.name + '.json')} and .md in {time.monotonic() - t_start:.0f} s", flush=True)
    return len(report["failures"])


# -- packing -------------------------------------------------------------------------------


def folder_mib(p: Path) -> float:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 2**20


def _save_encoder(out: Path) -> None:
    """all-MiniLM-L6-v2 with its weights in fp16 (44 MiB), every other file as the package ships it.

    Copied rather than re-saved: sentence-transformers 6 writes module paths that 5.x cannot
    read, and drops ``max_seq_length`` (256). The Encoder and the scorer load the weights
    back in the dtype they run in.
    """
    from safetensors.torch import load_file, save_file

    src = Path(resolve("minilm", "gpu_check.encoder"))
    skip = {"model.safetensors", "README.md", ".gitattributes", "data_config.json"}
    shutil.copytree(src, out, ignore=lambda d, names: [n for n in names if Path(d) == src and n in skip])
    weights = {k: v.half().contiguous() for k, v in load_file(str(src / "model.safetensors")).items()}
    save_file(weights, str(out / "model.safetensors"), metadata={"format": "pt"})


def pack(out: Path, bnb_wheel: Path | None) -> int:
    """What travels to the GPU machine: MiniLM in fp16, SmolLM2's config + tokenizer, and
    (optionally) the CUDA 13 part of a bitsandbytes wheel under ``site/``."""
    offline_mode()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    _save_encoder(out / PACK_ENCODER)
    _save_generator_config(out / PACK_GENERATOR)
    if bnb_wheel is not None:
        with zipfile.ZipFile(bnb_wheel) as z:
            for name in z.namelist():
                lib = name.endswith(".so")
                code = name.startswith("bitsandbytes/") or ".dist-info/" in name
                if (lib and Path(name).name in BNB_KEEP) or (not lib and code):
                    z.extract(name, out / PACK_SITE)
    sizes = {p.name: round(folder_mib(p), 1) for p in sorted(out.iterdir())}
    (out / "PACK.json").write_text(
        json.dumps(
            {"mib": sizes, "total_mib": round(folder_mib(out), 1), "bitsandbytes_wheel": bnb_wheel.name if bnb_wheel else None},
            indent=2,
        )
        + "\n"
    )
    print(f"packed {out}: {sizes}, total {folder_mib(out):.1f} MiB")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", type=Path, help="write the models that travel to the GPU machine into this folder, and stop")
    ap.add_argument("--bnb-wheel", type=Path, help="with --pack: a bitsandbytes manylinux wheel to trim into <pack>/site")
    ap.add_argument("--out", type=Path, help="folder for <name>.json and <name>.md")
    ap.add_argument("--name", default="gpu_check", help="report file name (without extension)")
    ap.add_argument("--device", default="auto", help="auto (CUDA when present) | cuda | cpu")
    ap.add_argument("--models", type=Path, help="a --pack folder (default: the installed offline packages)")
    ap.add_argument("--budget", choices=sorted(BUDGETS), help="sizes (default: device on CUDA, cpu otherwise)")
    ap.add_argument("--dry-run", action="store_true", help="tiny sizes and a 2-layer generator: every code path in seconds")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one budget size (repeatable)")
    ap.add_argument("--steps", help=f"comma-separated subset of {','.join(STEPS)}")
    ap.add_argument("--no-cpu-compare", dest="cpu_compare", action="store_false", help="on CUDA, skip timing the host CPU")
    ap.add_argument("--baseline", type=Path, help=f"a CPU report to compare with (default {DEFAULT_BASELINE.relative_to(ROOT)})")
    ap.add_argument("--no-baseline", action="store_true", help="compare with no committed CPU report (when making one)")
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch CPU threads (0: torch's default); 1 on a shared CPU, where spinning threads stall each other",
    )
    ap.add_argument("--time-limit", type=float, default=420.0, help="seconds after which remaining steps are skipped")
    ap.add_argument("--note", default="", help="free text stored in the report (e.g. what else ran on the machine)")
    args = ap.parse_args(argv)
    if args.pack:
        return pack(args.pack, args.bnb_wheel)
    if args.out is None:
        ap.error("--out is required (or --pack)")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
