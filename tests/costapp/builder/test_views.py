"""The scenario builder's pages: saving from the form and from JSON, the engine's messages at
their fields with nothing stored, duplicating and sharing, and who may do what."""

import json
import re

import pytest
from django.urls import reverse

from costapp.builder.documents import document_form_data
from costapp.models import Scenario
from tests.costapp.runs_helpers import analyst, scenario_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def pat(db):
    return analyst("pat")


@pytest.fixture
def signed_in(client, pat, catalog):
    client.force_login(pat)
    return client


def form_post(document, **extra):
    data, leftovers = document_form_data(document)
    assert leftovers == []
    return {**data, "action": "save", **extra}


def test_the_new_scenario_page_shows_every_section_with_labels(signed_in):
    response = signed_in.get(reverse("scenario-new"))
    assert response.status_code == 200
    html = response.content.decode()
    for anchor in ("workloads-section", "options-section", "simulation-section", "sizing-section"):
        assert f'id="{anchor}"' in html
    assert 'for="id_options-0-pue"' in html and 'placeholder="1.3"' in html  # the engine's default
    assert "default 0.3" in html  # idle_power_fraction's help, from the schema


def test_a_scenario_built_in_the_form_is_saved_with_that_document(signed_in, pat):
    document = scenario_document("h100-fleet-buy-vs-rent")
    response = signed_in.post(reverse("scenario-new"), form_post(document, description="d"))
    assert response.status_code == 302, response.content.decode()[:3000]
    saved = Scenario.objects.get(owner=pat)
    assert saved.document == document
    assert saved.name == document["name"] and saved.description == "d" and not saved.shared


def test_the_engines_message_is_shown_at_the_field_and_nothing_is_stored(signed_in):
    document = scenario_document("h100-fleet-buy-vs-rent")
    on_prem = next(i for i, o in enumerate(document["options"]) if o["type"] == "on_prem")
    document["options"][on_prem]["pue"] = 0.5
    response = signed_in.post(reverse("scenario-new"), form_post(document))
    assert response.status_code == 200
    builder = response.context["builder"]
    assert builder.options.forms[on_prem].errors["pue"] == ["must be ≥ 1"]
    assert f"options[{on_prem}].pue" in response.content.decode()
    assert Scenario.objects.count() == 0


def json_post(text, action="json-save"):
    return {"document_json": text, "action": action}


def test_a_document_saved_from_the_json_view_is_stored_as_written(signed_in, pat):
    document = scenario_document("size-the-fleet")
    text = json.dumps(document, indent=1)
    response = signed_in.post(reverse("scenario-new"), json_post(text))
    assert response.status_code == 302
    assert Scenario.objects.get(owner=pat).document == document


@pytest.mark.parametrize(
    "text,field,message",
    [
        ('{"name": "x", "workloads": [', None, "not valid JSON"),
        ('{"name": "x", "name": "y"}', None, "name"),
        ("[1, 2]", None, "must be a JSON object"),
    ],
)
def test_a_malformed_document_stores_nothing_and_says_why(signed_in, text, field, message):
    response = signed_in.post(reverse("scenario-new"), json_post(text))
    assert response.status_code == 200
    errors = response.context["json_errors"]
    assert errors and errors[0].field == field and message in errors[0].message
    assert 'id="json-errors"' in response.content.decode()
    assert Scenario.objects.count() == 0


def test_an_invalid_document_from_json_reports_each_path_and_stores_nothing(signed_in):
    document = scenario_document("h100-fleet-buy-vs-rent")
    document["horizon_months"] = 500
    document["options"][0]["usd_per_gpu_hour"] = -1
    response = signed_in.post(reverse("scenario-new"), json_post(json.dumps(document)))
    fields = [e.field for e in response.context["json_errors"]]
    assert "horizon_months" in fields and "options[0].usd_per_gpu_hour" in fields
    assert Scenario.objects.count() == 0


