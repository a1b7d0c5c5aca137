"""The scenario builder's forms: every shipped scenario goes JSON -> form -> JSON unchanged and
gives the same normalised ``inputs``; the engine's messages land at the field their path names."""

import json

import pytest
from django import forms as django_forms
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costapp.builder import aggregate as builder_aggregate
from costapp.builder import catalog as builder_catalog
from costapp.builder import documents as builder_documents
from costapp.builder import forms as builder_forms
from costapp.demo_scenarios import demo_documents
from costapp.scenarios.catalog import engine_gpu_figures, scenario_catalog_refs
from costapp.tco import schema, swept_field
from costapp.tco.errors import FieldError, ScenarioError
from costapp.tco.validation import normalize
from tests.examples import examples

pytestmark = pytest.mark.django_db

SHIPPED = demo_documents()


def inputs_of(document):
    gpus, _source = engine_gpu_figures()
    return normalize(document, gpus, scenario_catalog_refs(document)).document


def through_the_form(document, catalog=None):
    """JSON -> form data -> bound forms -> JSON, as a browser posting the form unchanged would."""
    data, leftovers = builder_documents.document_form_data(document)
    assert leftovers == []
    builder = builder_aggregate.ScenarioBuilder(data, catalog=catalog)
    assert builder.is_valid(), (builder.scenario.errors, builder.options.errors)
    return builder.document()


@pytest.mark.parametrize(
    "name,document", [(n, d) for n, _desc, d in SHIPPED], ids=[n[:40] for n, _d, _x in SHIPPED]
)
def test_every_shipped_scenario_round_trips_through_the_form(name, document, catalog):
    choices = builder_catalog.catalog_choices(today=timezone.localdate())
    again = through_the_form(document, choices)
    assert again == document
    assert json.dumps(inputs_of(again), sort_keys=True) == json.dumps(
        inputs_of(document), sort_keys=True
    )


# --- any document the form can show comes back unchanged -----------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)
NUMBER = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _values(table, keys):
    """A strategy of mappings over some of ``keys`` of ``table``, each of its kind."""
    drawn = {}
    for key in keys:
        spec = table[key]
        if spec.kind in ("whole", "number"):
            drawn[key] = NUMBER
        elif spec.kind == "choice":
            drawn[key] = st.sampled_from(spec.choices)
        elif spec.kind == "text":
            drawn[key] = TEXT
    return st.fixed_dictionaries({}, optional=drawn)


@st.composite
def workloads(draw):
    kind = draw(st.sampled_from(schema.WORKLOAD_TYPES))
    table = {**schema.WORKLOAD_COMMON_FIELDS, **schema.WORKLOAD_TYPE_FIELDS[kind]}
    item = draw(_values(table, [k for k in table if k != "type"]))
    return {"type": kind, **item}


@st.composite
def options(draw):
    kind = draw(st.sampled_from(schema.OPTION_TYPES))
    table = {**schema.OPTION_COMMON_FIELDS, **schema.OPTION_TYPE_FIELDS[kind]}
    if kind == "cloud":
        billing = draw(st.sampled_from(schema.BILLINGS))
        table = {**table, **schema.BILLING_FIELDS[billing]}
    plain = [k for k in table if k not in ("type", "offer", "financing", "egress_tiers")]
    item = {"type": kind, **draw(_values(table, plain))}
    if kind == "cloud":
        item["billing"] = billing
        if draw(st.booleans()):
            item["offer"] = draw(_values(schema.OFFER_FIELDS, list(schema.OFFER_FIELDS)))
        if draw(st.booleans()):
            tiers = draw(
                st.lists(
                    st.fixed_dictionaries({"up_to_tb": NUMBER, "usd_per_gb": NUMBER}), max_size=3
                )
            )
            item["egress_tiers"] = tiers + [{"up_to_tb": None, "usd_per_gb": draw(NUMBER)}]
    if kind == "on_prem" and draw(st.booleans()):
        item["financing"] = draw(_values(schema.FINANCING_FIELDS, list(schema.FINANCING_FIELDS)))
    if "quote" in item:
        item["quote"] = draw(st.integers(min_value=1, max_value=10**6))
    item = {k: v for k, v in item.items() if v != {}}
    return item


