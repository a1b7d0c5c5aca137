"""The example scenarios ``manage.py demo`` loads and runs, so the dashboard is full on a fresh
machine: the shipped example scenarios (tests/tco/scenarios/*.json) and the cases of the claims
(costapp/data/claims/), as shared scenarios of the demo user, each run once."""

import json
import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from costapp.models import Scenario, SimulationRun
from costapp.reports.claims import CLAIMS
from costapp.runs import pipeline
from costapp.scenarios import services
from costapp.tco import ScenarioError

logger = logging.getLogger(__name__)

EXAMPLES_DIR = Path(settings.BASE_DIR) / "tests" / "tco" / "scenarios"


def scenario_name_fitted(name: str) -> str:
    """``name`` as a scenario's name: whole when it fits the field, else cut at the last word
    that fits, with an ellipsis (the document keeps the whole name)."""
    most = Scenario._meta.get_field("name").max_length or len(name)
    if len(name) <= most:
        return name
    return name[: most - 1].rsplit(" ", 1)[0].rstrip(" ,:;(") + "…"


FORMAT_1_3_NOTES = {
    "llm-train-and-serve.json": (
        "Format 1.3 changes one figure: the GPU cloud 1-year commitment of 96 GPUs cannot run "
        "the 128-GPU pre-training at all (a run holds its whole cluster), so that work is bought "
        "on demand beyond the commitment, and its total rises from $5,550,336 to $6,591,297."
    ),
    "serve-70b-host-or-api.json": (
        "Format 1.3 changes one figure slightly: the owned server's power follows the work its "
        "GPUs do at the busiest hours, and its total moves from $376,044 to $376,036."
    ),
    "own-commit-rent-mix.json": (
        "Format 1.3's mix: own a base of servers, commit to a middle, rent the rest, as one "
        "plan, sized jointly."
    ),
}
"""What format 1.3 changes in a shipped example's figures, said on its page (the examples the
new rules leave alone carry no note)."""


def demo_documents() -> list[tuple[str, str, dict[str, Any]]]:
    """(name, description, document) of every example scenario and claim case, in order."""
    found: list[tuple[str, str, dict[str, Any]]] = []
    for path in sorted(EXAMPLES_DIR.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        name = str(document.get("name") or path.stem) if isinstance(document, dict) else path.stem
        description = f"Shipped example scenario {path.name}."
        if path.name in FORMAT_1_3_NOTES:
            description += f" {FORMAT_1_3_NOTES[path.name]}"
        if scenario_name_fitted(name) != name:
            description += f" {name}."
        found.append((scenario_name_fitted(name), description, document))
    for claim in CLAIMS:
        for case in claim.cases:
            found.append(
                (
                    f"Claim “{claim.claim}”: {case.label}",
                    f"Tests the claim “{claim.claim}”. {claim.verdict}",
                    claim.document(case),
                )
            )
    return found


def demo_scenarios_load(*, user: Any) -> tuple[int, int]:
    """Save each example as a shared scenario of ``user`` (found again by owner and name, its
    document brought up to date) and run those without a succeeded run of the current document.
    Runs go through ``costapp.runs.pipeline.run_create`` (in-process on the embedded default). Returns
    (scenarios created, runs started); a second call creates and runs nothing new."""
    created = started = 0
    for name, description, document in demo_documents():
        try:
            with transaction.atomic():
                scenario = Scenario.objects.filter(owner=user, name=name).first()
                if scenario is None:
                    scenario = services.scenario_create(
                        owner=user,
                        name=name,
                        description=description,
                        shared=True,
                        document=document,
                    )
                    created += 1
                elif scenario.document != document:
                    services.scenario_update(scenario=scenario, document=document)
        except ScenarioError as exc:  # e.g. a catalog without a GPU the example names
            logger.warning("demo scenario %r skipped: %s", name, exc)
            continue
        sha = services.document_sha256(scenario.document)
        done = scenario.runs.filter(
            document_sha256=sha,
            status__in=[*SimulationRun.ACTIVE, SimulationRun.Status.SUCCEEDED],
        ).exists()
        if done:
            continue
        run = pipeline.run_create(scenario=scenario)
        started += 1
        logger.info("demo scenario %r: run %s %s", name, run.pk, run.status)
    return created, started