def test_json_opened_in_the_form_shows_it_and_saving_that_form_stores_the_same_inputs(
    signed_in, pat
):
    document = scenario_document("llm-train-and-serve")
    response = signed_in.post(
        reverse("scenario-new"), json_post(json.dumps(document), action="json-open")
    )
    assert response.status_code == 200 and Scenario.objects.count() == 0
    builder = response.context["builder"]
    html = response.content.decode()
    assert f'value="{document["options"][0]["name"]}"' in html
    assert builder.is_valid() and builder.document() == document
    # the form posted back as shown saves the document unchanged
    response = signed_in.post(reverse("scenario-new"), form_post(document))
    assert response.status_code == 302
    assert Scenario.objects.get(owner=pat).document == document


def test_show_as_json_writes_the_forms_document_into_the_json_view(signed_in):
    document = scenario_document("egress-heavy-inference")
    response = signed_in.post(reverse("scenario-new"), form_post(document, action="to-json"))
    assert json.loads(response.context["json_text"]) == document
    assert Scenario.objects.count() == 0


def test_the_owner_edits_a_scenario_and_its_form_shows_the_document(signed_in, pat):
    document = scenario_document("h100-fleet-buy-vs-rent")
    scenario = Scenario.objects.create(owner=pat, name="mine", document=document)
    url = reverse("scenario-edit", args=[scenario.pk])
    response = signed_in.get(url)
    assert response.status_code == 200
    assert response.context["builder"].document() == document
    changed = {**document, "discount_rate": 0.12}
    response = signed_in.post(url, form_post(changed, shared="on"))
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.document == changed and scenario.shared


def test_shared_scenarios_of_others_are_readable_not_editable_and_private_ones_are_hidden(
    client, pat, catalog
):
    other = analyst("sam")
    document = scenario_document("h100-fleet-buy-vs-rent")
    shared = Scenario.objects.create(owner=other, name="s", shared=True, document=document)
    private = Scenario.objects.create(owner=other, name="p", document=document)
    client.force_login(pat)
    page = client.get(reverse("scenario", args=[shared.pk])).content.decode()
    assert 'id="duplicate-button"' in page and 'id="edit-link"' not in page
    assert 'id="share-button"' not in page
    assert client.get(reverse("scenario-edit", args=[shared.pk])).status_code == 403
    assert client.post(reverse("scenario-edit", args=[shared.pk]), {}).status_code == 403
    assert client.post(reverse("scenario-share", args=[shared.pk]), {}).status_code == 403
    for name in ("scenario-edit", "scenario-duplicate", "scenario-share"):
        method = client.get if name == "scenario-edit" else client.post
        assert method(reverse(name, args=[private.pk])).status_code == 404, name
    shared.refresh_from_db()
    assert shared.shared and shared.document == document


def test_duplicate_makes_a_private_copy_owned_by_the_current_user(client, pat, catalog):
    other = analyst("sam")
    document = scenario_document("h100-fleet-buy-vs-rent")
    shared = Scenario.objects.create(
        owner=other, name="Fleet", description="d", shared=True, document=document
    )
    client.force_login(pat)
    response = client.post(reverse("scenario-duplicate", args=[shared.pk]))
    copy = Scenario.objects.get(owner=pat)
    assert response.status_code == 302 and response["Location"] == f"/scenarios/{copy.pk}/"
    assert copy.name == "Copy of Fleet" and not copy.shared and copy.description == "d"
    assert copy.document == {**document, "name": "Copy of Fleet"}
    assert client.get(reverse("scenario-edit", args=[copy.pk])).status_code == 200


def test_the_owner_shares_and_unshares_a_scenario(signed_in, pat):
    scenario = Scenario.objects.create(
        owner=pat, name="mine", document=scenario_document("h100-fleet-buy-vs-rent")
    )
    url = reverse("scenario-share", args=[scenario.pk])
    signed_in.post(url, {"shared": "on"})
    scenario.refresh_from_db()
    assert scenario.shared
    signed_in.post(url, {})
    scenario.refresh_from_db()
    assert not scenario.shared


