"""The catalog's reads: the current prices as of a day."""

from datetime import timedelta

import pytest
from django.utils import timezone

from hardware.models import InstancePrice
from hardware.selectors import current_prices

pytestmark = pytest.mark.django_db


def test_a_day_before_any_price_was_seen_has_no_current_price(catalog):
    yesterday = (timezone.now() - timedelta(days=1)).date()
    assert not current_prices(as_of=yesterday).exists()
    assert current_prices(as_of=timezone.now().date()).count() == 1281  # as test_load_catalog


def test_current_prices_sort_and_filter_on_usd_per_gpu_hour(catalog):
    cheapest = current_prices().filter(offer__gpu__slug="h100-sxm").order_by("usd_per_gpu_hour")
    values = list(cheapest.values_list("usd_per_gpu_hour", flat=True))
    assert values == sorted(values) and len(values) > 50
    assert all(v > 0 for v in values)
    assert not current_prices().filter(usd_per_gpu_hour__gt=100).exists()


def test_current_prices_hold_one_row_per_offer_region_and_billing(catalog):
    keys = list(current_prices().values_list("offer", "region", "billing"))
    assert len(keys) == len(set(keys)) == InstancePrice.objects.count()
