"""docs/codebase.md cannot rot silently: every path and every ``package.module.name`` it cites in
backticks must exist in the project."""

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODEBASE = ROOT / "docs" / "codebase.md"

PACKAGES = ("costapp", "hardware", "accounts", "bench", "tests")
NAME = re.compile(rf"^(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
FILE_SUFFIXES = (".py", ".md", ".csv", ".toml", ".json", ".html", ".yml", ".txt")


def citations(text: str) -> tuple[list[str], list[str]]:
    """The paths and the dotted names cited in backticks in ``text``.

    A path is a span without spaces that names a folder or file of the project: it has a ``/``
    (and does not start with one: that is a URL) or ends with a file suffix. A dotted name starts
    with one of the project's packages.
    """
    paths: list[str] = []
    names: list[str] = []
    for span in re.findall(r"`([^`\n]+)`", text):
        if " " in span or span.startswith("/"):
            continue
        if NAME.match(span):
            names.append(span)
        elif "/" in span or span.endswith(FILE_SUFFIXES):
            paths.append(span)
    return paths, names


def path_problem(path: str) -> str | None:
    if "*" in path:
        return None if any(ROOT.glob(path)) else f"{path}: no file matches"
    return None if (ROOT / path).exists() else f"{path}: no such file or folder"


def name_problem(name: str) -> str | None:
    """None when ``name`` is a module, or an attribute reached from the longest importable module."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        module_name = ".".join(parts[:split])
        try:
            target = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module_name.startswith(exc.name):
                continue  # this prefix is not a module: try a shorter one
            raise
        for attribute in parts[split:]:
            if not hasattr(target, attribute):
                return f"{name}: {module_name} has no {'.'.join(parts[split:])}"
            target = getattr(target, attribute)
        return None
    return f"{name}: no such module"


def problems(text: str) -> list[str]:
    paths, names = citations(text)
    found = [path_problem(p) for p in paths] + [name_problem(n) for n in names]
    return [problem for problem in found if problem is not None]


def test_every_path_and_name_cited_in_the_codebase_map_exists():
    assert problems(CODEBASE.read_text(encoding="utf-8")) == []


def test_the_codebase_map_cites_enough_to_be_checked():
    # A parser that stopped finding citations would pass the test above without checking anything.
    paths, names = citations(CODEBASE.read_text(encoding="utf-8"))
    assert len(set(paths)) >= 40
    assert len(set(names)) >= 80
    assert "costapp.tco.cloud.rented_compute_usd" in names
    assert "hardware/data/README.md" in paths


def test_the_check_catches_what_does_not_exist():
    text = (
        "`costapp/tco/nowhere.py` `docs/*.nothing` `costapp.tco.engine.no_such_function` "
        "`costapp.tco.no_such_module.simulate` `hardware.services.SQL_BATCH.no_attribute` "
        "`costapp/tco/engine.py` `costapp.tco.engine.simulate` `docs/*.md` `costapp.tco` "
        "`GET /api/v1/runs/{id}/` `/healthz` `uv run pytest`"
    )
    assert problems(text) == [
        "costapp/tco/nowhere.py: no such file or folder",
        "docs/*.nothing: no file matches",
        "costapp.tco.engine.no_such_function: costapp.tco.engine has no no_such_function",
        "costapp.tco.no_such_module.simulate: costapp.tco has no no_such_module.simulate",
        "hardware.services.SQL_BATCH.no_attribute: hardware.services has no SQL_BATCH.no_attribute",
    ]


def test_the_readme_links_the_codebase_map():
    assert "(docs/codebase.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
