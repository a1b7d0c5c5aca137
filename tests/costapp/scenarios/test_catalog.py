"""The seam between the catalog and the engine: catalog rows (Decimal) become the engine's
TypedDicts (floats) in costapp/scenarios/catalog.py; database errors are never "not in the catalog";
the shipped GPU table stands in only where the command line chooses it, and says so."""

import pytest
from django.db import DatabaseError, connection

from costapp.scenarios import catalog as scenario_catalog
from costapp.scenarios.services import scenario_simulate
from costapp.tco import ScenarioError
from hardware.models import DedicatedQuote, GpuModel, PurchaseQuote


def rent_document(**option):
    return {
        "name": "seam",
        "workloads": [{"type": "steady", "name": "w", "gpus": 8}],
        "options": [{"type": "cloud", "name": "rent", "usd_per_gpu_hour": 2.0, **option}],
    }


def test_the_engine_shapes_hold_floats_equal_to_the_catalog_rows(catalog):
    refs = scenario_catalog.scenario_catalog_refs(
        {
            "options": [
                {"offer": {"provider": "aws", "instance": "p5.48xlarge", "region": "us-east-1"}},
                {"type": "dedicated", "quote": DedicatedQuote.objects.first().pk},
                {"type": "on_prem", "quote": PurchaseQuote.objects.first().pk},
                {"egress_provider": "aws"},
            ]
        }
    )
    offer = refs.offers[("aws", "p5.48xlarge", "us-east-1")]
    assert offer == scenario_catalog.offer_terms(
        provider="aws", instance="p5.48xlarge", region="us-east-1"
    )
    assert all(type(price) is float for price in offer["usd_per_gpu_hour"].values())
    (dedicated,) = refs.dedicated_quotes.values()
    assert type(dedicated["usd_per_server_month"]) is float
    (purchase,) = refs.purchase_quotes.values()
    assert type(purchase["capex_usd_per_server"]) is float
    assert refs.egress_providers["aws"] == scenario_catalog.provider_egress_tiers("aws")
    figures, source = scenario_catalog.engine_gpu_figures()
    assert source == "catalog"
    h100 = GpuModel.objects.get(slug="h100-sxm")
    assert figures["h100-sxm"]["memory_gb"] == float(h100.memory_gb)
    assert all(type(v) in (float, type(None)) for v in figures["h100-sxm"].values())


@pytest.mark.django_db
def test_a_database_error_is_not_taken_for_a_reference_missing_from_the_catalog():
    with connection.cursor() as cursor:
        # rolled back with the test (a rename works on SQLite and PostgreSQL alike)
        cursor.execute("ALTER TABLE hardware_egresstier RENAME TO hardware_egresstier_gone")
    with pytest.raises(DatabaseError):
        scenario_catalog.scenario_catalog_refs(rent_document(egress_provider="aws"))


@pytest.mark.django_db
def test_a_database_error_reading_gpus_propagates_unless_the_command_line_chose_the_table():
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {GpuModel._meta.db_table} RENAME TO gpumodel_gone")
    with pytest.raises(DatabaseError):
        scenario_catalog.engine_gpu_figures()
    # the command line may choose the shipped table over a catalog it cannot read
    figures, source = scenario_catalog.engine_gpu_figures(table_fallback=True)
    assert source == "table" and figures["h100-sxm"]["memory_gb"] == 80.0


@pytest.mark.django_db
def test_without_gpus_in_the_catalog_a_request_gets_no_table_but_the_command_line_may():
    assert scenario_catalog.engine_gpu_figures() == ({}, "catalog")
    with pytest.raises(ScenarioError) as caught:
        scenario_simulate(document=rent_document())
    assert [str(e) for e in caught.value.errors] == ['workloads[0].gpu: unknown GPU "h100-sxm"']
    result = scenario_simulate(document=rent_document(), gpu_table_fallback=True)
    assert scenario_catalog.GPU_TABLE_WARNING in result["warnings"]
    assert result["options"][0]["total_usd"] == 8 * 730 * 2.0 * 36
