"""make test hands files to its workers longest first (tests/schedule.py), through xdist's own
loadfile scheduler, from the committed tests/durations.json."""

import json
import subprocess
import sys

import pytest

from tests import schedule
from tests.conftest import ROOT


class FakeConfig:
    """What xdist's scheduler reads of the config: the workers (``--tx``) and the reorder flag."""

    class option:
        loadscopereorder = True

    def __init__(self, workers: int):
        self.workers = workers

    def getvalue(self, name):
        return {"tx": [f"{self.workers}*popen"], "dist": "loadfile"}[name]


class FakeWorker:
    def __init__(self, name):
        self.gateway = type("G", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indices):
        self.sent.append(list(indices))

    def shutdown(self):
        self.shutting_down = True


def _files_sent(sched, worker, collection):
    return [collection[i[0]].split("::")[0] for i in worker.sent]


def test_the_costliest_files_go_first_and_unknown_files_count_a_second_a_test(monkeypatch):
    # xdist alone would start with the file with the most tests (many quick ones); the file
    # that runs a pipeline for minutes would come last and leave one worker idle.
    durations = {"tests/test_pipeline.py": 300.0, "tests/test_train.py": 120.0, "tests/test_many.py": 20.0}
    monkeypatch.setattr(schedule, "load_durations", lambda: durations)
    collection = (
        [f"tests/test_many.py::t{i}" for i in range(40)]
        + ["tests/test_new.py::a", "tests/test_new.py::b"]
        + [f"tests/test_pipeline.py::t{i}" for i in range(3)]
        + [f"tests/test_train.py::t{i}" for i in range(2)]
    )
    sched = schedule.make_scheduler(FakeConfig(2), None)
    workers = [FakeWorker("gw0"), FakeWorker("gw1")]
    for w in workers:
        sched.add_node(w)
        sched.add_node_collection(w, collection)
    sched.schedule()
    assert [_files_sent(sched, w, collection)[0] for w in workers] == ["tests/test_pipeline.py", "tests/test_train.py"]
    # A worker takes its next file once at most two of its tests are left (xdist's prefetch):
    # gw1 (2 tests) at once, gw0 when its pipeline file is nearly done; the file the durations do
    # not list (2 tests: 2 s) is last.
    assert _files_sent(sched, workers[1], collection) == ["tests/test_train.py", "tests/test_many.py"]
    sched.mark_test_complete(workers[0], collection.index("tests/test_pipeline.py::t0"))
    assert _files_sent(sched, workers[0], collection) == ["tests/test_pipeline.py", "tests/test_new.py"]

def test_longest_first_is_stable_and_falls_back_to_test_counts():
    units = {"a.py": {"x": False}, "b.py": {"x": False, "y": False}, "c.py": {"x": False}}
    assert schedule.longest_first(units, {}) == ["b.py", "a.py", "c.py"]
    assert schedule.longest_first(units, {"c.py": 9.0}) == ["c.py", "b.py", "a.py"]


def test_the_durations_file_names_test_files_of_this_suite():
    durations = schedule.load_durations()
    assert durations, "tests/durations.json is missing or empty: python scripts/test_durations.py <junit.xml>"
    stale = [f for f in durations if not (f.startswith("tests/test_") and (ROOT / f).is_file())]
    assert not stale, f"tests/durations.json names files that are not test files here: {stale}"
    assert all(v >= 0 for v in durations.values())


def test_durations_script_sums_a_junit_report_per_file(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_io" name="a" time="1.25"/>'
        '<testcase classname="tests.test_io" name="b" time="0.5"/>'
        '<testcase classname="tests.test_chunkers.TestFixed" name="c" time="2"/>'
        '<testcase classname="elsewhere.test_x" name="d" time="9"/>'
        "</testsuite></testsuites>"
    )
    out = tmp_path / "durations.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "test_durations.py"), str(report), "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text()) == {"tests/test_chunkers.py": 2.0, "tests/test_io.py": 1.8}
    missing = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "test_durations.py"), str(tmp_path / "nope.xml"), "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nope.xml" in missing.stderr


@pytest.mark.parametrize("dist", ["load", "no"])
def test_other_distributions_keep_xdists_scheduler(dist):
    from tests.conftest import pytest_xdist_make_scheduler

    class C:
        def getvalue(self, name):
            return dist

    assert pytest_xdist_make_scheduler(C(), None) is None


def test_make_tests_loadfile_gets_the_longest_first_scheduler():
    from tests.conftest import pytest_xdist_make_scheduler

    assert type(pytest_xdist_make_scheduler(FakeConfig(2), None)).__name__ == "LongestFileFirst"
    assert "--dist loadfile" in (ROOT / "Makefile").read_text()
