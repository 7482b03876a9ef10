import dataclasses
import subprocess
import sys

import pytest
import yaml

from biochunk import params
from biochunk.errors import UserError
from tests.conftest import ROOT
from tests.forked import run_python


def test_repository_params_are_valid():
    data = params.load_yaml(ROOT / "params.yaml")
    for name in params.SECTIONS:
        params.section(name, data=data)


@pytest.mark.parametrize(
    "section, raw, needle",
    [
        ("chunk", {"method": "nope"}, "chunk.method: unknown value 'nope'; allowed: adaptive, "),
        ("chunk", {"threshold": 1.3}, "chunk.threshold must be in [0.0, 1.0], got 1.3"),
        ("chunk", {"threshold": "high"}, "chunk.threshold must be a number"),
        ("chunk", {"window": 5, "overlap": 5}, "chunk.overlap must be in [0, 4], got 5"),
        ("chunk", {"treshold": 0.5}, "chunk.treshold: unknown key; allowed keys:"),
        ("rank", {"top_k": 0}, "rank.top_k must be in [1, 1000], got 0"),
        ("generate", {"quantize": "int8"}, "generate.quantize: unknown value 'int8'"),
        ("generate", {"train_steps": True}, "generate.train_steps must be an integer"),
        ("reshape", {"rank": "bm25"}, "reshape.rank: unknown value 'bm25'; allowed: cosine, crossencoder, none"),
        ("reshape", {"variants": [{"keep": 4}]}, "reshape.variants[0].name must be a short name"),
        ("reshape", {"variants": [{"name": "a", "kep": 4}]}, "reshape.variants[0].kep: not a variant key"),
        ("reshape", {"variants": [{"name": "a", "keep": 0}]}, "reshape.variants[0].keep must be in [1"),
        ("reshape", {"variants": [{"name": "a"}, {"name": "a", "keep": 2}]}, "reshape.variants names a more than once"),
        ("qa", {"question_splits": "11B1"}, "qa.question_splits must be a list, got '11B1'"),
        ("qa", {"question_splits": ["11B1", "11B1"]}, "qa.question_splits lists a split more than once"),
        ("qa", {"example_split": "7B1", "question_splits": ["7B1"]}, "qa.question_splits: 7B1 is qa.example_split"),
    ],
)
def test_bad_params_name_the_key(section, raw, needle):
    with pytest.raises(UserError) as e:
        params.section(section, data={section: raw})
    assert needle in str(e.value)


def test_nullable_and_defaults():
    p = params.section("chunk", data={"chunk": {"max_tokens": None}})
    assert p.max_tokens is None and p.method == "fixed"
    assert params.section("generate", data={}).n_examples == 1


def _run_stage(tmp_path, script, *args, params_text):
    pfile = tmp_path / "params.yaml"
    pfile.write_text(params_text)
    return run_python([sys.executable, str(ROOT / "stages" / script), *args, "--params", str(pfile)], tmp_path)


def test_stage_reports_bad_param_in_one_line(tmp_path):
    r = _run_stage(tmp_path, "chunk.py", "--dataset", "embedded", "--train", "x.parquet", "--out", "out", params_text=yaml.safe_dump({"chunk": {"threshold": 2.0}}))
    assert r.returncode == 2
    assert r.stderr.strip() == "error: chunk.threshold must be in [0.0, 1.0], got 2.0"


def test_stage_reports_missing_input_in_one_line(tmp_path):
    r = _run_stage(tmp_path, "chunk.py", "--dataset", "embedded", "--train", "missing/train.parquet", "--out", "out", params_text="chunk: {}\n")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("error: input file not found: missing/train.parquet") and "Traceback" not in r.stderr


def test_unknown_dataset_is_named(tmp_path):
    r = _run_stage(tmp_path, "download.py", "--dataset", "pubmedqa", "--out", "raw", params_text="download: {}\n")
    assert r.returncode == 2 and "data.datasets: unknown dataset 'pubmedqa'" in r.stderr


