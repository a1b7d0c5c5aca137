"""Celery tasks: thin, idempotent, each calls a service."""

from typing import Any

from celery import shared_task

from costapp import services


@shared_task(name="costapp.montecarlo_blocks", acks_late=True)
def montecarlo_blocks(
    *, inputs: dict[str, Any], gpus: dict[str, Any], block_indices: list[int]
) -> dict[str, Any]:
    """Cost some Monte Carlo blocks of a normalised scenario (pure: safe to redeliver)."""
    return services.montecarlo_blocks_compute(inputs=inputs, gpus=gpus, block_indices=block_indices)
