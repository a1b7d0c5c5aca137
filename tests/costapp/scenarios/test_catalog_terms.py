"""The catalog's figures as the engine takes them (costapp/scenarios/catalog.py): a cloud offer's prices
per GPU-hour and egress tiers, a quote's terms per server, as floats, with their standing."""

from datetime import date

import pytest

from costapp.scenarios.catalog import (
    dedicated_quote_terms,
    offer_terms,
    provider_egress_tiers,
    purchase_quote_terms,
)
from hardware.models import DedicatedQuote, PurchaseQuote
from tests.hardware.factories import DedicatedQuoteFactory, PurchaseQuoteFactory

pytestmark = pytest.mark.django_db

AWS_TIERS = [
    {"up_to_tb": 0.1, "usd_per_gb": 0.0},
    {"up_to_tb": 10.0, "usd_per_gb": 0.09},
    {"up_to_tb": 50.0, "usd_per_gb": 0.085},
    {"up_to_tb": 150.0, "usd_per_gb": 0.07},
    {"up_to_tb": None, "usd_per_gb": 0.05},
]


def test_aws_p5_48xlarge_in_us_east_1_resolves_to_its_per_gpu_prices_and_egress(catalog):
    resolved = offer_terms(provider="aws", instance="p5.48xlarge", region="us-east-1")
    standing = resolved.pop("standing")
    assert resolved == {
        "gpu": "h100-sxm",
        "gpu_count": 8,
        "usd_per_gpu_hour": {"on_demand": 6.88, "spot": 1.78075},
        "egress_tiers": AWS_TIERS,
    }
    assert standing["gpu_confirmed"] and standing["egress_known"]
    spot = standing["prices"]["spot"]
    assert spot["source"] == "skypilot-v8/aws.csv" and spot["stated_on"] == date(2025, 10, 1)
    assert spot["zone"] and spot["flag"] is None


def test_lambda_offer_resolves_with_free_egress_and_no_spot(catalog):
    resolved = offer_terms(provider="lambda", instance="gpu_8x_h100_sxm5", region="us-east-1")
    assert resolved["usd_per_gpu_hour"] == {"on_demand": 2.99}
    assert resolved["egress_tiers"] == [{"up_to_tb": None, "usd_per_gb": 0.0}]


def test_a_marketplace_offer_without_egress_tiers_resolves_with_none(catalog):
    resolved = offer_terms(
        provider="vast", instance="1x-H100_NVL-32-65536", region="Bulgaria, BG, EU"
    )
    assert resolved["gpu"] == "h100-nvl" and resolved["egress_tiers"] is None
    assert resolved["usd_per_gpu_hour"] == {"on_demand": 1.87}


def test_an_unknown_offer_or_region_resolves_to_none(catalog):
    assert offer_terms(provider="aws", instance="p9.huge", region="us-east-1") is None
    assert offer_terms(provider="aws", instance="p5.48xlarge", region="mars-1") is None


def test_egress_tiers_come_in_rising_order_with_the_open_ended_tier_last(catalog):
    assert provider_egress_tiers("aws") == AWS_TIERS
    assert provider_egress_tiers("oracle") == [
        {"up_to_tb": 10.24, "usd_per_gb": 0.0},
        {"up_to_tb": None, "usd_per_gb": 0.0085},
    ]
    assert provider_egress_tiers("shadeform") is None


def test_dedicated_quote_terms_are_floats_per_server(catalog):
    quote = DedicatedQuote.objects.get(reference="DEMO-D-H100-8")
    assert dedicated_quote_terms(quote_id=quote.pk) == {
        "gpu": "h100-sxm",
        "gpus_per_server": 8,
        "usd_per_server_month": 14600.0,
        "setup_usd": 0.0,
        "included_egress_tb": 100.0,
        "overage_usd_per_tb": 2.0,
        "term_months": 12,
        "standing": {
            "vendor": "Demo Dedicated Hosting A",
            "reference": "DEMO-D-H100-8",
            "status": "received",
            "valid_until": quote.valid_until,
            "is_demo": True,
        },
    }
    assert dedicated_quote_terms(quote_id=10**9) is None


def test_purchase_quote_terms_are_floats_per_server(catalog):
    quote = PurchaseQuote.objects.get(reference="DEMO-P-H100-8")
    assert purchase_quote_terms(quote_id=quote.pk) == {
        "gpu": "h100-sxm",
        "gpus_per_server": 8,
        "capex_usd_per_server": 265000.0,
        "server_kw": 10.2,
        "lead_time_months": 3,
        "support_fraction_per_year": 0.08,
        "standing": {
            "vendor": quote.vendor,
            "reference": "DEMO-P-H100-8",
            "status": quote.status,
            "valid_until": quote.valid_until,
            "is_demo": True,
        },
    }
    assert purchase_quote_terms(quote_id=10**9) is None


def test_quotes_share_their_standing_fields_through_the_abstract_base(db):
    dedicated = DedicatedQuoteFactory(status="expired", valid_until=date(2026, 1, 31))
    purchase = PurchaseQuoteFactory(gpu=dedicated.gpu)
    lease = dedicated_quote_terms(quote_id=dedicated.pk)["standing"]
    buy = purchase_quote_terms(quote_id=purchase.pk)["standing"]
    assert lease == {
        "vendor": "Test Hosting",
        "reference": dedicated.reference,
        "status": "expired",
        "valid_until": date(2026, 1, 31),
        "is_demo": False,
    }
    assert buy["status"] == "received" and buy["is_demo"] is False
    assert str(purchase) == f"Test Reseller {purchase.reference}: 8x GPU server"