@st.composite
def documents(draw):
    top = {k: v for k, v in schema.TOP_LEVEL_FIELDS.items() if k in builder_forms.ScenarioForm.TOP}
    document = draw(_values(top, list(top)))
    document["workloads"] = draw(st.lists(workloads(), min_size=1, max_size=3))
    document["options"] = draw(st.lists(options(), min_size=1, max_size=3))
    if draw(st.booleans()):
        document["baseline"] = draw(TEXT)
    if draw(st.booleans()):
        simulation = draw(_values(schema.SIMULATION_FIELDS, list(schema.SIMULATION_FIELDS)))
        for quantity in schema.SIMULATED_QUANTITIES:
            if draw(st.booleans()):
                dist = draw(st.sampled_from(schema.DISTRIBUTIONS))
                table = schema.DISTRIBUTION_FIELDS[dist]
                simulation[quantity] = {"dist": dist, **draw(_values(table, list(table)))}
        document["simulation"] = simulation
    if draw(st.booleans()):
        document["sizing"] = draw(
            st.lists(
                _values(schema.SWEEP_FIELDS, list(schema.SWEEP_FIELDS)).filter(bool),
                min_size=1,
                max_size=3,
            )
        )
    return document


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents())
def test_any_document_the_form_can_show_comes_back_from_it_unchanged(document):
    assert through_the_form(document) == document


# --- the engine's messages at their fields --------------------------------------------------------


def builder_of(document):
    data, _leftovers = builder_documents.document_form_data(document)
    builder = builder_aggregate.ScenarioBuilder(data)
    assert builder.is_valid()
    return builder


def engine_rejects(builder):
    """The engine refuses the builder's document; its messages are placed at the fields."""
    with pytest.raises(ScenarioError) as caught:
        inputs_of(builder.document())
    builder.engine_errors(caught.value.errors)


def placed_errors(builder):
    """{(section, form index, field): messages} of every error the builder's forms carry."""
    found = {}
    for name, errors in builder.scenario.errors.items():
        found[("scenario", None, name)] = list(errors)
    for section in ("workloads", "options", "sizing"):
        for index, form in enumerate(getattr(builder, section).forms):
            for name, errors in form.errors.items():
                found[(section, index, name)] = list(errors)
    return found


def test_engine_paths_land_on_their_form_fields():
    document = {
        "name": "x",
        "workloads": [{"type": "steady", "name": "w", "gpus": 1}],
        "options": [
            {
                "type": "cloud",
                "name": "c",
                "offer": {"provider": "p", "instance": "i", "region": "r"},
            },
            {
                "type": "on_prem",
                "name": "o",
                "quote": 3,
                "financing": {"apr": 0.1, "term_months": 12},
            },
        ],
        "simulation": {"paths": 10, "demand_multiplier": {"dist": "normal", "mean": 1, "sd": 0.1}},
        "sizing": [{"option": "o", "min": 0, "max": 4}],
    }
    builder = builder_of(document)
    builder.engine_errors(
        [
            FieldError("horizon_months", "must be ≤ 120"),
            FieldError("options[0].offer", "no current price"),
            FieldError("options[0].offer.region", "must be text"),
            FieldError("options[1].quote", "no purchase quote 3"),
            FieldError("options[1].financing.term_months", "must be > 0"),
            FieldError("options[1].egress_tiers[0].usd_per_gb", "not for on-prem"),
            FieldError("simulation.demand_multiplier.sd", "must be ≥ 0"),
            FieldError("simulation.paths", "must be ≤ 100000"),
            FieldError("sizing[0].max", "must be ≥ min"),
            FieldError("workloads", "must have at most 50 items"),
            FieldError(None, "the document is too large"),
        ]
    )
    errors = placed_errors(builder)
    assert errors[("scenario", None, "horizon_months")] == ["must be ≤ 120"]
    assert errors[("options", 0, "offer_provider")] == ["no current price"]
    assert errors[("options", 0, "offer_region")] == ["must be text"]
    assert errors[("options", 1, "purchase_quote")] == ["no purchase quote 3"]
    assert errors[("options", 1, "financing_term_months")] == ["must be > 0"]
    # a field the form has no place for: the row's own errors, with its path
    assert errors[("options", 1, "__all__")] == [
        "options[1].egress_tiers[0].usd_per_gb: not for on-prem"
    ]
    assert errors[("scenario", None, "demand_multiplier_sd")] == ["must be ≥ 0"]
    assert errors[("scenario", None, "paths")] == ["must be ≤ 100000"]
    assert errors[("sizing", 0, "max")] == ["must be ≥ min"]
    assert errors[("scenario", None, "__all__")] == ["the document is too large"]
    assert builder.section_errors["workloads"] == ["must have at most 50 items"]
    assert len(builder.summary) == 11


