"""Which catalog values were edited by hand: read from their django-simple-history records.

Every write a load or a refresh makes carries a change reason starting with one of
``FEED_REASONS``; any other latest history record (an admin or API edit, with its user, or a
write without a reason) marks the value as set by hand, until a feed writes it again through
a reviewed refresh.
"""

from collections.abc import Iterable

from django.db.models import Model

FEED_REASONS = ("loaded from ", "not in ", "vanished from ", "approved from ")


def is_feed_reason(reason: str | None) -> bool:
    """Whether a history record's change reason is that of a load or a refresh."""
    return bool(reason) and reason.startswith(FEED_REASONS)  # type: ignore[union-attr]


def hand_edited_ids(*, model: type[Model], ids: Iterable[int]) -> set[int]:
    """The ids among ``ids`` of ``model`` (a model with ``history``) whose latest history record
    was not written by a load or a refresh.
    """
    wanted = list(set(ids))
    history = model.history.model  # type: ignore[attr-defined]
    latest: dict[int, tuple] = {}
    for start in range(0, len(wanted), 500):
        records = history.objects.filter(id__in=wanted[start : start + 500]).values_list(
            "id", "history_date", "history_id", "history_change_reason"
        )
        for pk, when, history_id, reason in records:
            if pk not in latest or (when, history_id) > latest[pk][:2]:
                latest[pk] = (when, history_id, reason)
    return {pk for pk, (_, _, reason) in latest.items() if not is_feed_reason(reason)}
