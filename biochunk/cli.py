"""What every stage script shares: logging set-up and one-line errors for user mistakes."""

from __future__ import annotations

import logging
import sys
from typing import Callable

from biochunk.errors import UserError


def run(main: Callable[[], None]) -> None:
    """Run a stage's ``main``; a ``UserError`` prints one line and exits 2, no traceback."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    try:
        main()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
