"""The plan a question builds, before any run: the offers it rests on are those the question
accepts (provider kinds, region, age; flag-free with known egress wherever such exists), 5-year
commitments only over 60 months or more, growth a year as the format's rate a month, the days a
run must finish in setting the GPUs at once, failures at the sourced time between failures, and
the GPUs already owned as a layer costing their running cost alone."""

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from costapp.ask.plan import question_plan
from hardware.geography import EUROPE
from hardware.models import GpuModel, InstancePrice

pytestmark = pytest.mark.django_db

BASE = {
    "months": 36, "gpus": ["h100-sxm"], "discount_rate": 0.08, "certainty": "medium",
    "sure": "average", "kinds": ["hyperscaler", "gpu-cloud", "marketplace"], "region": "any",
    "bridge": True, "serve": True, "serve_model": "llama-3.1-8b", "tokens_per_day": 2e8,
    "prompt_tokens": 3.0, "peak_to_average": 2.0,
}  # fmt: skip


def _prices(document: dict) -> list[InstancePrice]:
    found = []
    for option in document["options"]:
        ref = option.get("offer")
        if ref:
            found += list(InstancePrice.objects.filter(
                offer__provider__slug=ref["provider"], offer__instance_type=ref["instance"],
                region__code=ref["region"]))  # fmt: skip
    return found


def test_offers_are_those_the_question_accepts(catalog):
    today = timezone.localdate()
    document, notes = question_plan({**BASE, "region": EUROPE, "kinds": ["hyperscaler"]},
                                    today=today)  # fmt: skip
    prices = _prices(document)
    assert prices
    assert {p.region.geography for p in prices} == {EUROPE}
    assert {p.offer.provider.kind for p in prices} == {"hyperscaler"}
    for role in notes["roles"].values():
        if role.get("price"):
            assert "(Europe)" in role["price"]
    anywhere, _ = question_plan(BASE, today=today)
    on_demand = next(o for o in anywhere["options"] if o.get("scaling") == "elastic")
    chosen = next(p for p in _prices({"options": [on_demand]}) if p.billing == "on_demand")
    assert chosen.flag == "" and chosen.offer.provider.egress_known
    recent, notes = question_plan({**BASE, "max_price_age_days": 30}, today=today)
    for price in _prices(recent):
        assert price.stated_on >= today - timedelta(days=30)
    old = [p for p in _prices(anywhere) if p.stated_on < today - timedelta(days=30)]
    assert old  # the shipped catalog is a dated snapshot
    assert not set(old) & set(_prices(recent))
    if not any(o.get("scaling") == "elastic" for o in recent["options"]):
        assert any("that the question accepts" in s for s in notes["left_out"])


def test_five_year_commitments_only_over_sixty_months_and_growth_a_month(catalog):
    today = timezone.localdate()
    short, notes = question_plan(BASE, today=today)
    assert not any(r["family"] == "committed_5y" for r in notes["roles"].values())
    long, notes = question_plan({**BASE, "months": 60, "growth_per_year": 50.0}, today=today)
    terms = {o.get("term_months") for o in long["options"] if o.get("billing") == "committed"}
    assert 60 in terms or any("5-year" in s for s in notes["left_out"])
    assert long["workloads"][0]["monthly_growth"] == pytest.approx(1.5 ** (1 / 12) - 1)


def test_days_to_finish_set_the_gpus_at_once_and_failures_are_sourced(catalog):
    today = timezone.localdate()
    answers = {**BASE, "serve": False, "train": True, "train_model": "custom",
               "train_params_billion": 13.0, "train_method": "full", "train_tokens_billion": 2000.0,
               "runs_per_year": 2.0, "train_days": 10.0, "failures": True,
               "checkpoint_minutes": 5.0, "restart_minutes": 20.0}  # fmt: skip
    document, notes = question_plan(answers, today=today)
    training = document["workloads"][0]
    tflops = float(GpuModel.objects.get(slug="h100-sxm").bf16_dense_tflops)
    gpu_hours = 6 * 13e9 * 2000e9 / (tflops * 1e12 * 0.4 * 3600)
    assert training["cluster_gpus"] == math.ceil(gpu_hours / (10 * 24))
    assert (training["checkpoint_hours"], training["restart_hours"]) == (5 / 60, 20 / 60)
    gpu_options = [o for o in document["options"] if o["type"] != "api"]
    assert all(o["gpu_mtbf_hours"] == {"assumption": "gpu_mtbf_hours_h100"} for o in gpu_options)
    too_many = {**answers, "train_days": None, "train_cluster_gpus": 512}
    assert question_plan(too_many, today=today)[0]["workloads"][0]["cluster_gpus"] == 512


def test_gpus_already_owned_are_a_layer_costing_their_running_cost(catalog):
    document, notes = question_plan(
        {**BASE, "owned_gpus": 16, "owned_gpu": "h100-sxm", "owned_usd_per_month": 9000.0},
        today=timezone.localdate(),
    )
    owned = next(o for o in document["options"] if notes["roles"][o["name"]]["family"] == "owned")
    assert owned == {"type": "dedicated", "name": owned["name"], "gpus_per_server": 16,
                     "servers": 1, "usd_per_server_month": 9000.0}  # fmt: skip
    mix = next(o for o in document["options"] if o["type"] == "mix")
    assert mix["layers"][0] == owned["name"]
    sizing = next(s for s in document["sizing"] if s["option"] == mix["name"])
    assert sizing["layers"][0] == {"min": 1, "max": 1, "step": 1}
    assert sizing["objective"] == "mean_npv"


def test_only_the_commitments_asked_are_priced_and_the_mix_commits_for_three_years_if_asked(
    catalog,
):
    today = timezone.localdate()

    def committed(answers: dict) -> tuple[set[str], list[list[str]]]:
        document, notes = question_plan(answers, today=today)
        families = {r["family"] for r in notes["roles"].values()}
        layers = [[notes["roles"][n]["family"] for n in o["layers"]]
                  for o in document["options"] if o["type"] == "mix"]  # fmt: skip
        return {f for f in families if f.startswith("committed")}, layers

    every, mixes = committed({**BASE, "months": 60})  # a question that names none: all three
    assert every == {"committed_1y", "committed_3y", "committed_5y"}
    assert mixes and all("committed_3y" in layers for layers in mixes)
    one, mixes = committed({**BASE, "months": 60, "commitments": ["1"]})
    assert one == {"committed_1y"}
    assert all(not any(f.startswith("committed") for f in layers) for layers in mixes)
    assert committed({**BASE, "commitments": ["5"]})[0] == set()  # 36 months: no 5-year term
    assert committed({**BASE, "commitments": []})[0] == set()


def test_token_counts_read_with_the_letter_of_their_size_in_titles_and_names(catalog):
    from costapp.ask.plan import question_title

    for tokens, words in ((2e9, "2 B"), (2e12, "2 T"), (2e7, "20 M"), (150_000.0, "150,000")):
        answers = {**BASE, "tokens_per_day": tokens}
        assert f"at {words} tokens a day over 36 months" in question_title(answers)
        document, _notes = question_plan(answers, today=timezone.localdate())
        assert f"at {words} generated tokens a day" in document["workloads"][0]["name"]
        assert "e+" not in question_title(answers) + document["workloads"][0]["name"]
