"""Which biochunk modules and which params each DVC stage reads, derived from the code.

dvc.yaml must declare exactly these (tests/test_lock.py checks both directions): a module
that is read but not declared lets an edit go unnoticed ("up to date" after the code
changed); one declared but never read re-runs stages for nothing.

    python scripts/stage_deps.py           # print what each stage should declare
    python scripts/stage_deps.py --write   # rewrite the code deps in every dvc.yaml, laid out (CODE_MARKER)

- modules: the stage script's import closure under ``biochunk/`` (AST; an import inside a
  function counts once a live module names that function);
- params: the ``params.section(...)`` objects the script builds and the fields it reads
  from them (an object passed on whole, or asked a method, counts as its whole section);
  a section the script reads only under a flag (its ``SECTION_FLAGS``, e.g. compare's
  ``{"convert": "--corpus"}``) counts only for a command that passes that flag, and one it
  reads only without a flag (``"not --reranker"``) only for a command that does not.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import re
import sys
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from biochunk import params as P  # noqa: E402

# Every pipeline: the default one and each paper's (experiments/<paper>/dvc.yaml, whose
# stages run from the repository root, wdir ../..). A paper stage is named "<file>:<stage>".
PIPELINES = [ROOT / "dvc.yaml", *sorted(ROOT.glob("experiments/*/dvc.yaml"))]


def _stages(path: Path) -> dict:
    prefix = "" if path == ROOT / "dvc.yaml" else f"{path.relative_to(ROOT).as_posix()}:"
    return {prefix + k: v for k, v in (yaml.safe_load(path.read_text())["stages"] or {}).items()}


DVC = {k: v for p in PIPELINES for k, v in _stages(p).items()}
# Imported by every stage, yet unable to change an output: the one-line error printer, the
# exception type, and the params loader. A param's *value* is tracked through dvc.yaml's
# params (and params.yaml sets every key, test_params_yaml_sets_every_key), so the loader's
# defaults and its validation-only imports never reach a result.
# numerics.py pins float kernels, like the CPU and the packages it rounds on: why it is no
# dependency is in its docstring.
NOT_DEPS = {ROOT / "biochunk" / m for m in ("cli.py", "errors.py", "params.py", "numerics.py")}
# What the hybrid chunker opens for its dataset (chunking.build(..., dataset=...)).
HYBRID_CONFIGS = ["configs/${item}.yaml", "configs/triggers/${item}.yaml", "configs/hierarchy/${item}.yaml"]


def script_of(cmd: str) -> Path:
    (script,) = [w for w in cmd.split() if w.startswith("stages/") and w.endswith(".py")]
    return ROOT / script


@cache
def _module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _package_inits(dotted: str) -> list[Path]:
    parts = dotted.split(".")
    return [p for i in range(1, len(parts) + 1) if (p := ROOT.joinpath(*parts[:i], "__init__.py")).is_file()]


def _dotted(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class _Module:
    """What one file imports and references, at top level and per function.

    References are split in two: names (``f``, ``module.f`` through an imported module) and
    attributes of other objects (``obj.f``), which can only call methods. So ``d.get(k)`` on
    a dict does not make a module-level function ``get`` live.
    """

    def __init__(self, path: Path):
        tree = ast.parse(path.read_text())
        self.here = _dotted(path) if path.is_relative_to(ROOT / "biochunk") else ""
        self.is_pkg = path.name == "__init__.py"
        self.modules = {
            (a.asname or a.name).split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names
        }
        self.top = _Refs()
        self.functions: list[tuple[str, bool, _Refs]] = []  # name, is a method, what its body uses
        self._visit(tree.body, method=False)

    def _visit(self, body: list[ast.stmt], method: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                refs = _Refs()
                for sub in ast.walk(node):
                    self._record(sub, refs)
                # A local variable is not a reference to a function of the same name.
                refs.names -= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                self.functions.append((node.name, method, refs))
                for d in node.decorator_list:  # decorators run at import time (@register)
                    for sub in ast.walk(d):
                        self._record(sub, self.top)
            elif isinstance(node, ast.ClassDef):
                for sub in node.bases + node.decorator_list:
                    for n in ast.walk(sub):
                        self._record(n, self.top)
                self._visit(node.body, method=True)
            else:
                for sub in ast.walk(node):
                    self._record(sub, self.top)

    def _record(self, node: ast.AST, refs: "_Refs") -> None:
        if isinstance(node, ast.Name):
            refs.names.add(node.id)
        elif isinstance(node, ast.Attribute):
            on_module = isinstance(node.value, ast.Name) and node.value.id in self.modules
            (refs.names if on_module else refs.attrs).add(node.attr)
        elif isinstance(node, ast.Import):
            for a in node.names:
                refs.imports.update(_module_files(a.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = self.here.split(".") if self.is_pkg else self.here.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            refs.imports.update(_module_files(mod))
            for a in node.names:
                refs.imports.update(_module_files(f"{mod}.{a.name}"))


class _Refs:
    def __init__(self) -> None:
        self.imports: set[Path] = set()
        self.names: set[str] = set()
        self.attrs: set[str] = set()


def _module_files(dotted: str) -> set[Path]:
    if dotted.split(".")[0] != "biochunk" or (f := _module_file(dotted)) is None:
        return set()
    return {f, *_package_inits(dotted)}


@cache
def _parsed(path: Path) -> _Module:
    return _Module(path)


@cache
def closure_of(script: Path) -> frozenset[Path]:
    """biochunk files a stage can execute: top-level imports, and the imports inside a
    function once a live module names it (an import inside a function nobody calls, such as
    the chunker registry's loader in a stage that only reads chunks, does not count). Names
    are matched without their module, which can only over-count."""
    live_mods: set[Path] = {script}
    names: set[str] = set()
    attrs: set[str] = set()
    done: set[tuple[Path, int]] = set()
    changed = True
    while changed:
        changed = False
        for m in list(live_mods):
            mod = _parsed(m)
            for refs in [mod.top] + [
                r
                for i, (name, method, r) in enumerate(mod.functions)
                if (m, i) not in done
                and (m == script or name.startswith("__") or name in names or (method and name in attrs))
                and not done.add((m, i))
            ]:
                before = (len(live_mods), len(names), len(attrs))
                live_mods |= refs.imports - NOT_DEPS
                names |= refs.names
                attrs |= refs.attrs
                changed |= before != (len(live_mods), len(names), len(attrs))
    return frozenset(live_mods - {script})


def trivial(path: Path) -> bool:
    """A package __init__ holding only a docstring, imports and ``__all__``/``__version__``."""
    if path.name != "__init__.py":
        return False
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id in ("__all__", "__version__") for t in node.targets
        ):
            continue
        return False
    return True


def covered(path: Path, deps: list[str]) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return any(rel == d or rel.startswith(d.rstrip("/") + "/") for d in deps)


# Params that say where work runs, never what it computes: the same partitions run the same
# code on every engine (biochunk/compute.py), so switching to a Dask cluster must not re-run
# (and invalidate) every stage that has already run. They are left out of what a stage reads,
# so dvc.yaml does not declare them; compute.partition_rows does decide the partitions (the
# row groups written, the encoder's batches), so it stays a param of the stages that read it.
# The equality of engines is what tests/test_compute.py checks.
EXECUTION_ONLY = {"compute": {"engine", "address", "workers", "threads_per_worker"}}


def section_reads(script: Path, cmd: str | None = None) -> dict[str, set[str] | None]:
    """section -> the fields the script reads (None: the whole section), execution-only
    fields (``EXECUTION_ONLY``) left out; with ``cmd``, the sections the script reads only
    under a flag that ``cmd`` does not pass are left out too (``section_flags``)."""
    reads = _section_reads(script)
    if cmd is not None:
        words = cmd.split()
        for sec, flag in section_flags(script).items():
            without = flag.startswith("not ")
            if (flag.removeprefix("not ") in words) == without:
                reads.pop(sec, None)
    for sec, skip in EXECUTION_ONLY.items():
        if sec in reads:
            fields = reads[sec] if reads[sec] is not None else {f.name for f in dataclasses.fields(P.SECTIONS[sec])}
            reads[sec] = fields - skip
            if not reads[sec]:
                del reads[sec]
    return reads


def section_flags(script: Path) -> dict[str, str]:
    """The script's ``SECTION_FLAGS`` (section -> the flag under which alone it is read, or
    ``"not <flag>"``: the flag without which alone it is read), or {}.

    DVC re-runs a stage when a declared param changes: a section that a mode of the script
    reads (compare converts a corpus itself only with --corpus) would re-run a stage whose
    command never reads it. Declared in the script, beside the read, so the two move together."""
    for node in ast.parse(script.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SECTION_FLAGS"]:
            return dict(ast.literal_eval(node.value))
    return {}


def _section_reads(script: Path) -> dict[str, set[str] | None]:
    tree = ast.parse(script.read_text())
    var_section: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "section"
            and isinstance(node.value.args[0], ast.Constant)
        ):
            (target,) = node.targets
            var_section[target.id] = node.value.args[0].value
    reads: dict[str, set[str] | None] = {s: set() for s in var_section.values()}
    attr_values = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in var_section:
            sec = var_section[node.value.id]
            fields = {f.name for f in dataclasses.fields(P.SECTIONS[sec])}
            if node.attr in fields and reads[sec] is not None:
                reads[sec].add(node.attr)
            elif node.attr not in fields:
                reads[sec] = None  # a method of the section object reads what it likes
        elif (
            isinstance(node, ast.Name)
            and node.id in var_section
            and isinstance(node.ctx, ast.Load)
            and id(node) not in attr_values
        ):
            reads[var_section[node.id]] = None  # passed on whole
    return reads


def stage_spec(name: str) -> dict:
    st = DVC[name]
    return st.get("do", st)


def stage_closure(name: str) -> set[Path]:
    """The biochunk files the stage can execute (``closure_of`` its script, trivial package
    inits left out). The report stage imports the named paper's table builder by name
    (stages/report.py, report_runs.py, report_rungs.py), so each paper's report depends on its own builder,
    not on every paper's."""
    cmd = stage_spec(name)["cmd"]
    closure = set(closure_of(script_of(cmd)))
    if script_of(cmd).name in ("report.py", "report_runs.py", "report_rungs.py") and (m := re.search(r"--paper\s+([a-z_]+)", cmd)):
        builder = ROOT / "biochunk" / "evaluation" / "reports" / f"{m.group(1)}.py"
        closure |= {builder, *closure_of(builder)}
    return {f for f in closure if not trivial(f)}