def test_removed_and_blank_rows_are_not_in_the_document_and_errors_skip_them():
    data, _ = builder_documents.document_form_data(
        {
            "name": "x",
            "workloads": [
                {"type": "steady", "name": "gone", "gpus": 1},
                {"type": "steady", "name": "kept", "gpus": -1},
            ],
            "options": [{"type": "cloud", "name": "c", "usd_per_gpu_hour": 2}],
        }
    )
    data["workloads-0-DELETE"] = "on"
    data["workloads-TOTAL_FORMS"] = "3"  # a third row added and left empty
    builder = builder_aggregate.ScenarioBuilder(data)
    assert builder.is_valid()
    assert [w["name"] for w in builder.document()["workloads"]] == ["kept"]
    engine_rejects(builder)
    assert placed_errors(builder)[("workloads", 1, "gpus")] == ["must be ≥ 0"]


def test_fields_of_another_type_are_reported_not_dropped_silently():
    _data, leftovers = builder_documents.document_form_data(
        {
            "name": "x",
            "typo_field": 1,
            "workloads": [{"type": "steady", "name": "w", "gpus": 1, "mfu": 0.5}],
            "options": [{"type": "dedicated", "name": "d", "billing": "spot"}],
        }
    )
    assert [e.field for e in leftovers] == ["typo_field", "workloads[0].mfu", "options[0].billing"]


def test_the_pickers_label_each_choice_with_its_date_and_flags(catalog):
    choices = builder_catalog.catalog_choices(today=timezone.localdate())
    gpus = dict(choices.gpus)
    assert "as stated by" in gpus["h100-sxm"] and " on 20" in gpus["h100-sxm"]
    egress = dict(choices.egress_providers)
    assert any("egress pricing unknown" in label for label in egress.values())
    assert any("egress tiers, as stated by" in label for label in egress.values())
    assert choices.dedicated_quotes and choices.purchase_quotes
    assert all(
        "valid until" in label or "no end date" in label for _pk, label in choices.purchase_quotes
    )


def catalog_document():
    """A document using every kind of catalog reference, from the loaded catalog."""
    from hardware.models import DedicatedQuote, EgressTier, PurchaseQuote
    from hardware.selectors import current_prices

    price = current_prices().filter(billing="on_demand", offer__gpu__slug="h100-sxm").first()
    dedicated = DedicatedQuote.objects.first()
    purchase = PurchaseQuote.objects.first()
    egress = EgressTier.objects.select_related("provider").first().provider.slug
    return {
        "name": "Catalog references",
        "egress_tb_per_month": 20,
        "workloads": [{"type": "steady", "name": "w", "gpus": 16, "gpu": "h100-sxm"}],
        "options": [
            {
                "type": "cloud",
                "name": "offer",
                "offer": {
                    "provider": price.offer.provider.slug,
                    "instance": price.offer.instance_type,
                    "region": price.region.code,
                },
            },
            {
                "type": "cloud",
                "name": "egress",
                "billing": "spot",
                "usd_per_gpu_hour": 2.5,
                "egress_provider": egress,
            },
            {"type": "dedicated", "name": "lease", "quote": dedicated.pk},
            {
                "type": "on_prem",
                "name": "buy",
                "quote": purchase.pk,
                "financing": {"apr": 0.07, "term_months": 36},
            },
        ],
    }


def test_catalog_references_round_trip_and_give_the_same_inputs(catalog):
    document = catalog_document()
    choices = builder_catalog.catalog_choices(today=timezone.localdate())
    again = through_the_form(document, choices)
    assert again == document
    inputs = inputs_of(document)
    assert inputs["options"][0]["usd_per_gpu_hour"] > 0  # the offer's price, resolved
    assert json.dumps(inputs_of(again), sort_keys=True) == json.dumps(inputs, sort_keys=True)


# --- a sizing sweep's option: picked from the scenario's options ---------------------------------


def sweep_option_choices(builder, index=0):
    field = builder.sizing.forms[index].fields["option"]
    return [value for value, _label in field.choices]


