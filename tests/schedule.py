"""Longest file first: the order in which ``make test`` (pytest-xdist, ``--dist loadfile``) hands
test files to its workers.

xdist queues files by their number of tests, most first. Here the costly files have few tests
(a whole pipeline run in a copy, a model trained end to end), so they came last, where one of
them can leave the other worker idle. Queuing by measured time instead, longest first, is the
classic greedy schedule (LPT) and leaves at most the shortest files for the tail. On the
2026-12-06 profile the gain was small (a simulated 71.7 against 72.3 min): most of that day's
speed-up was the passive OpenMP wait in conftest.py. This order keeps a new costly file from
becoming the tail. The times are ``tests/durations.json`` (seconds per file, from a full run's
JUnit report: ``python scripts/test_durations.py``); a file it does not list yet counts
``UNKNOWN_PER_TEST`` seconds a test.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")
UNKNOWN_PER_TEST = 1.0  # most tests take well under a second; a new costly file shows in the next refresh


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    """Seconds per test file (paths relative to the repository root), or none if the file is absent."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except FileNotFoundError:
        return {}


def cost(scope: str, n_tests: int, durations: Mapping[str, float]) -> float:
    """Expected seconds of a work unit (a file: ``--dist loadfile``'s scope is its path)."""
    return durations.get(scope.split("::", 1)[0], UNKNOWN_PER_TEST * n_tests)


def longest_first(units: Mapping[str, Mapping[str, bool]], durations: Mapping[str, float]) -> list[str]:
    """The units' scopes, costliest first; ties keep collection order (sorted is stable)."""
    return sorted(units, key=lambda scope: -cost(scope, len(units[scope]), durations))


def make_scheduler(config, log):
    """xdist's loadfile scheduler, taking the costliest waiting file each time a worker needs one."""
    from xdist.scheduler import LoadFileScheduling

    durations = load_durations()

    class LongestFileFirst(LoadFileScheduling):
        def _assign_work_unit(self, node) -> None:
            # The queue is built (in xdist's own order) before the first assignment; reorder it
            # once, here, rather than copy xdist's schedule().
            if not getattr(self, "_ordered", False):
                order = longest_first(self.workqueue, durations)
                for scope in order:
                    self.workqueue.move_to_end(scope)
                self._ordered = True
            super()._assign_work_unit(node)

    return LongestFileFirst(config, log)
