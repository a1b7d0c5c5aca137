"""The charts of a result with an ``api`` option and tokens served (format 1.2): the cost per
million tokens compares every option; the charts an ``api`` option has no figure for (cost per
busy GPU-hour, cost against utilization) leave it out and say so."""

import copy

import pytest

from costapp.charts import result_charts
from costapp.scenarios.services import scenario_simulate
from costapp.tco import cost_curves

from ..scenarios.test_sources import owned, serving

pytestmark = pytest.mark.django_db


def charts_of(document):
    result = scenario_simulate(document=document)
    return result, {
        c.key: c for c in result_charts(result, cost_curves(result["inputs"], result["gpus"]))
    }


def test_the_cost_per_million_tokens_shows_every_option_and_the_gpu_hour_chart_leaves_api_out(
    catalog,
):
    document = serving()
    document["options"].append(
        {"name": "Commit", "type": "cloud", "billing": "committed", "usd_per_gpu_hour": 2.0,
         "committed_gpus": 1, "on_demand_usd_per_gpu_hour": 3.0}
    )  # fmt: skip
    result, charts = charts_of(document)
    tokens = charts["usd-per-million-tokens"]
    bars = tokens.figure["data"][0]
    assert list(bars["x"]) == ["Fireworks", "Rent", "Commit"]
    assert list(bars["y"]) == [o["all_in_usd_per_million_tokens"] for o in result["options"]]
    hours = charts["usd-per-gpu-hour"]
    assert list(hours.figure["data"][0]["x"]) == ["Rent", "Commit"]
    assert "“Fireworks” is bought by the token" in hours.note
    assert [row[0] for row in hours.tables[0].rows] == ["Rent", "Commit"]
    assert "“Fireworks” is bought by the token" in charts["utilization"].note


def test_a_result_serving_no_tokens_has_no_tokens_chart_and_one_of_api_options_alone_no_gpu_hours(
    catalog,
):
    _result, charts = charts_of(owned())
    assert "usd-per-million-tokens" not in charts and "usd-per-gpu-hour" in charts
    assert charts["usd-per-gpu-hour"].note == ""
    only_api = copy.deepcopy(serving())
    only_api["options"] = only_api["options"][:1]
    _result, charts = charts_of(only_api)
    assert "usd-per-million-tokens" in charts and "usd-per-gpu-hour" not in charts