@pytest.mark.parametrize(
    "section, raw, needle",
    [
        ("chunk", {"threshold": float("nan")}, "chunk.threshold must be a finite number, got nan"),
        ("chunk", {"breakpoint_amount": float("inf")}, "chunk.breakpoint_amount must be a finite number, got inf"),
        ("train_scorer", {"lr": float("nan")}, "train_scorer.lr must be a finite number"),
        ("train_reranker", {"head_lr": float("-inf")}, "train_reranker.head_lr must be a finite number, got -inf"),
        ("rank", {"top_k": float("inf")}, "rank.top_k must be a finite integer, got inf"),
        ("retrieve", {"chunk": {"alpha": float("nan")}}, "retrieve.chunk.alpha must be a finite number"),
        ("data", {"datasets": ["embedded;rm -rf ~"], "triples": []}, "data.datasets[0]: dataset name 'embedded;rm -rf ~' may use only"),
        ("embed", {"model": " "}, "embed.model must name a model"),
    ],
)
def test_nan_inf_and_unsafe_names_are_refused(section, raw, needle):
    with pytest.raises(UserError) as e:
        params.section(section, data={section: raw})
    assert needle in str(e.value)


def test_load_checks_every_section_and_the_keys_dvc_yaml_lists(tmp_path):
    (tmp_path / "dvc.yaml").write_text((ROOT / "dvc.yaml").read_text())
    full = yaml.safe_load((ROOT / "params.yaml").read_text())
    pfile = tmp_path / "params.yaml"

    def error(mutate) -> str:
        data = yaml.safe_load(yaml.safe_dump(full))
        mutate(data)
        pfile.write_text(yaml.safe_dump(data))
        with pytest.raises(UserError) as e:
            params.section("download", pfile)  # a stage that reads none of the broken keys
        return str(e.value)

    assert error(lambda d: d["rank"].pop("top_k")).endswith("rank.top_k is missing; dvc.yaml lists it for stage rank, add it (e.g. `top_k: 2` under `rank:`)")
    assert "evaluate.bootstap: unknown key" in error(lambda d: d["evaluate"].update(bootstap=10))
    assert "chunks: unknown section" in error(lambda d: d.update(chunks={}))
    assert "data.triples: 'embedded' must also be listed in data.datasets" in error(lambda d: d["data"].update(datasets=[]))
    # Without a dvc.yaml beside it, absent keys take their defaults.
    (tmp_path / "dvc.yaml").unlink()
    pfile.write_text("chunk: {}\n")
    assert params.section("rank", pfile).top_k == 2


def test_a_key_that_moved_section_says_where_it_went(tmp_path):
    pfile = tmp_path / "params.yaml"
    pfile.write_text(yaml.safe_dump({"chunk": {"ranking": "mixed"}}))
    with pytest.raises(UserError, match=r"chunk.ranking: moved to rank.selection; rename it in params.yaml"):
        params.section("chunk", pfile)


# -- params.yaml is the one place a default is written (issue 26) -----------------------------


def test_no_param_has_a_default_in_code():
    # A default in a dataclass is a second copy of params.yaml's value; copies drift (retrieve's
    # bm25_methods, dense_methods and chunk once differed between the two).
    for name, cls in params.SECTIONS.items():
        coded = [f.name for f in dataclasses.fields(cls) if (f.default, f.default_factory) != (dataclasses.MISSING,) * 2]
        assert not coded, f"{name}.{coded} has a default in biochunk/params.py; write it in params.yaml only"


def test_params_yaml_sets_exactly_the_keys_the_dataclasses_define():
    data = params.load_yaml(ROOT / "params.yaml")
    assert params.DEFAULTS == ROOT / "params.yaml"
    assert set(data) == set(params.SECTIONS), "params.yaml has a section for every dataclass and no other"
    for name, cls in params.SECTIONS.items():
        fields = {f.name for f in dataclasses.fields(cls)}
        assert not fields - set(data[name]), f"params.yaml: {name} lacks {sorted(fields - set(data[name]))}"
        extra = sorted(set(data[name]) - fields)
        assert not extra, f"params.yaml: {name}.{extra} is no field of {cls.__name__}"


def test_params_yaml_round_trips_and_is_every_default():
    data = params.load_yaml(ROOT / "params.yaml")
    loaded = params.load(ROOT / "params.yaml")
    for name, cls in params.SECTIONS.items():
        assert dataclasses.asdict(loaded[name]) == data[name], name
        # Without a params file (or with an empty section), the same values.
        assert loaded[name] == params.section(name, data={}) == params.parse(cls, {}, name) == params.defaults(name), name


