"""params.yaml guards (issue 25): the file's YAML (duplicate keys, anchors and aliases, deep
nesting, size), data.local paths that reach a shell, sizes that contradict each other, and
embed.device; each refused in one line before any work, and `make repro`'s pre-check
(scripts/check_params.py) says the same line before DVC parses the file."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import yaml

from biochunk import params
from biochunk.errors import UserError
from tests.conftest import ROOT
from tests.forked import run_python

LOL = '["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'
# Nine levels of nine aliases: 9**9 (387 million) strings once anything walks the values.
ALIAS_BOMB = f"a: &a {LOL}\n" + "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))


def _error(text: str, tmp_path) -> str:
    p = tmp_path / "params.yaml"
    p.write_text(text)
    with pytest.raises(UserError) as e:
        params.load_yaml(p)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


@pytest.mark.parametrize(
    "text, needle",
    [
        ("chunk:\n  window: 5\n  overlap: 1\n  window: 7\n", "params.yaml:4: chunk.window is given twice (also at line 2); keep one"),
        ("chunk: {}\nembed: {}\nchunk: {method: fixed}\n", "params.yaml:3: chunk is given twice (also at line 1)"),
        ("reshape:\n  variants:\n    - {name: a, keep: 2, keep: 3}\n", "reshape.variants[0].keep is given twice"),
        ("a: &x [1]\nb: *x\n", "params.yaml:1: YAML anchors and aliases (&x) are not allowed"),
        ("chunk: &c {window: 5}\n", "(&c) are not allowed"),
        ("base: {window: 5}\nchunk:\n  <<: *b\n", "params.yaml:3: YAML anchors and aliases (*b) are not allowed"),  # a merge key
        (ALIAS_BOMB, "params.yaml:1: YAML anchors and aliases (&a) are not allowed"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "params.yaml:1: nested more than 32 levels deep"),
        ("chunk: !!python/object:os.system {}\n", "not valid YAML"),
    ],
)
def test_yaml_hazards_are_one_line(text, needle, tmp_path):
    start = time.monotonic()
    assert needle in _error(text, tmp_path)
    assert time.monotonic() - start < 5


def test_an_oversized_params_file_is_refused_before_parsing(tmp_path):
    assert "bytes; a params file is a few KB" in _error("# pad\n" * 300_000, tmp_path)


def test_a_params_path_that_is_a_folder_is_one_line(tmp_path):
    (tmp_path / "params.yaml").mkdir()
    with pytest.raises(UserError, match=r"params file .*params\.yaml is not a file"):
        params.load(tmp_path / "params.yaml")


def test_the_repository_params_file_passes_the_strict_loader():
    strict = params.load_yaml(ROOT / "params.yaml")
    assert strict == yaml.safe_load((ROOT / "params.yaml").read_text())


@pytest.mark.parametrize(
    "path, needle",
    [
        ("corpus>out", "data.local.mine: 'corpus>out' has '>'"),
        ("docs\nrm -rf x", "has '\\n'"),
        ("docs\tx", "has '\\t'"),
        ("docs#x", "has '#'"),
        ("docs(1)", "has '('"),
        ("~/corpus", "write the full path instead of ~"),
        ("-rf", "starts with '-'"),
        ("caf\u00e9", "has '\u00e9'"),
        ("", "must be a path"),
    ],
)
def test_local_paths_reaching_the_shell_are_allow_listed(path, needle):
    with pytest.raises(UserError) as e:
        params.section("data", data={"data": {"local": {"mine": path}}})
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_ordinary_local_paths_pass():
    for path in ("docs/corpus", "../shared/my-corpus_v2.1", "/abs/path/squad+extra.json", "./x"):
        assert params.section("data", data={"data": {"local": {"mine": path}}}).local == {"mine": path}


@pytest.mark.parametrize(
    "section, raw, needle",
    [
        ("chunk", {"min_words": 600, "max_words": 500}, "chunk.min_words (600) is above chunk.max_words (500)"),
        ("chunk", {"min_words": 60, "max_tokens": 50}, "chunk.min_words (60) is above chunk.max_tokens (50 words)"),
        ("chunk", {"boundary_overlap": 500, "max_words": 500, "min_words": 0}, "chunk.boundary_overlap (500) must be below chunk.max_words (500)"),
        ("chunk", {"boundary_overlap": 64, "max_tokens": 64, "counter": "embedder", "min_words": 0}, "must be below chunk.max_tokens (64)"),
        ("chunk", {"overlap": -1}, "chunk.overlap must be in [0, 4], got -1"),
        ("chunk", {"chunk_size": 100, "chunk_overlap": 100}, "chunk.chunk_overlap must be in [0, 99], got 100"),
        ("retrieve", {"chunk": {"min_words": 900}}, "retrieve.chunk.min_words (900) is above retrieve.chunk.max_words (500)"),
        ("embed", {"device": "gpu"}, "embed.device: unknown device 'gpu'; allowed: auto, cpu, cuda, cuda:N"),
        ("embed", {"device": "cuda:x"}, "embed.device: unknown device 'cuda:x'"),
        ("embed", {"device": "CPU"}, "embed.device: unknown device 'CPU'"),
        ("compute", {"engine": "dask", "address": "tcp://10.0.0.5:99999", "partition_rows": 8}, "compute.address: port 99999 is not a TCP port"),
        ("compute", {"engine": "dask", "address": "tcp://10.0.0.5:0", "partition_rows": 8}, "compute.address: port 0 is not a TCP port"),
    ],
)
def test_sizes_in_relation_and_devices(section, raw, needle):
    with pytest.raises(UserError) as e:
        params.section(section, data={section: raw})
    assert needle in str(e.value)


def test_an_adaptive_relation_refused_under_another_method_says_why_it_is_checked():
    with pytest.raises(UserError) as e:
        params.section("chunk", data={"chunk": {"method": "recursive", "max_tokens": 12}})
    msg = str(e.value)
    assert msg.startswith("chunk.min_words (60) is above chunk.max_tokens (12 words)") and "\n" not in msg
    assert "checked under chunk.method recursive too because chunk_docs, qa and retrieve can run adaptive" in msg
    with pytest.raises(UserError) as e:
        params.section("chunk", data={"chunk": {"method": "adaptive", "max_tokens": 12}})
    assert "checked under" not in str(e.value), "under adaptive the keys are the method's own"


def test_related_sizes_that_agree_pass():
    p = params.section("chunk", data={"chunk": {"min_words": 500, "max_words": 500, "boundary_overlap": 30}})
    assert p.min_words == p.max_words == 500
    # chars / embedder counters without max_tokens: boundary_overlap is in tokens, max_words in words.
    assert params.section("chunk", data={"chunk": {"counter": "chars", "boundary_overlap": 900}}).boundary_overlap == 900


def test_a_named_gpu_that_is_not_there_is_refused_at_load(tmp_path):
    torch = pytest.importorskip("torch")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    p = tmp_path / "params.yaml"
    p.write_text(yaml.safe_dump({"embed": {"device": f"cuda:{count}"}}))
    with pytest.raises(UserError, match=rf"^embed\.device is cuda:{count} but torch sees"):
        params.load(p)
    # A remote Dask cluster encodes on its own workers: their GPUs are not checked here.
    p.write_text(yaml.safe_dump({"embed": {"device": f"cuda:{count}"}, "compute": {"engine": "dask", "address": "tcp://10.0.0.5:8786", "partition_rows": 8}}))
    assert params.load(p)["embed"].device == f"cuda:{count}"


def _check(path, timeout: int | None = None) -> subprocess.CompletedProcess:
    """scripts/check_params.py on ``path``; a run that must end within ``timeout`` seconds runs
    in a process of its own (a zygote's fork cannot be timed out)."""
    cmd = [sys.executable, str(ROOT / "scripts" / "check_params.py"), str(path)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout) if timeout else run_python(cmd, ROOT)


def test_the_pre_check_passes_the_repository_params_file():
    r = _check(ROOT / "params.yaml")
    assert r.returncode == 0, r.stderr


def test_the_pre_check_stops_an_alias_bomb_in_one_line(tmp_path):
    p = tmp_path / "params.yaml"
    p.write_text(ALIAS_BOMB)
    r = _check(p, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"error: {p}:1: YAML anchors and aliases (&a) are not allowed in a params file (aliases can expand into billions of values); write the value out"]


def test_make_repro_runs_the_pre_check_before_dvc():
    recipe = subprocess.run(["make", "-n", "repro"], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    check = next(i for i, line in enumerate(recipe) if "scripts/check_params.py params.yaml" in line)
    dvc = next(i for i, line in enumerate(recipe) if "dvc repro" in line)
    assert check < dvc


PAPERS = ("structural", "semchunk", "clinical")  # the papers whose own file holds samples and settings


def _check_paper(path) -> None:
    """scripts/check_params.py's paper check, in this process (the command line is tested once, below)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_params", ROOT / "scripts" / "check_params.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.check_paper(path, ROOT / "params.yaml")


def test_the_pre_check_passes_every_paper_file():
    for paper in PAPERS:
        _check_paper(ROOT / "experiments" / paper / "params.yaml")


@pytest.mark.parametrize(
    "old, new, line",
    [
        # A stage checks only the setting it runs: this one stopped the pipeline at its chunk stage, after the others ran.
        ("stddev: {method: stddev}", "stddev: {method: stdev}", "settings.stddev.method: unknown value 'stdev'"),
        ("recursive: {method: recursive}", "recursive: {method: recursive, window: 0}", "settings.recursive.window must be in"),
        # The sample stage names params.yaml's data.datasets, not the paper file's key.
        ("dataset: scifact", "dataset: scifakt", "sample.dataset: unknown dataset 'scifakt'"),
    ],
)
def test_the_pre_check_names_the_paper_file_and_key_before_any_stage(tmp_path, old, new, line):
    text = (ROOT / "experiments/structural/params.yaml").read_text()
    assert old in text
    p = tmp_path / "params.yaml"
    p.write_text(text.replace(old, new, 1))
    with pytest.raises(UserError) as e:
        _check_paper(p)
    assert str(e.value).startswith(f"{p}: ") and line in str(e.value), str(e.value)


def test_the_pre_check_names_an_unknown_peer_in_one_line(tmp_path):
    text = (ROOT / "experiments/semchunk/params.yaml").read_text()
    p = tmp_path / "params.yaml"
    p.write_text(text.replace("peer: semchunk,", "peer: semchunks,", 1))
    r = _check(p)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"error: {p}: settings.semchunk.peer: unknown peer chunker 'semchunks'; allowed: semchunk, langchain, chonkie-recursive, chonkie-semantic"
    ]


def test_make_paper_runs_the_pre_check_of_its_file_before_dvc():
    for paper in PAPERS:
        recipe = subprocess.run(["make", "-n", f"paper-{paper}"], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
        check = next(i for i, line in enumerate(recipe) if f"scripts/check_params.py experiments/{paper}/params.yaml" in line)
        dvc = next(i for i, line in enumerate(recipe) if "dvc repro" in line)
        assert check < dvc, paper
