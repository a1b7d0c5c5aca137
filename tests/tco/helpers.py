"""Shared helpers of the engine tests: the GPU figures, scenario files, and normalisation."""

from __future__ import annotations

import importlib
import io
import json
import subprocess
import sys
import tarfile
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from costapp.tco.validation import normalize
from hardware.gpu_table import engine_figures, read_gpu_table

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
EXPECTED = SCENARIOS / "expected"


@cache
def gpu_figures() -> dict[str, dict[str, float | None]]:
    """The engine's figures of every GPU in the project's table, by slug."""
    return {row.slug: engine_figures(row) for row in read_gpu_table()}


def scenario(name: str) -> dict[str, Any]:
    """One of the shipped scenario documents, by file stem."""
    return json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))


def expected(name: str) -> dict[str, Any]:
    """The independently computed figures of a shipped scenario, by file stem."""
    return json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))


def scenario_names() -> list[str]:
    """Stems of the shipped scenarios that have expected figures."""
    return sorted(path.stem for path in EXPECTED.glob("*.json"))


def normalized(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The normalised document and its warnings."""
    result = normalize(document, gpu_figures())
    return result.document, list(result.warnings)


def steady(gpus: float = 8, utilization: float = 1.0, **fields: Any) -> dict[str, Any]:
    """A steady workload on H100s."""
    return {
        "type": "steady",
        "name": "fleet",
        "gpu": "h100-sxm",
        "gpus": gpus,
        "utilization": utilization,
        **fields,
    }


def document(
    workloads: list[dict[str, Any]], options: list[dict[str, Any]], **top: Any
) -> dict[str, Any]:
    """A scenario document with a name and the given workloads, options and top-level fields."""
    return {"name": "test", "workloads": workloads, "options": options, **top}


def run(doc: dict[str, Any]) -> dict[str, Any]:
    """The result document of a (valid) scenario document."""
    from costapp.tco.engine import simulate

    return simulate(doc, gpu_figures())


def plan_of(doc: dict[str, Any]) -> Any:
    """The plan of a (valid) scenario document."""
    from costapp.tco.core import plan_build

    inputs, _ = normalized(doc)
    return plan_build(inputs, gpu_figures())


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A result's options by name."""
    return {option["name"]: option for option in result["options"]}


ROOT = Path(__file__).resolve().parents[2]


def archived_engine(folder: Path, commit: str, package: str, version: str) -> ModuleType:
    """The project's own engine as it stood at ``commit`` (``git archive`` of ``costapp/tco``
    written into ``folder``), imported as the package ``package``; its ``ENGINE_VERSION`` must be
    ``version``. A clone without that commit fails here rather than skip."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "costapp/tco"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "costapp" / "tco").rename(folder / package)
    sys.path.insert(0, str(folder))
    try:
        engine = importlib.import_module(f"{package}.engine")
    finally:
        sys.path.remove(str(folder))
    assert version == engine.ENGINE_VERSION
    return engine