def test_a_params_file_with_only_the_changed_keys_takes_the_rest_from_params_yaml(tmp_path):
    full = params.load(ROOT / "params.yaml")
    pfile = tmp_path / "params.yaml"  # no dvc.yaml beside it: keys may be left out
    pfile.write_text("chunk: {window: 7}\nretrieve: {depth: 500}\n")
    loaded = params.load(pfile)
    assert loaded["chunk"] == dataclasses.replace(full["chunk"], window=7)
    assert loaded["retrieve"] == dataclasses.replace(full["retrieve"], depth=500)
    assert loaded["retrieve"].bm25_methods == full["retrieve"].bm25_methods and loaded["retrieve"].chunk == full["retrieve"].chunk
    assert all(loaded[n] == full[n] for n in params.SECTIONS if n not in ("chunk", "retrieve"))
    # A key's value is replaced whole, a mapping too (retrieve.chunk is not merged key by key).
    assert params.section("retrieve", data={"retrieve": {"chunk": {"window": 64}}}).chunk == {"window": 64}


def test_defaults_take_overrides_unchecked_and_share_nothing():
    data = params.load_yaml(ROOT / "params.yaml")
    p = params.defaults("chunk", method="hybrid", min_words=9, max_words=5)  # a params file could not hold this
    assert (p.method, p.min_words, p.max_words, p.window) == ("hybrid", 9, 5, data["chunk"]["window"])
    with pytest.raises(TypeError):
        params.defaults("chunk", windw=3)
    params.defaults("data").datasets.append("changed")
    params.defaults("retrieve").chunk["window"] = 1
    assert params.defaults("data").datasets == data["data"]["datasets"]
    assert params.defaults("retrieve").chunk == data["retrieve"]["chunk"]


def test_a_key_the_default_params_lack_is_named(tmp_path, monkeypatch):
    data = params.load_yaml(ROOT / "params.yaml")
    del data["rank"]["top_k"]
    defaults = tmp_path / "defaults.yaml"
    defaults.write_text(yaml.safe_dump(data))
    monkeypatch.setattr(params, "DEFAULTS", defaults)
    monkeypatch.chdir(tmp_path)  # not a checkout: the package's params.yaml (DEFAULTS) is the defaults
    with pytest.raises(UserError, match=r"^rank.top_k is missing and .*defaults.yaml does not set it either; add it there$"):
        params.section("rank", data={})
    assert params.section("rank", data={"rank": {"top_k": 3}}).top_k == 3


def test_a_partial_file_takes_its_missing_keys_from_the_checkout_it_runs_in(tmp_path, monkeypatch):
    # A queued or --temp experiment runs in a copy whose params.yaml holds its -S values, while the
    # editable install's DEFAULTS names the workspace's file: the copy's values must win, or DVC
    # records one header and the stage cuts with another.
    data = params.load_yaml(ROOT / "params.yaml")
    assert data["chunk"]["header"] != "none"
    data["chunk"]["header"] = "none"
    (tmp_path / "biochunk").mkdir()
    (tmp_path / "biochunk" / "params.py").write_text("")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    partial = tmp_path / "run.yaml"
    partial.write_text("qa:\n  max_questions: 40\n")
    monkeypatch.chdir(tmp_path)
    assert params.defaults_path() == tmp_path / "params.yaml"
    assert params.section("chunk", partial).header == "none"
    assert params.section("qa", partial).max_questions == 40
    monkeypatch.chdir(ROOT)  # the same file read from the workspace: the workspace's value, not a cached one
    assert params.section("chunk", partial).header == params.load_yaml(ROOT / "params.yaml")["chunk"]["header"] != "none"


def test_a_change_the_method_does_not_read_is_named_with_the_methods_that_read_it():
    cp = params.defaults("chunk", method="fixed", threshold=0.5, window=7)
    lines = cp.unread_changes({"chunk.threshold": 0.8, "chunk.window": 5, "chunk.method": "fixed"})
    assert len(lines) == 1, lines  # window is fixed's own: its change is no news
    assert lines[0].startswith("chunk.threshold changed since this stage last ran (0.8 -> 0.5)")
    assert "chunk.method fixed does not read it" in lines[0] and "read by: adaptive, proposition" in lines[0]
    assert cp.unread_changes({}) == [], "nothing recorded (a first run): nothing to say"
    # The generator is adaptive's only under generated headers.
    before = {"chunk.generator": "smollm2-360m"}
    assert params.defaults("chunk", method="adaptive", header="generator").unread_changes(before) == []
    (line,) = params.defaults("chunk", method="adaptive", header="phrase").unread_changes(before)
    assert "read by: proposition, adaptive with chunk.header generator" in line