def test_the_builder_is_for_analysts(client, catalog):
    from django.contrib.auth.models import User

    viewer = User.objects.create_user("viewer", password="x")
    client.force_login(viewer)
    assert client.get(reverse("scenario-new")).status_code == 403
    client.logout()
    assert client.get(reverse("scenario-new")).status_code == 302  # to the login page


def test_the_offer_picker_lists_current_prices_with_their_date_flags_and_a_button(signed_in):
    response = signed_in.get(
        reverse("scenario-offers"),
        {"prefix": "options-1", "options-1-gpu": "h100-sxm", "options-1-billing": "spot"},
    )
    assert response.status_code == 200
    prices = list(response.context["prices"])
    assert prices and all(p.billing == "spot" and p.offer.gpu.slug == "h100-sxm" for p in prices)
    # no workload needs GPUs together: the offers whose egress is known first, each by price
    assert [p.fits for p in prices] == [p.egress_known for p in prices]
    assert [(not p.fits, p.usd_per_gpu_hour) for p in prices] == sorted(
        (not p.fits, p.usd_per_gpu_hour) for p in prices
    )
    html = response.content.decode()
    assert html.count('class="use-offer" data-prefix="options-1"') == len(prices)
    assert "as stated by" in html
    assert "First those that fit this option: egress pricing known; then the others." in html
    # each offer says its confidence in words, in its own column and on its button
    from hardware.confidence import price_confidence

    judged = [price_confidence(p) for p in prices]
    assert re.findall(r'<span class="confidence confidence-(\w+)"', html) == [
        c.level for c in judged
    ]
    assert '<th scope="col">Confidence</th>' in html
    summaries = re.findall(r'data-summary="([^"]*)"', html)
    assert [summary.rsplit(" · ", 1)[1] for summary in summaries] == [
        c.label + (f" ({', '.join(c.short)})" if c.short else "") for c in judged
    ]
    assert {c.level for c in judged} >= {"medium"}  # the shipped spot prices are not all high


def workloads_data(*workloads: dict) -> dict:
    """The builder's workload fields of ``workloads`` (``workloads-0-type`` …), with the
    formset's management data."""
    data = {"workloads-TOTAL_FORMS": str(len(workloads)), "workloads-INITIAL_FORMS": "0"}
    for index, workload in enumerate(workloads):
        data.update({f"workloads-{index}-{key}": str(value) for key, value in workload.items()})
    return data


def picker(client, *workloads: dict, gpu: str = "h100-sxm", billing: str = "on_demand"):
    query = {"prefix": "options-0", "options-0-gpu": gpu, "options-0-billing": billing}
    response = client.get(reverse("scenario-offers"), {**query, **workloads_data(*workloads)})
    assert response.status_code == 200
    return response


def test_the_offer_picker_puts_first_the_offers_that_hold_the_gpus_a_run_needs_with_known_egress(
    signed_in,
):
    """An 8-GPU run on H100s: the picker opens on the cheapest instance of 8 H100s whose
    provider's egress pricing is known, not on the cheapest H100 price of all (a smaller
    instance, or one whose egress is unknown); the others follow, each group by price."""
    from hardware import selectors

    run = {"type": "training", "name": "Fine-tune", "runs_per_year": 12, "cluster_gpus": 8}
    steady = {"type": "steady", "name": "Chat", "gpus": 2}
    response = picker(signed_in, steady, run)
    prices = response.context["prices"]
    every = list(
        selectors.current_prices_for_pages().filter(
            offer__gpu__slug="h100-sxm", billing="on_demand"
        )
    )
    cheapest = min(every, key=lambda p: p.usd_per_gpu_hour)
    assert cheapest.offer.gpu_count < 8 or not cheapest.egress_known  # what it used to open on
    fitting = [p for p in every if p.offer.gpu_count >= 8 and p.egress_known]
    first = prices[0]
    assert first.offer.gpu_count >= 8 and first.egress_known and first.fits
    assert first.usd_per_gpu_hour == min(p.usd_per_gpu_hour for p in fitting)
    assert [p.fits for p in prices] == [True] * min(len(fitting), 25) + [False] * (
        len(prices) - min(len(fitting), 25)
    )
    assert all(p.fits == (p.offer.gpu_count >= 8 and p.egress_known) for p in prices)
    for group in (True, False):
        rates = [p.usd_per_gpu_hour for p in prices if p.fits is group]
        assert rates == sorted(rates)
    html = response.content.decode()
    assert (
        "First those that fit this option: at least 8 GPUs in one instance (workload 2 "
        "“Fine-tune” runs on 8 at once) and egress pricing known; then the others." in html
    )
    # on spot, the cheapest price is a 1-GPU instance with known egress: after the 8-GPU ones,
    # its row saying why
    spot = picker(signed_in, steady, run, billing="spot")
    prices = spot.context["prices"]
    assert prices[0].offer.gpu_count >= 8 and prices[0].egress_known
    short = [p for p in prices if p.offer.gpu_count < 8]
    assert short and min(p.usd_per_gpu_hour for p in short) < prices[0].usd_per_gpu_hour
    rows = spot.content.decode().split("<tr")[2:]
    assert len(rows) == len(prices)
    for price, row in zip(prices, rows, strict=True):
        assert f'data-gpus="{price.offer.gpu_count}"' in row
        assert ("fewer than the 8 needed in one instance" in row) == (price.offer.gpu_count < 8)
        assert ("Fits this option" in row) == price.fits


