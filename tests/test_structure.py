"""The package's structure holds: no import cycle, a small top level (tools/check_imports.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOL = Path(__file__).resolve().parents[1] / "tools" / "check_imports.py"


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_imports", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("check_imports", module)
    spec.loader.exec_module(module)
    return module


def test_no_import_cycle_and_a_small_top_level() -> None:
    assert _checker().problems() == []


def test_the_checker_finds_a_cycle_and_a_crowded_top_level(tmp_path: Path) -> None:
    checker = _checker()
    root = tmp_path / "episeg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("from episeg.a import x\n")
    (root / "a.py").write_text("def f():\n    from episeg.sub import b\n")
    (root / "sub" / "__init__.py").write_text("from episeg.sub.b import y\n")
    (root / "sub" / "b.py").write_text("from episeg import a\n")
    (root / "testing.py").write_text("")
    (root / "lib.py").write_text(
        '"""\n>>> from episeg.testing import x\n"""\nimport episeg.testing\n'
    )
    for i in range(12):
        (root / f"m{i}.py").write_text("")
    found = checker.problems(root)
    assert found[0] == "import cycle: episeg.a <-> episeg.sub.b"
    assert found[1] == "library module episeg.lib imports episeg.testing"
    assert found[2].startswith("16 modules directly in episeg/ (at most 12)")
