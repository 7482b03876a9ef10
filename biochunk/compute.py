"""Where per-partition work runs: in this process, or on a Dask distributed cluster.

One seam, ``Engine.map(fn, partitions)``: ``fn`` is a picklable module-level function (or a
``functools.partial`` of one over small params) applied to each partition; results come back
in partition order. The local engine calls ``fn`` in this process, the Dask engine submits the
very same call to workers, so the two compute the same thing by construction: the partitions,
not the engine, decide every model batch.

Heavy objects (chunkers, encoders) are never shipped: a task builds them through
``resource(key, factory)``, a per-process cache, so each worker loads a model once and reuses
it for every later partition. Workers import ``biochunk`` (unpickling ``fn`` does), so they
run with the same CPU kernel pins as the stage process, and they inherit its environment.

Only a bounded number of partitions is in flight (submitted, not yet collected): the stage
reads, computes and writes in a stream, so its memory follows the partition size, not the
corpus.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from tqdm import tqdm

from biochunk.errors import UserError

log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")

# compute.engine: local (this process) | dask (partitions on a Dask cluster).
ENGINES = ("local", "dask")

# Partitions in flight per worker thread: one computing, one queued behind it, so a worker
# never waits for the stage to send the next one, and memory stays a few partitions deep.
IN_FLIGHT_PER_THREAD = 2
# Seconds compute.address's scheduler gets to connect, shake hands and answer a first request
# (one deadline over all three: _client_within) before the stage stops with a one-line error.
CONNECT_TIMEOUT_S = 15

_RESOURCES: dict[Any, Any] = {}


def resource(key: Any, factory: Callable[[], R]) -> R:
    """The object ``factory()`` builds, once per process for each ``key`` (hashable params).

    On a Dask worker this is the worker process's own cache: a model is loaded by the first
    partition that needs it and kept for the rest.
    """
    if key not in _RESOURCES:
        _RESOURCES[key] = factory()
    return _RESOURCES[key]


def chunked(items: Iterable[P], size: int | None) -> Iterator[list[P]]:
    """``items`` in lists of ``size``; None: one list of everything (empty too: the single
    partition of an unpartitioned run always exists, exactly as the one call it replaces)."""
    if size is None:
        yield list(items)
        return
    part: list[P] = []
    for item in items:
        part.append(item)
        if len(part) == size:
            yield part
            part = []
    if part:
        yield part


def _pin_torch_threads(n: int) -> None:
    # Dask's nanny starts workers with OMP_NUM_THREADS=1; torch's thread count decides the
    # reduction order of its matrix products, so a worker runs torch on exactly its own
    # threads. Before torch is imported, the environment says it (importing torch only for
    # this would cost a chunking worker ~200 MB); once it is, torch is told directly.
    if "torch" not in sys.modules:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(n)
        return

    def pin() -> bool:
        sys.modules["torch"].set_num_threads(n)
        return True

    resource(("torch_threads", n), pin)


def _on_worker(threads: int, fn: Callable[[P], R], part: P) -> R:
    _pin_torch_threads(threads)
    return fn(part)


def _client_within(address: str, seconds: float) -> Any:
    """A Client of the scheduler at ``address``, or a one-line UserError after ``seconds``.

    Client's own ``timeout`` bounds only the TCP connect: distributed then waits for the
    scheduler's handshake with no limit, so a port that accepts and never answers (a wrong
    service, a frozen scheduler) hangs the stage forever. ``sync``'s ``callback_timeout``
    puts one deadline on the whole start instead: connect, handshake and the first reply
    (the scheduler's identity, which the start fetches).
    """
    from distributed import Client

    started: list[Any] = []

    class _DeadlineClient(Client):
        def start(self, **kwargs: Any) -> None:
            started.append(self)  # __init__ raises on timeout: keep a handle to stop its IO thread
            super().start(callback_timeout=seconds, **kwargs)

    try:
        return _DeadlineClient(address, timeout=f"{seconds}s")
    except (OSError, TimeoutError) as e:
        for client in started:
            client.close(timeout=1)
        reason = str(e).replace("\n", " ") or type(e).__name__  # the message stays one line
        raise UserError(
            f"compute.address: no Dask scheduler answers at {address} within {seconds} s ({reason}); "
            "start one there (dask scheduler) or set compute.address: null for a local cluster"
        ) from None


class Engine:
    """``with Engine(params.section("compute")) as engine: engine.map(fn, parts)``."""

    def __init__(self, params: Any, dashboard: bool = True) -> None:
        self.params = params
        self.dashboard = dashboard
        self.client = None
        self.cluster = None

    def __enter__(self) -> Engine:
        if self.params.engine == "dask":
            self._start_dask()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    def _start_dask(self) -> None:
        from distributed import Client, LocalCluster

        # Dask logs every worker's start and stop at INFO; the stage log keeps our one line.
        logging.getLogger("distributed").setLevel(logging.WARNING)
        p = self.params
        if p.address is not None:
            self.client = _client_within(p.address, CONNECT_TIMEOUT_S)
        else:
            # Bound to the loopback: a LocalCluster is this machine's business only. Port 0 lets
            # the OS pick a free dashboard port, so two stages never fight over 8787.
            self.cluster = LocalCluster(
                n_workers=p.workers,
                threads_per_worker=p.threads_per_worker,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0" if self.dashboard else None,
            )
            self.client = Client(self.cluster)
        link = self.client.dashboard_link if self.dashboard else None
        workers = self.client.scheduler_info().get("workers", {})
        log.info(
            "dask: %d workers, %d threads at %s; dashboard %s",
            len(workers),
            sum(w.get("nthreads", 0) for w in workers.values()),
            self.client.scheduler.address,
            link or "off (pip install bokeh for one)",
        )

    def threads(self) -> int:
        if self.client is None:
            return 1
        workers = self.client.scheduler_info().get("workers", {})
        return max(1, sum(w.get("nthreads", 1) for w in workers.values()))

    def map(self, fn: Callable[[P], R], parts: Iterable[P], total: int | None = None, desc: str = "partitions") -> Iterator[R]:
        """``fn(part)`` for every part, yielded in the order of ``parts``, with a progress bar."""
        bar = tqdm(total=total, desc=desc, unit="part", file=sys.stderr, disable=total is not None and total <= 1)
        try:
            if self.client is None:
                for part in parts:
                    out = fn(part)
                    bar.update(1)
                    yield out
                return
            yield from self._map_dask(fn, parts, bar)
        finally:
            bar.close()

    def _map_dask(self, fn: Callable[[P], R], parts: Iterable[P], bar: Any) -> Iterator[R]:
        limit = IN_FLIGHT_PER_THREAD * self.threads()
        pending: deque = deque()
        for i, part in enumerate(parts):
            # pure=False: two equal partitions are still two tasks (keys never collide), and an
            # earlier partition goes first (priority), so results arrive roughly in order.
            pending.append(self.client.submit(_on_worker, self.params.threads_per_worker, fn, part, pure=False, priority=-i))
            while len(pending) >= limit:
                yield self._collect(pending.popleft(), bar)
        while pending:
            yield self._collect(pending.popleft(), bar)

    @staticmethod
    def _collect(future: Any, bar: Any) -> Any:
        out = future.result()
        future.release()
        bar.update(1)
        return out
