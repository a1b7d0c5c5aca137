"""Starting a run that may be asked for again: with an ``Idempotency-Key`` header, the same
user's same key within ``RUN_IDEMPOTENCY_HOURS`` answers with the run the key first started
(a ``costapp.models.RunRequest``), so a client that lost the answer sends the start again
safely. A start that did not happen (an invalid document, the broker down) uses no key."""

import re
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from costapp.models import RunRequest, Scenario, SimulationRun
from costapp.runs import pipeline
from costapp.runs.store import BrokerUnavailable

KEY_HEADER = "Idempotency-Key"
KEY_PATTERN = re.compile(r"[\x21-\x7e]{1,255}")
"""A key: 1 to 255 printable ASCII characters, no space (a UUID, say)."""


class KeyRefused(ValueError):
    """The key is malformed, or was used for another scenario."""


def run_start_once(
    *,
    user: User,
    key: str,
    scenario: Scenario,
    seed: int | None,
    paths: int | None,
    reprice: bool,
) -> tuple[SimulationRun, bool]:
    """The run ``key`` started for ``user``, and False; or a new run of ``scenario``
    (``pipeline.run_create``), and True. Raises :class:`KeyRefused` for a malformed key or one
    that started a run of another scenario, and whatever ``run_create`` raises (the key then
    unused)."""
    if not KEY_PATTERN.fullmatch(key):
        raise KeyRefused("must be 1 to 255 printable ASCII characters without spaces")
    since = timezone.now() - timedelta(hours=settings.RUN_IDEMPOTENCY_HOURS)
    RunRequest.objects.filter(user=user, key=key, created__lt=since).delete()
    row: RunRequest | None = None
    try:
        with transaction.atomic():
            # of two requests with one key, the second waits here for the first to commit
            row, created = RunRequest.objects.get_or_create(
                user=user, key=key, defaults={"scenario": scenario}
            )
            if not created:
                if row.scenario_id != scenario.pk or row.run is None:
                    raise KeyRefused(
                        f"was used for scenario {row.scenario_id} within the last "
                        f"{settings.RUN_IDEMPOTENCY_HOURS} hours; use a new key"
                    )
                return row.run, False
            run = pipeline.run_create(scenario=scenario, seed=seed, paths=paths, reprice=reprice)
            row.run = run
            row.save(update_fields=["run"])
    except BrokerUnavailable:  # out of the commit: the run failed, the key is not spent on it
        if row is not None and row.pk is not None:
            RunRequest.objects.filter(pk=row.pk).delete()
        raise
    run.refresh_from_db()
    return run, True
