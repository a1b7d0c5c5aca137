"""Selector: which current prices moved since a day, and by how much."""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import Q
from django.utils import timezone

from hardware.models import InstancePrice
from hardware.selectors import current_prices

Key = tuple[int, int, str]  # offer id, region id, billing


@dataclass(frozen=True)
class PriceChange:
    """One (offer, region, billing) whose current price differs from the one it had before
    ``since``: ``added`` (none then), ``changed`` or ``vanished`` (none now).

    ``change_usd_per_hour`` is new - old; ``change_ratio`` is (new - old) / old (``None`` when
    either side is missing or old is 0).
    """

    kind: str
    before: InstancePrice | None
    after: InstancePrice | None
    changed_at: datetime

    @property
    def price(self) -> InstancePrice:
        return self.after or self.before  # type: ignore[return-value]

    @property
    def change_usd_per_hour(self) -> Decimal | None:
        if self.before is None or self.after is None:
            return None
        return self.after.usd_per_hour - self.before.usd_per_hour

    @property
    def change_ratio(self) -> Decimal | None:
        change = self.change_usd_per_hour
        if change is None or self.before is None or not self.before.usd_per_hour:
            return None
        return (change / self.before.usd_per_hour).quantize(Decimal("0.000001"))


def _key(price: InstancePrice) -> Key:
    return (price.offer_id, price.region_id, price.billing)


def price_changes(*, since: date) -> list[PriceChange]:
    """Prices that moved from the start of ``since`` (inclusive, UTC) until now: the catalog at
    the end of the day before against the catalog now, for the keys that had a row added or
    vanished since. Ordered by provider, instance type, region and billing.
    """
    start = timezone.make_aware(datetime.combine(since, time.min), timezone.get_current_timezone())
    moved = InstancePrice.objects.filter(Q(first_seen__gte=start) | Q(vanished_at__gte=start))
    offer_ids = set(moved.values_list("offer_id", flat=True))
    if not offer_ids:
        return []
    before = {
        _key(p): p for p in current_prices(since - timedelta(days=1)).filter(offer_id__in=offer_ids)
    }
    after = {_key(p): p for p in current_prices().filter(offer_id__in=offer_ids)}
    changes = []
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        if old is not None and new is not None:
            if old.usd_per_hour == new.usd_per_hour:
                continue
            changes.append(PriceChange("changed", old, new, new.first_seen))
        elif new is not None:
            changes.append(PriceChange("added", None, new, new.first_seen))
        elif old is not None:
            changes.append(PriceChange("vanished", old, None, old.vanished_at or start))
    changes.sort(
        key=lambda c: (
            c.price.offer.provider.slug,
            c.price.offer.instance_type,
            c.price.region.code,
            c.price.billing,
        )
    )
    return changes
