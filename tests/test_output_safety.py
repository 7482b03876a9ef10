"""Outputs never destroy what the run did not create; interrupts end in one line; kills leave
nothing behind that the next run does not remove (issue 25, items 1, 4 and 5).

- ``biochunk.io.atomic_path`` / ``check_output``: the paths refused before and after the work,
  the ``.biochunk-output`` marker, and the temporary siblings (only those are ever removed);
- ``scratch_dir``: pid-tagged scratch folders, leftovers of dead processes removed;
- ``write_json``: strict JSON (null, never NaN);
- ``cli.run`` and ``stages/compare.py`` as a user runs them: SIGTERM / SIGINT print one line
  and exit 143 / 130 with nothing left in a private ``$TMPDIR``; after ``kill -9`` the next
  run leaves ``$TMPDIR`` clean.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from biochunk import cli
from biochunk.errors import UserError
from biochunk.io import FAULT_ENV, MARKER, REPO_ROOT, atomic_path, check_output, new_scratch_dir, scratch_dir, write_json
from tests.conftest import ROOT


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _write_dir(target: Path, owner: str | None = None, files: tuple[str, ...] = ("new",)) -> None:
    with atomic_path(target, owner) as tmp:
        tmp.mkdir()
        for f in files:
            (tmp / f).write_text(f)


# ---------------------------------------------------------------- paths refused


@pytest.mark.parametrize("path", ["", ".", "..", "./"])
def test_the_working_directory_and_above_are_refused(path, tmp_path, monkeypatch):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    (work / "sentinel").write_text("keep")
    monkeypatch.chdir(work)
    with pytest.raises(UserError, match="working directory"):
        with atomic_path(path) as tmp:
            tmp.mkdir()
    assert (work / "sentinel").read_text() == "keep" and sorted(p.name for p in work.parent.iterdir()) == ["b"]


def test_the_repository_and_git_folders_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path, why in ((REPO_ROOT, "is the repository"), (REPO_ROOT.parent, "is the repository"), (REPO_ROOT / ".git" / "x", ".git")):
        with pytest.raises(UserError, match=why):
            check_output(path, "--out")
    repo = tmp_path / "other-repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "file").write_text("x")
    with pytest.raises(UserError, match="git repository"):
        _write_dir(repo)
    assert (repo / "file").exists()


def test_a_path_under_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(UserError, match="is a file, not a folder"):
        with atomic_path(tmp_path / "f" / "out.json") as tmp:
            tmp.write_text("{}")
    assert (tmp_path / "f").read_text() == "x"


def test_a_file_is_never_written_over_a_folder_nor_a_folder_over_a_file(tmp_path):
    folder, file = tmp_path / "folder", tmp_path / "file"
    folder.mkdir()
    (folder / "keep").write_text("x")
    file.write_text("y")
    with pytest.raises(UserError, match="existing folder; name a file"):
        write_json({"a": 1}, folder)
    with pytest.raises(UserError, match="existing file; name a folder"):
        _write_dir(file)
    assert (folder / "keep").read_text() == "x" and file.read_text() == "y"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]  # no temporary sibling left


def test_an_owned_output_replaces_only_a_folder_it_wrote(tmp_path):
    target = tmp_path / "out"
    _write_dir(target, owner="compare", files=("one",))
    assert (target / MARKER).read_text() == "compare\n"
    _write_dir(target, owner="compare", files=("two",))  # the previous run's folder: replaced
    assert sorted(p.name for p in target.iterdir()) == [MARKER, "two"]
    with pytest.raises(UserError, match="other did not write"):
        _write_dir(target, owner="other")
    user = tmp_path / "docs"
    user.mkdir()
    (user / "notes.md").write_text("mine")
    with pytest.raises(UserError, match=f"compare did not write \\(no {MARKER}"):
        _write_dir(user, owner="compare")
    assert (user / "notes.md").read_text() == "mine"
    (tmp_path / "empty").mkdir()
    _write_dir(tmp_path / "empty", owner="compare")  # an empty folder holds nothing to lose
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "empty", "out"]


def test_an_unowned_output_spares_marked_folders_and_folders_under_git(tmp_path):
    target = tmp_path / "out"
    _write_dir(target, owner="compare")
    with pytest.raises(UserError, match="compare wrote it"):
        _write_dir(target)
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "guide.md").write_text("tracked")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "docs/guide.md"], cwd=repo, check=True)
    with pytest.raises(UserError, match="files under git"):
        _write_dir(repo / "docs")
    assert (repo / "docs" / "guide.md").read_text() == "tracked"
    # A stage's own output folder (untracked, unmarked) is replaced as before.
    (repo / "data").mkdir()
    (repo / "data" / "old.parquet").write_text("x")
    _write_dir(repo / "data")
    assert sorted(p.name for p in (repo / "data").iterdir()) == ["new"]


def test_a_symlinked_output_replaces_the_link_never_its_target(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("x")
    (tmp_path / "link").symlink_to(target)
    _write_dir(tmp_path / "link")
    assert (target / "keep").read_text() == "x"
    assert not (tmp_path / "link").is_symlink() and sorted(p.name for p in (tmp_path / "link").iterdir()) == ["new"]


# ---------------------------------------------------------------- temporary siblings and scratch folders


def test_only_temporary_siblings_of_dead_runs_are_removed(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    stale = tmp_path / f".out.{dead}.abcdefgh.tmp"
    legacy = tmp_path / ".out.ijklmnop.tmp"  # before the pid tag
    live = tmp_path / f".out.{alive}.qrstuvwx.tmp"
    other = tmp_path / f".other.{dead}.abcdefgh.tmp"
    lookalike = tmp_path / ".out.not-ours.tmp"
    for p in (stale, legacy, live, other, lookalike):
        (p / "out").mkdir(parents=True)
    _write_dir(tmp_path / "out")
    assert not stale.exists() and not legacy.exists()
    assert live.exists() and other.exists() and lookalike.exists()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["new"]


def test_a_failed_write_leaves_the_old_output_and_no_temporary(tmp_path):
    target = tmp_path / "out"
    _write_dir(target, files=("old",))
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.mkdir()
            raise RuntimeError("crash")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (target / "old").exists()


def test_scratch_folders_are_pid_tagged_and_leftovers_of_dead_runs_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # tempfile caches the directory it chose
    dead, alive = _dead_pid(), os.getppid()
    for name in (f"bm25-{dead}-abcdefgh", f"compare-{dead}-abcdefgh", f"bm25-{alive}-abcdefgh", "bm25-notes", "clinical-bm25-1-abcdefgh"):
        (tmp_path / name).mkdir()
    with scratch_dir("bm25-") as folder:
        assert folder.parent == tmp_path and folder.name.startswith(f"bm25-{os.getpid()}-")
        (folder / "index").mkdir()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([f"compare-{dead}-abcdefgh", f"bm25-{alive}-abcdefgh", "bm25-notes", "clinical-bm25-1-abcdefgh"])
    with pytest.raises(RuntimeError):
        with scratch_dir("compare-"):
            raise RuntimeError("crash")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"bm25-{alive}-abcdefgh", "bm25-notes", "clinical-bm25-1-abcdefgh"])
    folder = new_scratch_dir("bm25-")
    assert folder.is_dir()
    folder.rmdir()


# ---------------------------------------------------------------- strict JSON


def test_write_json_writes_null_for_every_non_finite_float(tmp_path):
    obj = {
        "nan": math.nan,
        "inf": [math.inf, -math.inf, 1.5],
        "np": {"f32": np.float32("nan"), "f64": np.float64("inf"), "ok": np.float32(0.25), "i": np.int64(3)},
        "array": np.array([1.0, np.nan]),
        "nested": ({"deep": [math.nan]},),
    }
    write_json(obj, tmp_path / "m.json")
    text = (tmp_path / "m.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))
    assert data == {
        "nan": None,
        "inf": [None, None, 1.5],
        "np": {"f32": None, "f64": None, "ok": 0.25, "i": 3},
        "array": [1.0, None],
        "nested": [{"deep": [None]}],
    }


def test_write_json_bytes_are_unchanged_for_finite_values(tmp_path):
    obj = {"b": [1, 2.5, np.float32(0.1), np.int64(7)], "a": {"x": True, "y": None, "z": "s"}}
    write_json(obj, tmp_path / "m.json")
    before = json.dumps(obj, indent=2, sort_keys=True, default=lambda o: o.item()) + "\n"
    assert (tmp_path / "m.json").read_text() == before


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "metrics").glob("*.json")))
def test_committed_metrics_are_strict_json_and_rewrite_byte_for_byte(name, tmp_path):
    text = (ROOT / "metrics" / name).read_text()
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"{name}: bare {c}"))
    write_json(data, tmp_path / name)
    assert (tmp_path / name).read_text() == text


# ---------------------------------------------------------------- cli.run


def _run(main) -> int:
    with pytest.raises(SystemExit) as e:
        cli.run(main)
    return e.value.code


def test_cli_turns_an_interrupt_into_one_line_and_restores_the_handlers(capsys):
    before = {s: signal.getsignal(s) for s in cli.SIGNALS}

    def interrupted() -> None:
        raise KeyboardInterrupt

    def terminated() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
        pytest.fail("SIGTERM did not interrupt")

    assert _run(interrupted) == 130
    assert _run(terminated) == 143
    err = capsys.readouterr().err.splitlines()
    assert [line.split(";")[0] for line in err] == ["error: interrupted (SIGINT)", "error: interrupted (SIGTERM)"]
    assert {s: signal.getsignal(s) for s in cli.SIGNALS} == before


def test_cli_points_the_jvm_loggers_at_warn_before_any_jvm_starts(monkeypatch):
    # Options only (the JVM starts later, where BM25 runs); none once it runs; and a stage
    # still starts where Pyserini (with pyjnius) is not installed.
    import types

    fake = types.SimpleNamespace(vm_running=False, options=[])
    fake.add_options = lambda *o: fake.options.extend(o)
    monkeypatch.setitem(sys.modules, "jnius_config", fake)
    cli._quiet_jvm()
    assert [o.split("=")[0] for o in fake.options] == ["-Dlog4j2.configurationFile", "-Djava.util.logging.config.file"]
    for o in fake.options:
        config = Path(o.split("=", 1)[1]).read_text()
        assert ('level="warn"' in config) if config.lstrip().startswith("<?xml") else (".level=WARNING" in config), o
    fake.vm_running, fake.options = True, []
    cli._quiet_jvm()
    assert fake.options == []
    monkeypatch.setitem(sys.modules, "jnius_config", None)  # import jnius_config raises ImportError
    cli._quiet_jvm()


def test_cli_leaves_an_ignored_signal_ignored(capsys):
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        cli.run(lambda: os.kill(os.getpid(), signal.SIGTERM))  # as under nohup: nothing happens
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


# ---------------------------------------------------------------- stages/compare.py, signalled and killed

CORPUS = {"a.txt": "Aspirin treats pain. It is cheap.\n\nStatins lower cholesterol.\n", "b.txt": "Sleep aids memory.\n"}
QUESTIONS = '{"id": "q1", "question": "what treats pain", "doc_id": "a.txt", "answer": "Aspirin"}\n'


def _corpus(d: Path, questions: bool = False) -> Path:
    corpus = d / "corpus"
    corpus.mkdir(parents=True)
    for name, text in CORPUS.items():
        (corpus / name).write_text(text)
    if questions:
        (corpus / "questions.jsonl").write_text(QUESTIONS)
    return corpus


def _compare(d: Path, corpus: Path, tmpdir: Path, fault: str | None = None) -> subprocess.Popen:
    """``python stages/compare.py`` run from ``d`` with a private ``$TMPDIR``; stderr goes to a
    file beside ``d`` (a pipe nobody reads could fill and stall it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop(FAULT_ENV, None)
    if fault:
        env[FAULT_ENV] = fault
    cmd = [sys.executable, str(ROOT / "stages" / "compare.py"), "--corpus", str(corpus), "--out", str(d / "out")]
    cmd += ["--methods", "fixed", "--no-rerank", "--retrievers", "bm25", "--bootstrap", "10", "--params", str(ROOT / "params.yaml")]
    with open(d.parent / "stderr.txt", "w") as err:  # the child holds its own copy
        return subprocess.Popen(
            cmd, cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True, preexec_fn=_terminal_signals
        )


def _terminal_signals() -> None:
    # SIGINT as a user's terminal delivers it. A shell starts a background job (`make test &`,
    # `nohup ... &`) with SIGINT ignored, every child inherits that, and compare rightly leaves
    # an ignored signal ignored (cli.run): the test then measured how pytest was started.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stderr(d: Path) -> str:
    return (d.parent / "stderr.txt").read_text()


def _wait_for_temporary(d: Path, proc: subprocess.Popen, timeout: float = 300) -> None:
    """Until the output's temporary sibling is complete (the sleep fault holds it there)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any((t / "out" / MARKER).exists() for t in d.glob(".out.*.tmp")):
            return
        if proc.poll() is not None:
            pytest.fail(f"compare ended first (exit {proc.returncode}): {_stderr(d)[-3000:]}")
        time.sleep(0.2)
    proc.kill()
    pytest.fail("compare did not reach its output")


def _one_line(stderr: str, signame: str) -> None:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: interrupted ({signame})"), stderr[-3000:]
    assert stderr.strip().splitlines()[-1] == errors[0]


@pytest.fixture
def case(tmp_path) -> tuple[Path, Path]:
    """The folder compare runs from, and its private temporary directory."""
    (tmp_path / "case").mkdir()
    (tmp_path / "tmp").mkdir()
    return tmp_path / "case", tmp_path / "tmp"


@pytest.mark.parametrize(
    "sig, code, questions",
    [
        (signal.SIGINT, 130, False),
        # With questions BM25 starts a JVM in the process, which takes SIGTERM over unless -Xrs.
        pytest.param(signal.SIGTERM, 143, True, marks=pytest.mark.slow),
    ],
    ids=["sigint", "sigterm-after-the-jvm-started"],
)
def test_a_signalled_compare_prints_one_line_and_leaves_nothing(sig, code, questions, case):
    d, tmpdir = case
    corpus = _corpus(d, questions)
    # The fault holds the finished output for a minute; on a loaded 2-core CI runner the poll
    # once saw it only as the minute ran out, and the signal came after the rename (exit 0, the
    # output in place). That run tested nothing, so it is run again, at most twice more; a
    # signal inside the window must always end in `code` with nothing left.
    for attempt in range(3):
        proc = _compare(d, corpus, tmpdir, fault="sleep-before-rename:/out")
        _wait_for_temporary(d, proc)
        assert [p.name.split("-")[0] for p in tmpdir.iterdir()] == ["compare"]  # the corpus copy, held
        proc.send_signal(sig)
        proc.wait(timeout=120)
        missed = proc.returncode == 0 and (d / "out" / MARKER).is_file() and not list(d.glob(".out.*.tmp"))
        if not missed:
            break
        shutil.rmtree(d / "out")  # what the missed run wrote; the next attempt starts as the first
    assert proc.returncode == code, f"attempt {attempt + 1}: " + _stderr(d)[-3000:]
    _one_line(_stderr(d), signal.Signals(sig).name)
    assert sorted(p.name for p in d.iterdir()) == ["corpus"]  # no output, no temporary sibling
    assert list(tmpdir.iterdir()) == []


def test_after_kill_9_the_next_run_leaves_tmpdir_clean(case):
    d, tmpdir = case
    corpus = _corpus(d)
    proc = _compare(d, corpus, tmpdir, fault="sleep-before-rename:/out")
    _wait_for_temporary(d, proc)
    proc.kill()
    proc.wait(timeout=60)
    assert list(tmpdir.iterdir()) and list(d.glob(".out.*.tmp"))  # what SIGKILL leaves
    again = _compare(d, corpus, tmpdir)
    again.wait(timeout=600)
    assert again.returncode == 0, _stderr(d)[-3000:]
    assert list(tmpdir.iterdir()) == [] and not list(d.glob(".out.*.tmp"))
    assert (d / "out" / "report.html").is_file() and (d / "out" / MARKER).read_text() == "compare\n"
