"""The import rules of docs/architecture.md, checked on the source text.

`costapp.tco` (the engine) imports neither Django nor anything of the project outside itself;
`hardware` (the catalog) never imports `costapp`.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


ENGINE_ALLOWED_ROOTS = {"numpy", "costapp"}


@pytest.mark.parametrize("path", sources("costapp/tco"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_engine_imports_only_the_standard_library_numpy_and_itself(path):
    import sys

    for name in imported_modules(path):
        root = name.split(".")[0]
        if root == "costapp":
            assert name.startswith("costapp.tco"), f"{path}: imports {name}"
        else:
            assert root in ENGINE_ALLOWED_ROOTS or root in sys.stdlib_module_names, (
                f"{path}: imports {name}"
            )


@pytest.mark.parametrize("path", sources("hardware"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_catalog_never_imports_the_cost_side(path):
    for name in imported_modules(path):
        assert name.split(".")[0] != "costapp", f"{path}: imports {name}"


def test_the_rule_check_sees_a_forbidden_import(tmp_path, monkeypatch):
    module = ROOT / "costapp" / "tco" / "_probe_for_layer_test.py"
    module.write_text("from django.db import models\nfrom ..models import Scenario\n")
    try:
        names = imported_modules(module)
    finally:
        module.unlink()
    assert "django.db" in names and "costapp.models" in names
