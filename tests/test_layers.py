"""The import rules of docs/architecture.md, kept by import-linter's contracts (pyproject.toml,
``[tool.importlinter]``): the engine imports no Django and nothing of the project outside it;
``hardware`` never imports ``costapp``; ``accounts`` imports neither; outside the engine, code
uses the names of ``costapp/tco/__init__.py``, never one of its submodules."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )


def test_the_project_keeps_every_import_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_contracts_catch_a_forbidden_import(tmp_path):
    # A copy of the packages (never the source tree itself) with one import that breaks a rule.
    for package in ("costapp", "hardware", "accounts", "bench"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "costapp" / "tco" / "probe.py").write_text("from django.db import models\n")
    (tmp_path / "hardware" / "probe.py").write_text("import costapp.services\n")
    (tmp_path / "costapp" / "probe.py").write_text(
        "from costapp.tco import montecarlo\nfrom costapp.tco.core import CATEGORIES\n"
    )
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "costapp.tco.probe -> django" in result.stdout
    assert "hardware.probe -> costapp.services" in result.stdout
    assert "costapp.probe -> costapp.tco.montecarlo" in result.stdout
    assert "costapp.probe -> costapp.tco.core" in result.stdout
    assert "3 broken" in result.stdout
