"""Catalog references in scenario documents: ``offer``, ``quote`` and ``egress_provider``
(docs: scenario-format.md), resolved from :class:`~costapp.tco.CatalogRefs` looked up beforehand.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from costapp.tco import CatalogRefs

from .documents import (
    CATALOG,
    OFFER,
    cloud,
    doc,
    ok,
    problems,
    with_option,
)

# --- catalog references -----------------------------------------------------------------------


def offer_option(**fields: Any) -> dict[str, Any]:
    return with_option(type="cloud", offer=OFFER, **fields)


@pytest.mark.parametrize(
    ("fields", "price"),
    [
        ({}, 6.88),
        ({"billing": "spot"}, 2.5),
        ({"billing": "committed", "term_months": 12}, 4.8),
        ({"billing": "committed", "term_months": 36}, 3.9),
        ({"billing": "committed"}, 3.9),  # term_months defaults to the 36-month horizon
    ],
    ids=["on_demand", "spot", "commit 1y", "commit 3y", "commit default term"],
)
def test_an_offer_supplies_the_price_of_the_billing(fields, price):
    option = ok(offer_option(**fields), CATALOG).document["options"][0]
    assert option["usd_per_gpu_hour"] == price
    assert option["gpu"] == "h100-sxm"
    assert option["offer"] == OFFER


def test_an_offer_supplies_the_on_demand_rate_of_a_committed_option():
    option = ok(offer_option(billing="committed", term_months=12), CATALOG).document["options"][0]
    assert option["on_demand_usd_per_gpu_hour"] == 6.88


def test_an_offer_supplies_its_provider_egress_tiers():
    option = ok(offer_option(), CATALOG).document["options"][0]
    assert option["egress_tiers"] == [
        {"up_to_tb": 0.1, "usd_per_gb": 0.0},
        {"up_to_tb": 10.0, "usd_per_gb": 0.09},
        {"up_to_tb": None, "usd_per_gb": 0.05},
    ]
    assert option["egress_usd_per_gb"] is None


def test_explicit_fields_win_over_what_the_offer_supplies():
    option = ok(
        offer_option(
            billing="committed",
            term_months=12,
            usd_per_gpu_hour=4.0,
            on_demand_usd_per_gpu_hour=7.5,
            egress_usd_per_gb=0.02,
            gpu="h100-sxm",
        ),
        CATALOG,
    ).document["options"][0]
    assert option["usd_per_gpu_hour"] == 4.0
    assert option["on_demand_usd_per_gpu_hour"] == 7.5
    assert option["egress_usd_per_gb"] == 0.02 and option["egress_tiers"] is None


def test_a_committed_term_other_than_one_three_or_five_years_needs_an_explicit_price():
    assert problems(offer_option(billing="committed", term_months=24), CATALOG) == [
        (
            "options[0].usd_per_gpu_hour",
            "is required for a 24-month term: the offer has committed prices for 12-, 36- and 60-month terms only",
        )
    ]
    option = ok(offer_option(billing="committed", term_months=24, usd_per_gpu_hour=4.2), CATALOG)
    assert option.document["options"][0]["usd_per_gpu_hour"] == 4.2


def test_an_offer_without_a_price_for_the_billing_needs_an_explicit_price():
    offer = {"provider": "lambda", "instance": "gpu_8x_a100", "region": "us-west-1"}
    assert problems(with_option(type="cloud", offer=offer, billing="spot"), CATALOG) == [
        ("options[0].usd_per_gpu_hour", "is required: the offer has no spot price")
    ]


def test_a_gpu_contradicting_the_offer_is_an_error():
    assert problems(offer_option(gpu="a100-sxm-80gb"), CATALOG) == [
        ("options[0].gpu", 'contradicts the offer\'s GPU "h100-sxm"')
    ]


def test_an_offer_not_in_the_catalog_is_an_error_at_the_offer():
    offer = {**OFFER, "region": "eu-west-1"}
    assert problems(with_option(type="cloud", offer=offer), CATALOG) == [
        ("options[0].offer", "no such offer in the catalog: aws p5.48xlarge in eu-west-1")
    ]
    # even when the option gives everything the offer would supply
    assert problems(
        with_option(type="cloud", offer=offer, usd_per_gpu_hour=1, gpu="h100-sxm"), CATALOG
    ) == [("options[0].offer", "no such offer in the catalog: aws p5.48xlarge in eu-west-1")]


def test_an_offer_must_name_provider_instance_and_region():
    assert problems(
        with_option(type="cloud", offer={"provider": "aws", "instance": "p5"}), CATALOG
    ) == [("options[0].offer.region", "is required")]


def test_an_egress_provider_is_resolved_into_tiers_and_dropped():
    option = ok(cloud(egress_provider="gcp"), CATALOG).document["options"][0]
    assert "egress_provider" not in option
    assert option["egress_tiers"] == [
        {"up_to_tb": 1.0, "usd_per_gb": 0.12},
        {"up_to_tb": None, "usd_per_gb": 0.08},
    ]


def test_an_egress_provider_wins_over_the_offer_tiers():
    option = ok(offer_option(egress_provider="gcp"), CATALOG).document["options"][0]
    assert option["egress_tiers"][0] == {"up_to_tb": 1.0, "usd_per_gb": 0.12}


def test_an_unknown_egress_provider_is_an_error():
    assert problems(cloud(egress_provider="ovh"), CATALOG) == [
        ("options[0].egress_provider", 'unknown egress provider "ovh"')
    ]


def test_a_dedicated_quote_supplies_its_fields_and_explicit_fields_win():
    option = ok(with_option(type="dedicated", quote=7, setup_usd=0), CATALOG).document["options"][0]
    assert option["gpu"] == "h200"
    assert option["usd_per_server_month"] == 19000.0
    assert option["setup_usd"] == 0.0
    assert option["included_egress_tb"] == 20.0 and option["overage_usd_per_tb"] == 3.0
    assert option["quote"] == 7


def test_a_purchase_quote_supplies_its_fields_and_explicit_fields_win():
    option = ok(with_option(type="on_prem", quote=9, server_kw=9.0), CATALOG).document["options"][0]
    assert option["gpu"] == "mi300x"
    assert option["capex_usd_per_server"] == 240000.0
    assert option["server_kw"] == 9.0
    assert option["lead_time_months"] == 3 and option["support_fraction_per_year"] == 0.08


def test_a_gpu_contradicting_the_quote_is_an_error():
    assert problems(with_option(type="dedicated", quote=7, gpu="h100-sxm"), CATALOG) == [
        ("options[0].gpu", 'contradicts the quote\'s GPU "h200"')
    ]


def test_a_quote_not_in_the_catalog_is_an_error_at_the_quote():
    assert problems(with_option(type="on_prem", quote=7), CATALOG) == [
        ("options[0].quote", "no such quote in the catalog: 7")
    ]


def test_a_quoted_lead_time_must_be_shorter_than_the_horizon():
    assert problems(
        doc(horizon_months=3, options=[{"type": "on_prem", "name": "p", "quote": 9}]), CATALOG
    ) == [("options[0].lead_time_months", "must be less than horizon_months (3)")]


def test_without_a_catalog_a_reference_that_must_supply_a_field_is_an_error():
    assert problems(with_option(type="cloud", offer=OFFER)) == [
        ("options[0].offer", "cannot be resolved without the catalog: give gpu, usd_per_gpu_hour")
    ]
    assert problems(cloud(egress_provider="gcp")) == [
        ("options[0].egress_provider", "cannot be resolved without the catalog")
    ]


def test_a_resolved_document_normalises_to_itself_with_or_without_the_catalog():
    options = [
        {"type": "cloud", "name": "od", "offer": OFFER},
        {
            "type": "cloud",
            "name": "c",
            "offer": OFFER,
            "billing": "committed",
            "term_months": 12,
            "egress_provider": "gcp",
        },
        {"type": "dedicated", "name": "d", "quote": 7},
        {"type": "on_prem", "name": "p", "quote": 9, "financing": {"apr": 0.05, "term_months": 36}},
    ]
    first = ok(doc(options=options), CATALOG).document
    assert ok(copy.deepcopy(first), CATALOG).document == first
    assert ok(copy.deepcopy(first)).document == first


def test_catalog_tiers_that_break_the_tier_rules_are_reported_at_the_reference():
    catalog = CatalogRefs(egress_providers={"odd": [{"up_to_tb": 10, "usd_per_gb": 0.09}]})
    assert problems(cloud(egress_provider="odd"), catalog) == [
        (
            "options[0].egress_provider",
            "the provider's tiers: tier 0's up_to_tb must be null: the last tier has no bound",
        )
    ]


def test_an_offer_naming_a_gpu_missing_from_the_gpu_table_is_an_error_at_the_offer():
    catalog = CatalogRefs(
        offers={("x", "y", "z"): {"gpu": "h1000", "usd_per_gpu_hour": {"on_demand": 1.0}}}
    )
    offer = {"provider": "x", "instance": "y", "region": "z"}
    assert problems(with_option(type="cloud", offer=offer), catalog) == [
        ("options[0].offer", 'the offer names an unknown GPU "h1000"')
    ]


def test_without_a_catalog_a_quote_with_missing_fields_is_an_error_at_the_quote():
    assert problems(with_option(type="on_prem", quote=9, gpu="mi300x", server_kw=8)) == [
        ("options[0].quote", "cannot be resolved without the catalog: give capex_usd_per_server")
    ]
