"""rank.selection reaches the generator: on the embedded data with hybrid chunks, bias, mixed
and cosine pass different chunks on, and the generate stage's prompts differ exactly where
the chunks the generator reads differ (issue 13).

Only the prompts are compared, so the generator is a tiny random Llama with SmolLM2's tokenizer
(tests/knobs.py's ``local_models``). The embedded SmolLM2 ships as a GGUF file, which
transformers parses three times on every load: about half of each of the three generate runs."""

import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import copy_repo
from tests.knobs import LLAMA_A, close_zygote, local_models, run_stage

pytestmark = pytest.mark.slow

SETUP = {
    "chunk": {"method": "hybrid"},
    "train_scorer": {"steps": 0, "rescore_train": 8},  # an untrained scorer keeps the cosine order
    "generate": {"train_steps": 0, "max_new_tokens": 1, "max_inputs": 60, "n_examples": 0},
}
SELECTIONS = ("bias", "mixed", "cosine")


def _sh(cmd, cwd, env):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict]:
    """A copy with hybrid chunks, embedded: download, convert, chunk, embed run once for all tests."""
    base = tmp_path_factory.mktemp("selection")
    llama = local_models(base / "models")[LLAMA_A]
    dest, env = copy_repo(base / "repo", {**SETUP, "generate": {**SETUP["generate"], "model": llama}})
    _sh(["dvc", "repro", "embed@embedded"], dest, env)
    return dest, env


@pytest.fixture(scope="module")
def runs(repo) -> dict[str, dict[str, pd.DataFrame]]:
    """rank, train_scorer and generate under each selection. The nine runs are forks of one
    process that has imported what the stages import (tests/zygote.py): each is still the
    script's ``__main__`` in a fresh process, without paying the imports nine times."""
    dest, env = repo
    base = yaml.safe_load((dest / "params.yaml").read_text())
    data, chunks = "data/interim/embedded", "data/chunks/embedded/chunks.parquet"
    out: dict[str, dict[str, pd.DataFrame]] = {}
    try:
        for sel in SELECTIONS:
            run = dest / "runs" / sel
            run.mkdir(parents=True)
            pfile = run / "params.yaml"
            pfile.write_text(yaml.safe_dump({**base, "rank": {**base["rank"], "selection": sel}}))
            common = ["--chunks", chunks, "--data", data, "--params", pfile]
            rankings = run / "rankings.parquet"
            run_stage(["stages/rank.py", *common, "--embeddings", "data/embed/embedded", "--out", rankings], dest, env)
            run_stage(["stages/train_scorer.py", *common, "--rankings", rankings, "--out", run / "scorer"], dest, env)
            run_stage(
                ["stages/generate.py", *common, "--rankings", run / "scorer" / "rescored.parquet",
                 "--config", "configs/embedded.yaml", "--out", run / "generate"],
                dest, env,
            )  # fmt: skip
            out[sel] = {
                "rankings": pd.read_parquet(run / "rankings.parquet"),
                "rescored": pd.read_parquet(run / "scorer" / "rescored.parquet"),
                "predictions": pd.read_parquet(run / "generate" / "predictions.parquet"),
            }
    finally:
        close_zygote(dest)
    return out


def _read(rescored: pd.DataFrame) -> dict[str, list[str]]:
    """What the generator reads per test input: its re-scored chunks in order (n_chunks = 2)."""
    test = rescored[(rescored["split"] == "test") & (rescored["rank"] <= 2)].sort_values(["input_id", "rank"])
    return test.groupby("input_id")["chunk_id"].agg(list).to_dict()


def test_the_pool_is_the_same_and_the_selections_reorder_it(runs):
    pools = {s: r["rankings"].groupby("input_id")["chunk_id"].agg(frozenset) for s, r in runs.items()}
    assert pools["bias"].equals(pools["cosine"]) and pools["mixed"].equals(pools["cosine"])
    assert (runs["cosine"]["rankings"].groupby("input_id").size() == 5).all(), "rank.top_n = 5 chunks per pool"


@pytest.mark.parametrize("a, b", [("bias", "cosine"), ("mixed", "cosine"), ("bias", "mixed")])
def test_prompts_differ_exactly_where_the_chunks_read_differ(runs, a, b):
    read_a, read_b = _read(runs[a]["rescored"]), _read(runs[b]["rescored"])
    pa = runs[a]["predictions"].set_index("id")["prompt"]
    pb = runs[b]["predictions"].set_index("id")["prompt"]
    assert pa.index.equals(pb.index) and len(pa) == 60
    differ = [i for i in pa.index if read_a.get(str(i)) != read_b.get(str(i))]
    assert differ, f"{a} and {b} pass the same chunks on for every test input: the selection does not reach the generator"
    for i in pa.index:
        same_chunks = str(i) not in differ
        assert (pa[i] == pb[i]) == same_chunks, f"input {i}: the prompt changes {'without' if same_chunks else 'with'} its chunks"


def test_bias_keeps_slot_one_and_moves_a_chunk_into_slot_two(runs):
    ranked = runs["bias"]["rankings"]
    cos = runs["cosine"]["rankings"]
    test = ranked[ranked["split"] == "test"]
    # Wherever cosine's top 2 differ from bias's, bias moved a lower-ranked chunk into slot 2.
    moved = 0
    for iid, g in test.groupby("input_id"):
        top_bias = g.sort_values("rank")["chunk_id"].tolist()[:2]
        top_cos = cos[cos["input_id"] == iid].sort_values("rank")["chunk_id"].tolist()[:2]
        if top_bias != top_cos:
            assert top_bias[0] == top_cos[0], "slot 1 stays the most similar chunk"
            moved += 1
    assert moved > 0

