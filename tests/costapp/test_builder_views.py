"""The scenario builder's pages: saving from the form and from JSON, the engine's messages at
their fields with nothing stored, duplicating and sharing, and who may do what."""

import pytest
from django.urls import reverse

from costapp.forms import document_form_data
from costapp.models import Scenario
from tests.costapp.runs_helpers import analyst, scenario_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def pat(db):
    return analyst("pat")


@pytest.fixture
def signed_in(client, pat, catalog_gpus):
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