def test_a_model_larger_than_any_instance_is_fitted_by_the_offers_with_the_most_gpus(signed_in):
    """Serving a 405B model takes ceil(2 × 405 × 1.2 / 80) = 13 H100s (the engine's memory
    rule); no offer has 13 in one instance, so those with the most (8) fit it."""
    serve = {
        "type": "inference",
        "name": "405B chat",
        "tokens_per_second": 1000,
        "params_billion": 405,
    }
    response = picker(signed_in, serve)
    need = response.context["need"]
    assert (need.gpus, need.wanted, need.largest) == (8, 13, 8)
    assert response.context["prices"][0].offer.gpu_count == 8
    assert "no offer has 13 in one instance" in response.content.decode()
    # a removed row and a row not yet valid are not the option's workloads
    gone = {**serve, "DELETE": "on"}
    broken = {**serve, "params_billion": "many"}
    assert picker(signed_in, gone, broken).context["need"].gpus == 1


def test_the_edit_page_shows_what_the_catalog_says_of_the_chosen_offer(signed_in, pat):
    from tests.costapp.builder.test_forms import catalog_document

    document = catalog_document()
    scenario = Scenario.objects.create(owner=pat, name="refs", document=document)
    response = signed_in.get(reverse("scenario-edit", args=[scenario.pk]))
    html = response.content.decode()
    standing = html[html.index('id="options-0-standing"') :][:3000]
    assert "on_demand:" in standing and "as stated by" in standing
    assert re.search(r"on_demand: .*<strong>(High|Medium|Low) confidence</strong>", standing)
    quote = document["options"][2]["quote"]
    assert f'<option value="{quote}" selected>' in html
    assert response.context["builder"].document() == document


def test_a_value_that_is_not_a_number_is_marked_at_its_field_and_nothing_is_stored(signed_in):
    data = form_post(scenario_document("h100-fleet-buy-vs-rent"))
    data["options-0-usd_per_gpu_hour"] = "two dollars"
    data["workloads-0-type"] = "batch"
    response = signed_in.post(reverse("scenario-new"), data)
    assert response.status_code == 200
    builder = response.context["builder"]
    assert builder.options.forms[0].errors["usd_per_gpu_hour"] == ["Enter a number."]
    assert "batch" in builder.workloads.forms[0].errors["type"][0]
    assert 'id="builder-errors"' in response.content.decode()
    assert Scenario.objects.count() == 0


def test_a_post_without_the_formsets_management_data_is_refused_plainly(signed_in):
    response = signed_in.post(reverse("scenario-new"), {"name": "x", "action": "save"})
    assert response.status_code == 200
    assert "ManagementForm data is missing" in response.content.decode()
    assert Scenario.objects.count() == 0


