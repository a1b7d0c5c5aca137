"""Read-only links to a run for people without an account (``costapp.models.RunLink``): made
and revoked by the run's owner, working until revoked or expired (``RUN_LINK_LIFETIME``). The
key is shown once; only its SHA-256 is stored."""

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from costapp.models import RunLink, SimulationRun

KEY_BYTES = 24
"""Random bytes in a link's key (32 URL-safe characters)."""


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def run_link_create(*, run: SimulationRun, user: Any) -> tuple[RunLink, str]:
    """A new link to ``run`` (succeeded), made by ``user`` (the view checks they own it),
    expiring after ``RUN_LINK_LIFETIME``; returns the row and its key (not kept anywhere)."""
    if run.status != SimulationRun.Status.SUCCEEDED or run.result is None:
        raise ValueError(f"only a run that succeeded can be shared by a link ({run.status})")
    key = secrets.token_urlsafe(KEY_BYTES)
    link = RunLink.objects.create(
        run=run,
        key_sha256=_digest(key),
        created_by=user,
        expires=timezone.now() + settings.RUN_LINK_LIFETIME,
    )
    return link, key


def run_link_revoke(*, run: SimulationRun, link_id: int) -> bool:
    """Revoke ``run``'s link ``link_id`` from now on; whether there was one still working."""
    changed = run_links_working(run=run).filter(pk=link_id).update(revoked=timezone.now())
    return changed > 0


def run_links_working(*, run: SimulationRun) -> QuerySet[RunLink]:
    """``run``'s links neither revoked nor expired, newest first."""
    return RunLink.objects.filter(run=run, revoked__isnull=True, expires__gt=timezone.now())


def run_link_open(*, key: str) -> SimulationRun | None:
    """The succeeded run a working link's ``key`` opens, or None (unknown, revoked, expired)."""
    link = (
        RunLink.objects.filter(
            key_sha256=_digest(key),
            revoked__isnull=True,
            expires__gt=timezone.now(),
            run__status=SimulationRun.Status.SUCCEEDED,
        )
        .select_related("run", "run__scenario")
        .first()
    )
    return None if link is None else link.run
