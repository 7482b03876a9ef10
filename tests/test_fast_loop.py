"""`make test-fast` is `pytest -m "not slow"`: it stays fast only while every test that runs DVC
or the headless browser in a subprocess, or trains a model, carries the `slow` marker. This reads
the source (no imports, nothing run) and names each test that does one of them without it,
directly or through its module's helpers and fixtures (and those of tests/browser.py and
tests/conftest.py). Training is a call that reaches a gradient step (`.backward()`) in biochunk."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
HELPERS = ("browser", "conftest")  # the modules tests import helpers from


def _aliases(tree: ast.Module, package: str) -> dict[str, str]:
    """Each name a module imports -> its qualified name (relative imports resolved in ``package``)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] + (f".{node.module}" if node.module else "")
            for a in node.names:
                names[a.asname or a.name] = f"{base}.{a.name}"
    return names


def _called(call: ast.Call, names: dict[str, str], module: str) -> str | None:
    """The qualified name a call resolves to (`f(..)`, `mod.f(..)`), where it can be told."""
    f = call.func
    if isinstance(f, ast.Name):
        return names.get(f.id, f"{module}.{f.id}")
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in names:
        return f"{names[f.value.id]}.{f.attr}"
    return None


def _is_raises(node: ast.AST) -> bool:
    return isinstance(node, ast.With) and any(
        isinstance(i.context_expr, ast.Call) and ast.unparse(i.context_expr.func) == "pytest.raises" for i in node.items
    )


def _walk(node: ast.AST):
    """ast.walk, less the bodies of `with pytest.raises(...)`: a call that must fail trains nothing."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in ast.iter_child_nodes(n) if not _is_raises(c))


@cache
def _trainers() -> frozenset[str]:
    """The biochunk functions (qualified names) that reach `.backward()`, across its modules."""
    calls, steps = {}, set()
    for path in sorted((ROOT / "biochunk").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        tree = ast.parse(path.read_text())
        names = _aliases(tree, module if path.name == "__init__.py" else module.rsplit(".", 1)[0])
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                q = f"{module}.{fn.name}"
                nodes = list(ast.walk(fn))
                calls[q] = {c for n in nodes if isinstance(n, ast.Call) and (c := _called(n, names, module))}
                if any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith(".backward") for n in nodes):
                    steps.add(q)
    while grown := {q for q, c in calls.items() if q not in steps and c & steps}:
        steps |= grown
    return frozenset(steps)


def _is_slow_mark(node: ast.expr) -> bool:
    """`pytest.mark.slow`, or a list / tuple holding it (a module's `pytestmark`)."""
    if isinstance(node, ast.List | ast.Tuple):
        return any(_is_slow_mark(e) for e in node.elts)
    return isinstance(node, ast.Attribute) and node.attr == "slow" and ast.unparse(node.value) == "pytest.mark"


def _direct(fn: ast.FunctionDef, names: dict[str, str], module: str) -> str | None:
    """Why a function is slow by itself: the program of a command it builds, or a training call."""
    for node in _walk(fn):
        if isinstance(node, ast.List | ast.Tuple) and node.elts:
            program = node.elts[0]
            if isinstance(program, ast.Constant) and program.value == "dvc":
                return "runs DVC in a subprocess"
            if isinstance(program, ast.Name) and program.id == "CHROMIUM":
                return "runs the headless browser"
        if isinstance(node, ast.Call) and (q := _called(node, names, module)) in _trainers():
            return f"trains a model ({q})"
    return None


def _uses(fn: ast.FunctionDef) -> set[str]:
    """The names a function reads and the fixtures it asks for."""
    return {n.id for n in _walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}


def _slow_functions(tree: ast.Module, module: str, imported: dict[str, str]) -> dict[str, str]:
    """Every module-level function (test, helper or fixture) that is slow, with why; `imported`
    names the slow helpers the module imports."""
    names = _aliases(tree, module.rsplit(".", 1)[0])
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    slow = {k: v for k, v in imported.items() if k not in functions}
    slow |= {name: why for name, fn in functions.items() if (why := _direct(fn, names, module))}
    uses = {name: _uses(fn) for name, fn in functions.items()}
    while grown := {name: min(used & slow.keys()) for name, used in uses.items() if name not in slow and used & slow.keys()}:
        slow |= {name: f"uses {via}, which {slow[via]}" for name, via in grown.items()}
    return slow


def _module_marked_slow(tree: ast.Module) -> bool:
    return any(
        isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "pytestmark" and _is_slow_mark(n.value) for n in tree.body
    )


def _unmarked_slow_tests() -> list[str]:
    helpers = {m: _slow_functions(ast.parse((TESTS / f"{m}.py").read_text()), m, {}) for m in HELPERS}
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text())
        if _module_marked_slow(tree):
            continue
        imported = {
            a.asname or a.name: f"{why} ({mod}.{a.name})"
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and (mod := (node.module or "").removeprefix("tests.")) in helpers
            for a in node.names
            if (why := helpers[mod].get(a.name))
        }
        slow = _slow_functions(tree, f"tests.{path.stem}", imported)
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test") and fn.name in slow:
                if not any(_is_slow_mark(d) for d in fn.decorator_list):
                    found.append(f"{path.name}::{fn.name} {slow[fn.name]}")
    return found


def test_every_test_that_runs_dvc_the_browser_or_training_is_marked_slow():
    assert _unmarked_slow_tests() == [], "mark these @pytest.mark.slow: make test-fast must leave them out"


def test_the_check_sees_each_kind():
    assert {"biochunk.scoring.crossencoder.train", "biochunk.scoring.lora_scorer.train"} <= _trainers()
    tree = ast.parse(
        "from biochunk.scoring import crossencoder\n"
        "from biochunk.scoring.lora_scorer import train as fit\n"
        "def _sh(cmd): return run(cmd)\n"
        "def repo(): _sh(['dvc', 'repro'])\n"
        "def test_a(repo): pass\n"
        "def test_b(): crossencoder.train_reranker(1)\n"
        "def test_c(): fit(1)\n"
        "def test_d():\n    with pytest.raises(ValueError): crossencoder.train(None)\n"
        "def test_e(): page(1)\n"
        "def test_f(): crossencoder.load('minilm')\n"
    )
    slow = _slow_functions(tree, "tests.t", {"page": "runs the headless browser (browser.dom)"})
    assert {n for n in slow if n.startswith("test")} == {"test_a", "test_b", "test_c", "test_e"}
    assert slow["test_a"] == "uses repo, which runs DVC in a subprocess"
    browser = _slow_functions(ast.parse((TESTS / "browser.py").read_text()), "browser", {})
    assert {"chromium", "console_messages", "dom"} <= browser.keys() and "console_lines" not in browser
