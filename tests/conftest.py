import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def shared_datasets() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real benchmark mirror not found at {SHARED} (only on machines with ../shared)")
    return SHARED
