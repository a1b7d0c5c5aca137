"""The scenario builder's forms: every shipped scenario goes JSON -> form -> JSON unchanged and
gives the same normalised ``inputs``; the engine's messages land at the field their path names."""

import json

import pytest
from django.utils import timezone

from costapp import forms
from costapp.demo_scenarios import demo_documents
from costapp.selectors import engine_gpu_figures, scenario_catalog_refs
from costapp.tco.validation import normalize

pytestmark = pytest.mark.django_db

SHIPPED = demo_documents()


def inputs_of(document):
    gpus, _source = engine_gpu_figures()
    return normalize(document, gpus, scenario_catalog_refs(document)).document


def through_the_form(document, catalog=None):
    """JSON -> form data -> bound forms -> JSON, as a browser posting the form unchanged would."""
    data, leftovers = forms.document_form_data(document)
    assert leftovers == []
    builder = forms.ScenarioBuilder(data, catalog=catalog)
    assert builder.is_valid(), (builder.scenario.errors, builder.options.errors)
    return builder.document()


@pytest.mark.parametrize(
    "name,document", [(n, d) for n, _desc, d in SHIPPED], ids=[n[:40] for n, _d, _x in SHIPPED]
)
def test_every_shipped_scenario_round_trips_through_the_form(name, document, catalog_gpus):
    catalog = forms.catalog_choices(today=timezone.localdate())
    again = through_the_form(document, catalog)
    assert again == document
    assert json.dumps(inputs_of(again), sort_keys=True) == json.dumps(
        inputs_of(document), sort_keys=True
    )