def test_duplicate_and_share_ask_to_confirm_on_get_and_change_nothing(signed_in, pat):
    scenario = Scenario.objects.create(
        owner=pat, name="mine", document=scenario_document("h100-fleet-buy-vs-rent")
    )
    for name, button in (("scenario-duplicate", "Make a copy"), ("scenario-share", "Share")):
        response = signed_in.get(reverse(name, args=[scenario.pk]))
        assert response.status_code == 200
        assert f'id="confirm-button">{button}</button>' in response.content.decode()
    assert Scenario.objects.count() == 1
    scenario.refresh_from_db()
    assert not scenario.shared


def test_values_of_another_type_are_named_next_to_the_type_and_after_saving(signed_in, pat):
    document = scenario_document("h100-fleet-buy-vs-rent")
    cloud = next(i for i, o in enumerate(document["options"]) if o["type"] == "cloud")
    data = form_post(document)
    data[f"options-{cloud}-pue"] = "1.4"  # typed while the option was on-prem
    # not saved (another field is wrong): the row says which values will be left out
    wrong = {**data, "horizon_months": "500"}
    html = signed_in.post(reverse("scenario-new"), wrong).content.decode()
    notice = f'id="id_options-{cloud}-type-unsaved"'
    assert notice in html
    shown = html.split(notice, 1)[1].split("</small>", 1)[0]
    assert "Not saved with this type and billing: PUE = 1.4. Switch back to keep it." in shown
    # saved: the document leaves it out and the message after saving says so
    response = signed_in.post(reverse("scenario-new"), data, follow=True)
    assert Scenario.objects.get(owner=pat).document == document
    html = response.content.decode()
    assert (
        "Values typed for another type or billing were not saved: "
        f"option {cloud + 1} “{document['options'][cloud]['name']}” (PUE = 1.4)." in html
    )


def test_the_edit_page_shows_the_engines_estimates_where_fields_are_empty(signed_in, pat):
    """An 8.03 B model served on H100s without its rates or busiest hours: each field shows the
    figure the run will use, computed here by the scenario format's formulas from the catalog's
    H100 figures (decode: 32 × bandwidth / (2 × params), capped by half the BF16 compute; prefill:
    half the BF16 compute / (2 × params); busiest hours: min(4, 24 / peak to average))."""
    from hardware.models import GpuModel

    h100 = GpuModel.objects.get(slug="h100-sxm")
    params = 8.03e9
    bandwidth = float(h100.memory_bandwidth_tb_s) * 1e12
    bf16 = float(h100.bf16_dense_tflops) * 1e12
    decode = min(32 * bandwidth / (2 * params), 0.5 * bf16 / (2 * params))
    prefill = 0.5 * bf16 / (2 * params)
    document = {
        "name": "8B chat",
        "workloads": [
            {
                "type": "inference",
                "name": "chat",
                "gpu": "h100-sxm",
                "params_billion": 8.03,
                "tokens_per_second": 23148,
                "input_tokens_per_output_token": 3,
                "peak_to_average": 2,
            }
        ],
        "options": [{"type": "cloud", "name": "rent", "gpu": "h100-sxm", "usd_per_gpu_hour": 3}],
    }
    scenario = Scenario.objects.create(owner=pat, name="8B", document=document)
    html = signed_in.get(reverse("scenario-edit", args=[scenario.pk])).content.decode()
    assert f'placeholder="{decode:,.0f} (estimate)"' in html
    assert f'placeholder="{prefill:,.0f} (estimate)"' in html
    assert 'placeholder="4 (estimate)"' in html
    assert f"Left empty, the run uses the estimate {prefill:,.0f}." in html
    assert round(decode) == 6675 and round(prefill) == 30803  # the figures of the 8B question


def test_the_hints_give_the_bounds_a_plan_lives_within_and_not_the_typo_guards(signed_in):
    html = signed_in.get(reverse("scenario-new")).content.decode()
    assert "≤ 120" in html and "≤ 100000" in html  # the horizon's and the paths' real limits
    assert "≤ 10000000" not in html and "≤ 1000000000000" not in html  # slips of the keyboard
