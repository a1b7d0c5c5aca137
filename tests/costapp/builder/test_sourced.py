"""The builder and format 1.2's catalog references: each sourced assumption offered beside the
field it fills (the reference written, not the number), the hosted models' token prices as a
picker of ``api`` options, and no GPU fields on an ``api`` option."""

import pytest
from django.utils import timezone

from costapp.builder import aggregate as builder_aggregate
from costapp.builder import catalog as builder_catalog
from costapp.builder import documents as builder_documents
from costapp.scenarios.services import scenario_simulate

pytestmark = pytest.mark.django_db

FIREWORKS = {
    "provider": "fireworks",
    "model": "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct",
}


def document() -> dict:
    return {
        "name": "Buy or by the token",
        "workloads": [
            {"type": "inference", "name": "chat", "gpu": "h100-sxm", "params_billion": 70,
             "tokens_per_second": 200},
        ],
        "options": [
            {"type": "api", "name": "Fireworks", "token_price": FIREWORKS},
            {
                "type": "on_prem",
                "name": "Buy",
                "servers": 1,
                "capex_usd_per_server": 270_000,
                "server_kw": {"assumption": "dgx_h100_max_kw"},
                "colo_usd_per_kw_month": {"assumption": "colo_usd_per_kw_month"},
                "staff_usd_per_month": {"assumption": "engineer_usd_per_year"},
                "gpu_mtbf_hours": {"assumption": "gpu_mtbf_hours_h100"},
            },
        ],
    }  # fmt: skip


def builder_of(data, choices):
    return builder_aggregate.ScenarioBuilder(data, catalog=choices)


def test_each_assumption_is_offered_beside_its_field_with_value_source_day_and_confidence(catalog):
    choices = builder_catalog.catalog_choices(today=timezone.localdate())
    colo = dict(choices.assumptions["on_prem.colo_usd_per_kw_month"])
    label = colo["colo_usd_per_kw_month"]
    assert label.startswith("$184.06 per kW-month · CBRE North America Data Center Trends H2 2024")
    assert "stated 2024-12-31" in label and "high confidence" in label
    assert dict(choices.assumptions["option.gpu_mtbf_hours"])["gpu_mtbf_hours_h100"]
    staff = dict(choices.assumptions["on_prem.staff_usd_per_month"])
    assert list(staff) == ["engineer_usd_per_year"]  # one choice: the rule over both rows
    assert staff["engineer_usd_per_year"].startswith("Staff rule: servers × $200,000")
    data, leftovers = builder_documents.document_form_data(document())
    assert leftovers == []
    form = builder_of(data, choices).options.forms[1]
    names = list(form.fields)
    assert (
        names.index("colo_usd_per_kw_month_assumption") == names.index("colo_usd_per_kw_month") + 1
    )
    assert form.shows("colo_usd_per_kw_month_assumption")
    assert (
        "pue_assumption" in form.fields and "burst_usd_per_gpu_hour_assumption" not in form.fields
    )


def test_a_picked_assumption_is_written_as_the_reference_and_the_document_round_trips(catalog):
    choices = builder_catalog.catalog_choices(today=timezone.localdate())
    data, _leftovers = builder_documents.document_form_data(document())
    builder = builder_of(data, choices)
    assert builder.is_valid(), builder.options.errors
    assert builder.document() == document()
    data["options-1-pue_assumption"] = "pue_new_gpu_colo"
    again = builder_of(data, choices)
    assert again.is_valid()
    assert again.document()["options"][1]["pue"] == {"assumption": "pue_new_gpu_colo"}
    data["options-1-pue"] = "1.4"  # a typed number wins over the picker
    typed = builder_of(data, choices)
    assert typed.is_valid()
    assert typed.document()["options"][1]["pue"] == 1.4
    result = scenario_simulate(document=again.document())
    assert result["inputs"]["options"][1]["pue"] == 1.25
    assert result["inputs"]["options"][1]["colo_usd_per_kw_month"] == 184.06


def test_a_reference_the_catalog_lacks_is_kept_and_marked(catalog):
    choices = builder_catalog.catalog_choices(today=timezone.localdate())
    changed = document()
    changed["options"][1]["pue"] = {"assumption": "no_such_key"}
    data, _leftovers = builder_documents.document_form_data(changed)
    builder = builder_of(data, choices)
    assert builder.is_valid()
    assert builder.document()["options"][1]["pue"] == {"assumption": "no_such_key"}
    labels = dict(builder.options.forms[1].fields["pue_assumption"].choices)
    assert "not in the catalog" in labels["no_such_key"]


def test_an_api_option_picks_a_token_price_and_shows_no_gpu_fields(catalog):
    choices = builder_catalog.catalog_choices(today=timezone.localdate())
    assert len(choices.token_prices) >= 30
    labels = dict(choices.token_prices)
    fireworks = labels[builder_catalog.token_price_value(FIREWORKS["provider"], FIREWORKS["model"])]
    assert "0.9 USD per million output tokens, 0.9 input" in fireworks
    assert "date unknown" in fireworks and "STALE" in fireworks
    data, _leftovers = builder_documents.document_form_data(document())
    form = builder_of(data, choices).options.forms[0]
    assert not form.shows("gpu") and not form.shows("throughput_factor")
    assert form.shows("token_price") and form.shows("usd_per_million_tokens")
    names = [name for name in form.fields if form.shows(name)]
    assert names[:3] == ["type", "name", "token_price"]  # where the price comes from first
    assert builder_of(data, choices).options.forms[1].shows("gpu")