def test_a_sweeps_option_is_picked_from_the_options_names_removed_ones_left_out():
    data, _ = builder_documents.document_form_data(
        {
            "name": "x",
            "workloads": [{"type": "steady", "name": "w", "gpus": 8}],
            "options": [
                {
                    "type": "cloud",
                    "name": "Rent",
                    "billing": "committed",
                    "usd_per_gpu_hour": 2,
                    "on_demand_usd_per_gpu_hour": 3,
                },
                {"type": "on_prem", "name": "Buy", "capex_usd_per_server": 1, "server_kw": 1},
                {"type": "dedicated", "name": "Lease", "usd_per_server_month": 1},
            ],
            "sizing": [{"option": "Buy", "min": 0, "max": 4}],
        }
    )
    data["options-2-DELETE"] = "on"
    builder = builder_aggregate.ScenarioBuilder(data)
    field = builder.sizing.forms[0].fields["option"]
    assert isinstance(field, django_forms.ChoiceField)
    assert sweep_option_choices(builder) == ["", "Rent", "Buy"]
    assert builder.sizing.forms[0]["option"].value() == "Buy"
    # the template of a new sweep row lists them too
    assert [v for v, _ in builder.sizing.empty_form.fields["option"].choices] == ["", "Rent", "Buy"]
    assert builder.is_valid() and builder.document()["sizing"] == [
        {"option": "Buy", "min": 0, "max": 4}
    ]


def test_a_sweep_lists_only_the_options_the_engine_can_size():
    document = {
        "name": "x",
        "workloads": [{"type": "steady", "name": "w", "gpus": 8}],
        "options": [
            {"type": "cloud", "name": "Rent", "usd_per_gpu_hour": 2},
            {"type": "cloud", "name": "Spot", "billing": "spot", "usd_per_gpu_hour": 1},
            {
                "type": "cloud",
                "name": "Commit",
                "billing": "committed",
                "usd_per_gpu_hour": 2,
                "on_demand_usd_per_gpu_hour": 3,
            },
            {"type": "dedicated", "name": "Lease", "usd_per_server_month": 1},
            {"type": "on_prem", "name": "Buy", "capex_usd_per_server": 1, "server_kw": 1},
        ],
        "sizing": [{"option": "Lease", "min": 0, "max": 4}],
    }
    assert sweep_option_choices(builder_of(document)) == ["", "Commit", "Lease", "Buy"]
    # each listed option is one the engine sizes; the others it rejects at the sweep's option
    for name in ("Rent", "Spot", "Commit", "Lease", "Buy"):
        swept = {**document, "sizing": [{"option": name, "min": 0, "max": 4}]}
        if name in ("Rent", "Spot"):
            with pytest.raises(ScenarioError) as caught:
                inputs_of(swept)
            assert "sizing[0].option" in [e.field for e in caught.value.errors]
        else:
            with pytest.raises(ScenarioError) as caught:  # only the workload's GPU is missing
                inputs_of(swept)
            assert [e.field for e in caught.value.errors] == ["workloads[0].gpu"]


def test_a_sweep_naming_an_option_that_cannot_be_sized_keeps_it_marked_with_why():
    document = {
        "name": "x",
        "workloads": [{"type": "steady", "name": "w", "gpus": 8}],
        "options": [
            {"type": "cloud", "name": "Rent", "usd_per_gpu_hour": 2},
            {"type": "cloud", "name": "Spot", "billing": "spot", "usd_per_gpu_hour": 1},
            {"type": "on_prem", "name": "Buy", "capex_usd_per_server": 1, "server_kw": 1},
        ],
        "sizing": [
            {"option": "Rent", "min": 0, "max": 4},
            {"option": "Spot", "min": 0, "max": 4},
        ],
    }
    builder = builder_of(document)
    assert list(builder.sizing.forms[0].fields["option"].choices) == [
        ("", "(choose)"),
        ("Buy", "Buy"),
        ("Rent", "Rent (cannot be sized: on-demand cloud)"),
    ]
    assert list(builder.sizing.forms[1].fields["option"].choices)[-1] == (
        "Spot",
        "Spot (cannot be sized: spot cloud)",
    )
    assert [s["option"] for s in builder.document()["sizing"]] == ["Rent", "Spot"]
    engine_rejects(builder)
    message = placed_errors(builder)[("sizing", 0, "option")][0]
    assert 'names "Rent", a cloud option with on_demand billing' in message