def module_deps(name: str) -> list[str]:
    """The fewest dep entries that cover the stage's closure exactly: a folder when the
    stage reads every module in it, else the files."""
    closure = stage_closure(name)
    out: set[str] = set()
    for f in sorted(closure):
        rel = f.relative_to(ROOT)
        chosen = rel
        for parent in rel.parents:
            if parent == Path("biochunk") or parent == Path("."):
                break
            files = [g for g in (ROOT / parent).rglob("*.py") if not trivial(g)]
            if len(files) > 1 and all(g in closure for g in files):
                chosen = parent
        out.add(chosen.as_posix())
    return sorted(out)


# Heads the generated part of a stage's deps. dvc.yaml is meant to read as a map of the
# pipeline: each stage's command, params and outputs, then its deps with the data it reads
# first and the code last, under this line (DVC ignores the order of keys and of deps:
# dvc.lock sorts them, so the layout changes no lock).
CODE_MARKER = "# the code it runs: the script and its biochunk modules (scripts/stage_deps.py --write)"


def _is_code(item: str) -> bool:
    return item.startswith("stages/") or (item.startswith("biochunk/") and not item.startswith("biochunk/datasets/embedded"))


def write(path: Path = ROOT / "dvc.yaml") -> None:
    path.write_text(laid_out(path))