def test_a_stage_running_a_method_list_names_the_list_and_what_replaces_a_key():
    # compare: chunk_docs.methods in place of chunk.method, retrieve.chunk's keys in place of chunk's.
    cp = params.defaults("chunk", method="fixed", threshold=0.5, window=7, n_clusters=4, overlap=1)
    before = {"chunk.threshold": 0.8, "chunk.window": 5, "chunk.n_clusters": 3, "chunk.method": "hybrid", "chunk.overlap": 0}
    lines = cp.unread_changes(before, ["fixed", "adaptive"], "chunk_docs.methods", {"window": 128}, "retrieve.chunk")
    assert [line.split(" changed")[0] for line in lines] == ["chunk.method", "chunk.n_clusters", "chunk.window"], lines
    assert "but chunk_docs.methods (fixed, adaptive) replaces it in this stage: that change alone" in lines[0]
    assert "but no method of chunk_docs.methods (fixed, adaptive) reads it" in lines[1] and "(read by: cluster)" in lines[1]
    assert lines[2].endswith("but retrieve.chunk replaces it in this stage: that change alone leaves the chunks as they were")
    # threshold (adaptive's) and overlap (fixed's, not replaced) were read above: no line; a list
    # with cluster reads n_clusters.
    assert not any("n_clusters" in line for line in cp.unread_changes(before, ["cluster"], "chunk_docs.methods"))
    # What the methods read follows the replaced values: a replaced header generator reads the generator.
    gen = {"chunk.generator": "smollm2-360m"}
    assert cp.unread_changes(gen, ["adaptive"], "chunk_docs.methods", {"header": "generator"}, "retrieve.chunk") == []
    (line,) = cp.unread_changes(gen, ["adaptive"], "chunk_docs.methods", {"header": "phrase"}, "retrieve.chunk")
    assert line.startswith("chunk.generator changed") and "no method of chunk_docs.methods (adaptive) reads it" in line


def test_recorded_reads_the_running_stage_from_its_own_lock(tmp_path, monkeypatch):
    (tmp_path / "experiments" / "p").mkdir(parents=True)
    entry = {
        "cmd": "python stages/chunk.py", "outs": [{"path": "data/chunks/x", "md5": "0.dir"}],
        "params": {"params.yaml": {"chunk": {"window": 5, "threshold": 0.8}, "embed.model": "minilm"},
                   "experiments/p/rung.yaml": {"chunk.method": "fixed"}},
    }  # fmt: skip
    (tmp_path / "experiments/p/dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {"chunk@x": entry}}))
    monkeypatch.setenv("DVC_ROOT", str(tmp_path))
    monkeypatch.setenv("DVC_STAGE", "experiments/p/dvc.yaml:chunk@x")
    want = {"chunk.window": 5, "chunk.threshold": 0.8, "embed.model": "minilm", "chunk.method": "fixed"}
    assert params.recorded("data/chunks/x") == want
    assert params.recorded("data/chunks/y") == {}, "an entry that did not write this output is another stage's"
    monkeypatch.setenv("DVC_STAGE", "chunk@x")  # the root dvc.yaml's (there is no root lock here)
    assert params.recorded("data/chunks/x") == {}
    monkeypatch.delenv("DVC_STAGE")
    assert params.recorded("data/chunks/x") == {}, "outside DVC there is no last run"


def test_importing_params_leaves_torch_unloaded():
    # QAParams.validate imports retrieval.contexts, which loads torch through the cross-encoder,
    # where it checks qa.contexts: at the top of params.py it cost every stage and tool a second
    # of start-up before its first params error (`import biochunk.params`: 2.0 s -> 0.7 s).
    code = "import sys; from biochunk import params; params.section('chunk', data={}); print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    # Validating the qa section still checks the contexts against the one list.
    with pytest.raises(UserError, match="qa.contexts: unknown value 'gold-ish'"):
        params.section("qa", data={"qa": {"contexts": ["gold-ish"]}})
