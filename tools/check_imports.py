"""Structure check for episeg: no import cycle between modules, a small top level.

Run it from the repository root::

    python tools/check_imports.py            # exit 0 when the structure holds
    python tools/check_imports.py --graph    # also print every module's episeg imports

It reads ``src/episeg`` with :mod:`ast` (nothing is imported), so it runs in
well under a second and needs no installed package. Two rules:

1. No import cycle between episeg modules. Every ``import episeg.x`` and
   ``from episeg.x import y`` counts, including ones under ``if TYPE_CHECKING:``
   and inside functions: a cycle hidden in a function body is still a cycle a
   reader has to untangle. A package's ``__init__`` re-exporting its own
   submodules does not count as the submodule depending on the package.
2. At most ``MAX_TOP_LEVEL`` modules directly in ``src/episeg/`` (``__main__``
   and ``__init__`` included, sub-packages excluded).
3. Library code does not import ``episeg.testing`` (test helpers for users'
   own tests); only ``episeg.testing`` itself and the ``episeg.benchmarks``
   tools (which start servers the way tests do) may. Doctests do not count.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src" / "episeg"
PACKAGE = "episeg"
MAX_TOP_LEVEL = 12
TESTING = f"{PACKAGE}.testing"
MAY_IMPORT_TESTING = (TESTING, f"{PACKAGE}.benchmarks")


def module_name(path: Path, root: Path = ROOT) -> str:
    """Dotted module name of a file under ``root`` (``__init__`` names the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(path: Path, modules: set[str], root: Path = ROOT) -> set[str]:
    """The episeg modules ``path`` imports (the longest known module for each name)."""
    current = module_name(path, root)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()

    def add(name: str) -> None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != current:
            found.add(name)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(node, current, is_package)
            if target.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                add(candidate if candidate in modules else target)
    # A package re-exporting its children is not a dependency of the child on it;
    # drop edges from a module to the package(s) that contain it.
    return {m for m in found if not current.startswith(m + ".")}


def build_graph(root: Path = ROOT) -> dict[str, set[str]]:
    files = sorted(root.rglob("*.py"))
    modules = {module_name(f, root) for f in files}
    return {module_name(f, root): imports_of(f, modules, root) for f in files}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(result)


def top_level_modules(root: Path = ROOT) -> list[str]:
    return sorted(p.name for p in root.glob("*.py"))


def problems(root: Path = ROOT) -> list[str]:
    """Every structure violation as one line; empty when the structure holds."""
    graph = build_graph(root)
    out = [f"import cycle: {' <-> '.join(c)}" for c in find_cycles(graph)]
    for module, deps in sorted(graph.items()):
        allowed = any(module == p or module.startswith(p + ".") for p in MAY_IMPORT_TESTING)
        bad = sorted(d for d in deps if d == TESTING or d.startswith(TESTING + "."))
        if bad and not allowed:
            out.append(f"library module {module} imports {', '.join(bad)}")
    top = top_level_modules(root)
    if len(top) > MAX_TOP_LEVEL:
        out.append(
            f"{len(top)} modules directly in {root.name}/ (at most {MAX_TOP_LEVEL}): "
            + ", ".join(top)
        )
    return out


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--graph", action="store_true", help="print the import graph")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.graph:
        for module, deps in sorted(build_graph().items()):
            print(f"{module}: {', '.join(sorted(deps)) or '-'}")
    found = problems()
    for line in found:
        print(line, file=sys.stderr)
    if not found:
        print(f"structure ok: no import cycle, {len(top_level_modules())} top-level modules")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