def laid_out(path: Path) -> str:
    """``path``'s text with each stage laid out: its ``deps`` last, the data it reads first,
    then ``CODE_MARKER``, the stage script and the biochunk modules it imports (regenerated)."""
    prefix = "" if path == ROOT / "dvc.yaml" else f"{path.relative_to(ROOT).as_posix()}:"
    lines = path.read_text().splitlines(keepends=True)
    indent = lambda line: len(line) - len(line.lstrip())  # noqa: E731
    out: list[str] = []
    pending: tuple[int, list[str]] | None = None  # a deps block, written where its mapping ends
    stage, i = None, 0
    while i < len(lines):
        line = lines[i]
        if pending is not None and (not line.strip() or indent(line) < pending[0]):
            out += pending[1]
            pending = None
        if m := re.match(r"^  ([a-z0-9_]+):\s*$", line):  # a stage name may hold digits (search_bm25)
            stage = prefix + m.group(1)
        if stage in DVC and (m := re.match(r"^(\s+)deps:\s*$", line)):
            k, block = len(m.group(1)), []
            i += 1
            while i < len(lines) and lines[i].strip() and indent(lines[i]) > k:
                block.append(lines[i])
                i += 1
            item_indent = " " * (k + 2)
            others = [b for b in block if b.strip() != CODE_MARKER and not (b.strip().startswith("- ") and _is_code(b.strip()[2:]))]
            scripts = [b for b in block if b.strip().startswith("- stages/")]
            mods = [f"{item_indent}- {d}\n" for d in module_deps(stage)]
            pending = (k, [line, *others, f"{item_indent}{CODE_MARKER}\n", *scripts, *mods])
            continue
        out.append(line)
        i += 1
    if pending is not None:
        out += pending[1]
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the code deps of every stage, last in its deps (CODE_MARKER)")
    args = ap.parse_args()
    if args.write:
        for path in PIPELINES:
            write(path)
    for name in sorted(DVC):
        reads = section_reads(script_of(stage_spec(name)["cmd"]), stage_spec(name)["cmd"])
        print(f"{name}:\n  deps: {module_deps(name)}\n  params: {sorted(reads)}")


if __name__ == "__main__":
    main()
