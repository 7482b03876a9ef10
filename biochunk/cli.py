"""What every stage script shares: logging set-up, one-line errors for user mistakes, and
one line (no traceback) when the run is interrupted or terminated."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any, Callable

from biochunk.errors import UserError

JVM_LOGGING = Path(__file__).parent / "jvm_logging"  # the JVM's log configurations (_quiet_jvm)

# Ctrl-C, `kill` and a closed terminal; each ends the run through Python (so `finally` blocks,
# temporary folders and atomic writes clean up) and exits 128 + the signal's number.
SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


class Interrupted(KeyboardInterrupt):
    """A signal turned into an exception; a KeyboardInterrupt, so ``except Exception`` lets it through."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _line(signum: int) -> str:
    name = signal.Signals(signum).name
    return f"error: interrupted ({name}); every output is written whole or not at all: run the command again"


def _exit_now(signum: int, frame: FrameType | None) -> None:
    # A second signal while the first one's clean-up runs: stop at once; the next run removes
    # what the clean-up did not (``biochunk.io`` leftovers of dead processes).
    print(_line(signum), file=sys.stderr, flush=True)
    os._exit(128 + signum)


def _raise(signum: int, frame: FrameType | None) -> None:
    for s in SIGNALS:
        if signal.getsignal(s) is _raise:  # ours only: an ignored signal stays ignored
            signal.signal(s, _exit_now)
    raise Interrupted(signum)


def _install() -> dict[int, Any]:
    """Our handler for each signal left at its default (an ignored one, e.g. under nohup, stays
    ignored); returns the handlers to restore."""
    previous: dict[int, Any] = {}
    for s in SIGNALS:
        current = signal.getsignal(s)
        if current in (signal.SIG_DFL, signal.default_int_handler):
            previous[s] = current
            signal.signal(s, _raise)
    return previous


def _not_cpu_4bit_kernels(record: logging.LogRecord) -> bool:
    # bitsandbytes, imported with peft, warns on every CPU run that it cannot fetch its CPU
    # 4-bit kernels from the Hugging Face hub and asks for `pip install kernels`. The project
    # never loads 4-bit on a CPU (generation.model allows nf4 on CUDA only), so the advice
    # would send a user after a package that changes nothing: that one line is dropped.
    return "kernels" not in record.getMessage()


def _quiet_jvm() -> None:
    """Pyserini's JVM (BM25) at WARN: log4j prints four INFO lines per index (the analyzer's
    settings) and Lucene's java.util.logging a two-line notice per index opened: six lines per
    chunk method in compare and retrieve, while the Python side already logs what it indexed.
    Options only: the JVM starts later, in the stage that searches, if at all. Set here with
    the rest of every stage's logging, which cannot change a result."""
    try:
        import jnius_config  # pyjnius's options holder (a small module, no JVM), which Pyserini installs
    except ImportError:  # without Pyserini no stage starts a JVM; BM25 says what is missing where it is used
        return
    if not jnius_config.vm_running:
        jnius_config.add_options(
            f"-Dlog4j2.configurationFile={JVM_LOGGING / 'log4j2.xml'}", f"-Djava.util.logging.config.file={JVM_LOGGING / 'logging.properties'}"
        )  # fmt: skip


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose mistakes end like every other user mistake: one ``error:``
    line naming the flag (argparse prints its usage block first), exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def run(main: Callable[[], None]) -> None:
    """Run a stage's ``main``; a ``UserError`` prints one line and exits 2, an interrupt
    (Ctrl-C, SIGTERM, SIGHUP) one line and exits 128 + its number; no traceback for either."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("bitsandbytes.backends.cpu.ops").addFilter(_not_cpu_4bit_kernels)
    # faiss tries its AVX512-SPR, AVX512 and AVX2 builds in turn and logs each miss at INFO with
    # a ModuleNotFoundError: nine lines in every searching stage that read as a broken install
    # on a machine where the generic build is the one that loads. Its warnings still show.
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)
    _quiet_jvm()
    # Signal handlers can only be set from the main thread; elsewhere Python's defaults stay.
    previous = _install() if threading.current_thread() is threading.main_thread() else {}
    try:
        main()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt as e:
        signum = e.signum if isinstance(e, Interrupted) else signal.SIGINT
        print(_line(signum), file=sys.stderr, flush=True)
        sys.exit(128 + signum)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
