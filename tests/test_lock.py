"""dvc.yaml declares exactly what each stage reads, and dvc.lock hashes only what git tracks.

A dependency that is read but not declared lets an edit go unnoticed ("up to date" after
the code changed); one that is declared but never read re-runs expensive stages for
nothing. Both directions are derived from the code by scripts/stage_deps.py (which also
rewrites dvc.yaml's module deps: ``python scripts/stage_deps.py --write``); inputs named
in a stage's ``cmd`` must be among its ``deps`` too.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import subprocess

import pytest
import yaml

from biochunk import params as P
from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("stage_deps", ROOT / "scripts" / "stage_deps.py")
sd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sd)
DVC = sd.DVC
_stage = sd.stage_spec
_script = sd.script_of


STAGES = sorted(DVC)


@pytest.mark.parametrize("name", STAGES)
def test_every_imported_module_is_a_dependency_and_back(name):
    st = _stage(name)
    deps = [d for d in st.get("deps", []) if isinstance(d, str)]
    closure = sd.stage_closure(name)
    missing = sorted(f.relative_to(ROOT).as_posix() for f in closure if not sd.covered(f, deps))
    assert not missing, f"{name}: imports {missing} but dvc.yaml does not list them under deps"
    for d in deps:
        if not d.startswith("biochunk/"):
            continue
        target = ROOT / d
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        unread = [f.relative_to(ROOT).as_posix() for f in files if f not in closure and not sd.trivial(f)]
        if target.is_dir() and d != "biochunk/datasets/embedded":
            assert not unread, f"{name}: dep {d} covers {unread}, which the stage never imports: list the files it does"
        elif not target.is_dir():
            assert not unread, f"{name}: dep {d} is never imported by the stage"


@pytest.mark.parametrize("name", STAGES)
def test_params_listed_are_exactly_the_params_read(name):
    st = _stage(name)

    # A section and the list of all its keys are the same declaration: compare key sets.
    def expand(sec: str, keys) -> set[str]:
        return {f"{sec}.{f.name}" for f in dataclasses.fields(P.SECTIONS[sec])} if keys is None else {f"{sec}.{k}" for k in keys}

    # A paper pipeline names its files ({params.yaml: [...]}, {experiments/<paper>/params.yaml: [...]}):
    # the one the command passes as --params (default params.yaml) has params.yaml's schema; a
    # paper's own file (--paper) is read through biochunk.experiments.
    # A --params file that leaves keys out (experiments/biomedrag/rungs/*.yaml) has them read from
    # params.yaml (DEFAULTS): its keys and params.yaml's listed keys together, never one key in both.
    words = st["cmd"].split()
    schema_file = words[words.index("--params") + 1] if "--params" in words else "params.yaml"
    files = [schema_file] if schema_file == "params.yaml" else [schema_file, "params.yaml"]
    per_file = [
        [e2 for e in st.get("params", []) for e2 in ([e] if isinstance(e, str) and f == "params.yaml" else [] if isinstance(e, str) else e.get(f, []))]
        for f in files
    ]  # fmt: skip
    keys = [
        set().union(*(expand(e.split(".", 1)[0], [e.split(".", 1)[1]]) if "." in e else expand(e, None) for e in f))
        for f in per_file
    ]  # fmt: skip
    if len(keys) == 2:
        both = keys[0] & keys[1]
        assert not both, f"{name}: {sorted(both)} listed under {schema_file} and params.yaml; the stage reads one of them"
    listed = set().union(*keys)
    expected = set().union(*(expand(sec, keys) for sec, keys in sd.section_reads(_script(st["cmd"]), st["cmd"]).items()))
    assert listed == expected, f"{name}: dvc.yaml params {sorted(listed)}; the stage reads {sorted(expected)}"


@pytest.mark.parametrize("pipeline", sd.PIPELINES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_each_pipeline_reads_as_a_map_with_its_generated_code_deps_last(pipeline):
    # What `scripts/stage_deps.py --write` writes: every stage's command, params and outputs
    # first, then its deps, data first and the code after CODE_MARKER.
    assert sd.laid_out(pipeline) == pipeline.read_text(), f"run python scripts/stage_deps.py --write ({pipeline.name})"
    for name, spec in yaml.safe_load(pipeline.read_text())["stages"].items():
        body = spec.get("do", spec)
        assert list(body)[-1] == "deps", f"{name}: deps is not the stage's last key"
        deps = body["deps"]
        code = [i for i, d in enumerate(deps) if sd._is_code(d)]
        assert code == list(range(len(deps) - len(code), len(deps))), f"{name}: data deps after the code"


def test_a_section_read_under_a_flag_counts_only_for_commands_that_pass_it(tmp_path):
    # compare reads convert.* only where it converts a corpus itself (--corpus); its DVC stage
    # (--data) must not declare it, or a change would re-run compare for nothing.
    compare = ROOT / "stages" / "compare.py"
    assert sd.section_flags(compare) == {"convert": "--corpus", "train_reranker": "not --reranker"}
    assert {"convert", "train_reranker"} <= sd.section_reads(compare, "python stages/compare.py --corpus docs/example-corpus").keys()
    assert "convert" not in sd.section_reads(compare, "python stages/compare.py --data data/local/mine")
    # With --reranker it loads what compare_reranker trained: a reranker param re-runs that stage, not compare.
    dvc = "python stages/compare.py --data data/local/mine --reranker data/compare-reranker/mine"
    assert not {"convert", "train_reranker"} & sd.section_reads(compare, dvc).keys()
    assert {"convert", "train_reranker"} <= sd.section_reads(compare).keys()  # no command: every read the script can make
    script = tmp_path / "s.py"
    script.write_text('p = params.section("convert", "params.yaml")\nq = p.skip_malformed\n')
    assert sd.section_flags(script) == {} and sd.section_reads(script, "python s.py") == {"convert": {"skip_malformed"}}


@pytest.mark.parametrize("name", STAGES)
def test_inputs_named_in_the_command_are_dependencies(name):
    st = _stage(name)
    deps = set(d for d in st.get("deps", []) if isinstance(d, str))
    outs = {next(iter(o)) if isinstance(o, dict) else o for key in ("outs", "metrics", "plots") for o in st.get(key, [])}
    words = st["cmd"].split()
    for flag, value in zip(words, words[1:]):
        if not flag.startswith("--") or "/" not in value or flag == "--cache":
            continue  # a cache is read and written by the stage and never hashed (dvc.lock stays small)
        if flag in ("--params", "--paper", "--paper-params", "--header-params"):
            continue  # params files: DVC tracks the keys the stage reads (its params:), not the file
        if value in outs or any(o.startswith(value.rstrip("/") + "/") for o in outs):
            continue  # an output folder, or the folder of declared output files
        assert value in deps, f"{name}: {flag} {value} is read but not listed under deps"
    if "chunking.build(" in _script(st["cmd"]).read_text() and "dataset=" in _script(st["cmd"]).read_text():
        for cfg in sd.HYBRID_CONFIGS:
            assert cfg in deps, f"{name}: the hybrid chunker reads {cfg}; list it under deps"


def _vars_files(name: str) -> dict[str, dict]:
    """The files whose values the stage's dvc.yaml interpolates (``${key.sub}``): its ``vars``
    files and the params.yaml beside it, which DVC reads as vars too; path from the root -> data."""
    pipeline = ROOT / (name.split(":", 1)[0] if ":" in name else "dvc.yaml")
    names = ["params.yaml", *(v for v in yaml.safe_load(pipeline.read_text()).get("vars") or [] if isinstance(v, str))]
    files = [pipeline.parent / n for n in names]
    return {f.relative_to(ROOT).as_posix(): yaml.safe_load(f.read_text()) or {} for f in files if f.is_file()}


def _leaves(data, prefix: str) -> set[str]:
    return set().union(*(_leaves(v, f"{prefix}.{k}") for k, v in data.items())) if isinstance(data, dict) and data else {prefix}


@pytest.mark.parametrize("name", STAGES)
def test_values_interpolated_into_the_command_are_declared_params(name):
    """A vars file's value in the command (``--model ${judge.model}``) decides what the stage
    computes, but dvc.lock records it only when the stage lists it under params: so it must be
    listed. A stage that reads such a file only through its command lists nothing beyond what
    the command interpolates (a file it is also given, or that its script finds, is exempt)."""
    st = _stage(name)
    refs = set(re.findall(r"\$\{([A-Za-z_][\w.-]*)\}", st["cmd"]))
    for path, data in _vars_files(name).items():
        used = {r for r in refs if r.split(".", 1)[0] in data}
        listed = [k for e in st.get("params", []) if isinstance(e, dict) for k in e.get(path, [])]
        for r in sorted(used):
            assert any(r == k or r.startswith(f"{k}.") for k in listed), f"{name}: the command interpolates ${{{r}}} of {path}; list it under params"
        if used and path not in st["cmd"]:
            declared = set().union(*(_leaves(_at(data, k), k) for k in listed)) if listed else set()
            assert declared <= used, f"{name}: params {sorted(declared - used)} of {path} never reach the command"


def _at(data: dict, dotted: str):
    for part in dotted.split("."):
        data = data[part]
    return data


@pytest.fixture(scope="module")
def lock() -> dict:
    """Every pipeline's lock: the default one and each paper's (experiments/<paper>/dvc.lock)."""
    locks = [ROOT / "dvc.lock", *sorted(ROOT.glob("experiments/*/dvc.lock"))]
    return {f"{p.parent.name}:{k}": v for p in locks for k, v in yaml.safe_load(p.read_text())["stages"].items()}


def test_lock_directory_deps_hold_exactly_the_files_git_tracks(lock):
    # The lock records a directory dep's file count; bytecode or tool caches would inflate it,
    # and a clean clone (no bytecode yet) would then disagree with the committed lock.
    for stage, entry in lock.items():
        for dep in entry.get("deps", []):
            if "nfiles" not in dep or not dep["path"].startswith(("biochunk/", "configs/", "stages/")):
                continue
            tracked = subprocess.run(
                ["git", "ls-files", dep["path"]], cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout.split()
            assert dep["nfiles"] == len(tracked), (
                f"{stage}: dvc.lock hashes {dep['nfiles']} files under {dep['path']}; git tracks {len(tracked)}"
            )


def test_params_yaml_sets_every_key():
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    for name, cls in P.SECTIONS.items():
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in (data.get(name) or {})]
        assert not missing, f"params.yaml: section {name} lacks {missing}; every key is set there, so defaults never decide a run"


def test_dvcignore_keeps_bytecode_out_of_the_hashes():
    patterns = (ROOT / ".dvcignore").read_text().split()
    assert "__pycache__/" in patterns and "*.pyc" in patterns


def test_every_lock_entry_hashes_exactly_the_deps_dvc_yaml_declares(lock):
    # DVC ignores a lock entry's hash for a dep that dvc.yaml no longer declares and does not
    # re-run the stage for it: after a dep is dropped (stage_deps.py --write), outputs computed
    # under the old dep list stay in the lock until `dvc repro -f` of those stages. A clean clone
    # then writes other bytes (2026-12-02: embed kept vectors made before the float pins changed).
    from dvc.repo import Repo

    declared = {}
    with Repo(str(ROOT)) as repo:
        for stage in repo.index.stages:
            if getattr(stage, "name", None):
                pipeline = stage.path_in_repo.rsplit("/", 2)[-2] if "/" in stage.path_in_repo else ROOT.name
                declared[f"{pipeline}:{stage.name}"] = {d.def_path for d in stage.deps}
    for name, entry in lock.items():
        if name not in declared:
            continue  # a stage dvc.yaml no longer has: test_paper_* check their own pipelines
        extra = {d["path"] for d in entry.get("deps", [])} - declared[name]
        assert not extra, f"{name}: dvc.lock hashes {sorted(extra)}, which dvc.yaml no longer declares; `dvc repro -f` it"


def test_dvc_reads_the_pipelines_with_the_c_parser_and_the_same_values():
    # Every dvc status / exp run / metrics diff parses all dvc.yaml and dvc.lock files, the
    # paper pipelines' 1.4 MB of locks included: about 18 s of a 30 s `dvc status` on 2 cores with
    # ruamel.yaml's pure-Python parser. Its C parser comes only with ruamel.yaml.clib
    # (requirements.txt); benchmarks/dvc_speed.py has the figures.
    import ruamel.yaml.main as ruamel_main
    from dvc.utils.serialize._yaml import parse_yaml

    c_parser = ruamel_main.CParser
    assert c_parser is not None, "ruamel.yaml.clib is missing: pip install -c constraints.txt -r requirements.txt"
    for f in (ROOT / "dvc.lock", ROOT / "dvc.yaml", ROOT / "experiments" / "bioasq" / "dvc.lock"):
        text = f.read_text()
        fast = parse_yaml(text, str(f))
        ruamel_main.CParser = None
        try:
            pure = parse_yaml(text, str(f))
        finally:
            ruamel_main.CParser = c_parser
        # repr, not ==: 1 == 1.0 == True, and a type is a value too.
        assert repr(fast) == repr(pure), f"{f.name}: the C and pure-Python parsers read different values"
