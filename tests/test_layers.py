"""The import rules of docs/architecture.md, kept by import-linter's contracts (pyproject.toml,
``[tool.importlinter]``): one layers contract per package (``costapp``, ``hardware``,
``accounts``), the engine at the bottom of ``costapp``'s, and one inside each feature package of
``costapp`` and ``hardware`` (its pages and tasks over its services over its reads and rows, so
one page of a feature never imports another); the engine imports no Django and nothing
of the project outside it; ``hardware`` never imports ``costapp``; ``accounts`` imports neither;
outside the engine, code uses the names of ``costapp/tco/__init__.py``, never one of its
submodules. And no module imports another that imports it back, however far round (the import
graph, function-level imports included, walked with grimp, which import-linter is built on)."""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

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
    (tmp_path / "hardware" / "probe.py").write_text("import costapp.runs.pipeline\n")
    (tmp_path / "costapp" / "reports" / "probe.py").write_text(
        "from costapp.tco import montecarlo\nfrom costapp.tco.core import CATEGORIES\n"
    )
    # a lower layer importing a higher one, inside a function: the scenarios importing the runs
    (tmp_path / "costapp" / "scenarios" / "probe.py").write_text(
        "def later():\n    from costapp.runs import pipeline\n\n    return pipeline\n"
    )
    # inside a feature package: one page importing another, a parser importing the registry
    with (tmp_path / "costapp" / "runs" / "link_views.py").open("a") as module:
        module.write("\nfrom costapp.runs.views import run  # noqa\n")
    with (tmp_path / "hardware" / "sources" / "common.py").open("a") as module:
        module.write("\n\ndef later():\n    from hardware.sources import registry\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "costapp.tco.probe -> django" in result.stdout
    assert "hardware.probe -> costapp.runs.pipeline" in result.stdout
    assert "costapp.reports.probe -> costapp.tco.montecarlo" in result.stdout
    assert "costapp.reports.probe -> costapp.tco.core" in result.stdout
    assert "costapp.scenarios.probe -> costapp.runs.pipeline" in result.stdout
    # and hardware's exhaustive layers: the probe has no place in them
    assert "hardware.probe" in result.stdout.split("hardware's layers", 1)[1]
    assert "costapp.runs.link_views -> costapp.runs.views" in result.stdout
    assert "hardware.sources.common -> hardware.sources.registry" in result.stdout
    # the feature packages' exhaustive layers: the engine's, reports' and scenarios' probes have
    # no place in them
    for package in ("costapp.tco", "costapp.reports", "costapp.scenarios"):
        assert f"{package}.probe" in result.stdout.split(f"{package}: ", 1)[1]
    assert "10 broken" in result.stdout


def test_a_module_of_costapp_hardware_or_accounts_outside_every_layer_breaks_its_contract(
    tmp_path,
):
    # exhaustive: a new module must be given its place in the layers
    for package in ("costapp", "hardware", "accounts", "bench"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "costapp" / "newroom.py").write_text("")
    (tmp_path / "accounts" / "newroom.py").write_text("")
    (tmp_path / "hardware" / "newroom.py").write_text("")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "costapp.newroom" in result.stdout and "accounts.newroom" in result.stdout
    assert "hardware.newroom" in result.stdout
    assert "3 broken" in result.stdout


NOT_FEATURES = {"migrations", "management", "templatetags"}
"""Packages of costapp and hardware that are no feature of their own: the migrations, the
management commands and the template tags (each module stands alone, run by Django)."""


def test_every_feature_package_of_costapp_and_hardware_has_a_layers_contract_of_its_own():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layered = {
        container
        for contract in config["contracts"]
        if contract["type"] == "layers" and contract.get("exhaustive")
        for container in contract["containers"]
    }
    features = {
        f"{root}.{folder.name}"
        for root in ("costapp", "hardware")
        for folder in (ROOT / root).iterdir()
        if (folder / "__init__.py").exists() and folder.name not in NOT_FEATURES
    }
    assert len(features) >= 12  # the packages were found, not none
    assert sorted(features - layered) == []


def import_cycles(graph: grimp.ImportGraph, packages: tuple[str, ...]) -> list[list[str]]:
    """Every circle of imports between modules of ``packages``, as the shortest chain from a
    module back to itself (one circle per pair of modules that import each other, however far
    round); empty when the imports flow one way."""
    modules = sorted(m for package in packages for m in graph.find_descendants(package) | {package})
    cycles: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    for importer in modules:
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported == importer or not imported.startswith(packages):
                continue
            pair = frozenset((importer, imported))
            if pair in seen:
                continue
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                seen.add(pair)
                cycles.append([importer, *back])
    return cycles


PACKAGES = ("costapp", "hardware", "accounts")


def project_graph() -> grimp.ImportGraph:
    sys.path.insert(0, str(ROOT))
    try:
        return grimp.build_graph(*PACKAGES, cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))


def test_no_module_imports_another_that_imports_it_back():
    graph = project_graph()
    assert len(graph.modules) > 150  # the graph holds the packages, not nothing
    assert import_cycles(graph, PACKAGES) == []


def test_a_circle_of_imports_is_found_however_far_round_it_goes():
    graph = grimp.ImportGraph()
    for package in ("costapp", "costapp.runs", "hardware"):
        graph.add_module(package)
    for importer, imported in [
        ("costapp.runs.pipeline", "costapp.runs.store"),
        ("costapp.runs.store", "costapp.runs.blocks"),
        ("costapp.runs.blocks", "costapp.runs.pipeline"),  # back round to the start
        ("costapp.views", "costapp.runs.pipeline"),  # one way only
        ("hardware.views", "hardware.selectors"),
        ("hardware.selectors", "hardware.views"),  # straight back
    ]:
        graph.add_import(importer=importer, imported=imported)
    found = import_cycles(graph, ("costapp", "hardware"))
    assert [cycle[0] for cycle in found] == [
        "costapp.runs.blocks",
        "costapp.runs.pipeline",
        "costapp.runs.store",
        "hardware.selectors",
    ]
    assert found[-1] == ["hardware.selectors", "hardware.views", "hardware.selectors"]
    assert found[0] == [
        "costapp.runs.blocks",
        "costapp.runs.pipeline",
        "costapp.runs.store",
        "costapp.runs.blocks",
    ]