def test_the_pages_table_of_what_can_be_sized_is_the_engines_rule():
    """The table the page's script looks a row's type and billing up in covers every type (and
    none) × billing (and none) and agrees with the engine's ``swept_field``."""
    table = builder_forms.sizable_table()
    assert set(table) == {"", *schema.OPTION_TYPES}
    for option_type, by_billing in table.items():
        assert set(by_billing) == {"", *schema.BILLINGS}
        for billing, reason in by_billing.items():
            assert (reason == "") == (swept_field(option_type, billing) is not None)
    assert table["cloud"] == {
        "": "on-demand cloud",
        "on_demand": "on-demand cloud",
        "spot": "spot cloud",
        "committed": "",
    }
    assert table["dedicated"]["spot"] == table["on_prem"][""] == ""
    assert table[""]["committed"] == "no type chosen"


def test_a_sweep_naming_no_option_keeps_its_value_and_the_engine_says_so_at_the_field():
    document = {
        "name": "x",
        "workloads": [{"type": "steady", "name": "w", "gpus": 8}],
        "options": [{"type": "on_prem", "name": "Buy", "capex_usd_per_server": 1, "server_kw": 1}],
        "sizing": [{"option": "Buy servers", "min": 0, "max": 4}],
    }
    builder = builder_of(document)
    field = builder.sizing.forms[0].fields["option"]
    assert list(field.choices) == [
        ("", "(choose)"),
        ("Buy", "Buy"),
        ("Buy servers", "Buy servers (no option of that name)"),
    ]
    assert builder.document()["sizing"][0]["option"] == "Buy servers"
    engine_rejects(builder)
    assert placed_errors(builder)[("sizing", 0, "option")] == ['names no option: "Buy servers"']


# --- values typed for another type or billing -----------------------------------------------------


def test_values_typed_for_another_type_or_billing_are_named_as_not_saved():
    data, _ = builder_documents.document_form_data(
        {
            "name": "x",
            "workloads": [{"type": "steady", "name": "w", "gpus": 8}],
            "options": [
                {"type": "cloud", "name": "c", "usd_per_gpu_hour": 2},
                {"type": "on_prem", "name": "o", "capex_usd_per_server": 1, "server_kw": 1},
            ],
        }
    )
    assert not any(form.unsaved() for form in builder_aggregate.ScenarioBuilder(data).options.forms)
    data["options-0-pue"] = "1.4"  # typed while the option was on-prem
    data["options-0-committed_gpus"] = "16"  # typed while its billing was committed
    data["workloads-0-mfu"] = " 0.5 "  # typed while the workload was training
    data["options-1-server_kw"] = "10.2"  # its own field: saved
    builder = builder_aggregate.ScenarioBuilder(data)
    option = builder.options.forms[0]
    assert option.unsaved() == [("Committed GPUs", "16"), ("PUE", "1.4")]
    assert option.unsaved_text() == (
        "Not saved with this type and billing: Committed GPUs = 16, PUE = 1.4. "
        "Switch back to keep them."
    )
    assert builder.options.forms[1].unsaved_text() == ""
    assert builder.workloads.forms[0].unsaved_text() == (
        "Not saved with this type: MFU (model FLOPs utilization) = 0.5. Switch back to keep it."
    )
    assert builder.is_valid()
    document = builder.document()
    assert "pue" not in document["options"][0] and "committed_gpus" not in document["options"][0]
    assert document["options"][1]["server_kw"] == 10.2
    assert builder.unsaved() == [
        "workload 1 “w” (MFU (model FLOPs utilization) = 0.5)",
        "option 1 “c” (Committed GPUs = 16, PUE = 1.4)",
    ]


@settings(max_examples=examples(150), deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_in_a_field_is_written_whole_and_never_in_exponent_form(value):
    document = {"horizon_months": 36, "workloads": [], "options": []}
    document["workloads"] = [{"type": "training", "name": "t", "gpu": "h100-sxm",
                              "flops_per_run": value}]  # fmt: skip
    data, _leftovers = builder_documents.document_form_data(document)
    text = data["workloads-0-flops_per_run"]
    assert "e" not in text.lower() and float(text) == value, text
    assert "." in text  # read back as a float


def test_a_huge_flop_count_reads_as_digits_in_its_field():
    document = {"horizon_months": 36, "options": []}
    document["workloads"] = [{"type": "training", "name": "t", "gpu": "h100-sxm",
                              "flops_per_run": 4.2359999999999993e20}]  # fmt: skip
    data, _leftovers = builder_documents.document_form_data(document)
    assert data["workloads-0-flops_per_run"] == "423599999999999930000.0"
