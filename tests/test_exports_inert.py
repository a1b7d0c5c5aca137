"""Every CSV and XLSX the product writes, downloaded with hostile names in every text a user or a
feed wrote: no cell that a spreadsheet would evaluate."""

import csv
import io
import re
from decimal import Decimal

import openpyxl
import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from accounts.roles import VIEWER
from accounts.services import token_create
from costapp.celery import app
from costapp.models import Scenario
from costapp.runs import pipeline
from hardware.display.cells import cell_inert
from hardware.models import GpuModel
from tests.costapp.runs_helpers import analyst, scenario_document
from tests.factories import UserFactory
from tests.hardware.factories import InstanceOfferFactory, InstancePriceFactory, ProviderFactory

pytestmark = pytest.mark.django_db

HOSTILE = ['=HYPERLINK("http://x","y")', "+1", "-1", "@SUM(1)"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def csv_evaluable(text: str) -> list[str]:
    """The cells of a CSV a spreadsheet would read as a formula (a number is a number)."""
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    return [c for c in cells if c.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(c)]


def workbook_evaluable(body: bytes) -> list[str]:
    """The cells of a workbook that openpyxl reads as formulas, or as text a spreadsheet would
    take as one."""
    book = openpyxl.load_workbook(io.BytesIO(body))
    found = []
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.data_type == "f" or (
                    isinstance(cell.value, str) and cell.value.startswith(FORMULA_STARTS)
                ):
                    found.append(f"{sheet.title}!{cell.coordinate}={cell.value!r}")
    return found


def test_the_rule_leaves_numbers_and_plain_text_alone():
    assert [cell_inert(v) for v in HOSTILE] == ["'" + v for v in HOSTILE]
    assert cell_inert("\tx") == "'\tx" and cell_inert("\rx") == "'\rx"
    assert [cell_inert(v) for v in (-1, -1.5, Decimal("-2"), None, "a=b", "h100")] == [
        -1,
        -1.5,
        Decimal("-2"),
        None,
        "a=b",
        "h100",
    ]


@pytest.fixture
def hostile_run(catalog):
    """A succeeded run of a scenario and options named with hostile text, one option priced by
    an offer whose provider, instance type, region, zone and source are hostile too."""
    provider = ProviderFactory(slug="-1", name=HOSTILE[0])
    offer = InstanceOfferFactory(
        provider=provider, instance_type=HOSTILE[0], gpu=GpuModel.objects.get(slug="h100-sxm")
    )
    InstancePriceFactory(
        offer=offer,
        region__code=HOSTILE[3],
        zone=HOSTILE[1],
        usd_per_hour=Decimal("20"),
        source_name=HOSTILE[1],
    )
    document = scenario_document("h100-fleet-buy-vs-rent")
    document["name"] = HOSTILE[0]
    document.pop("baseline", None)
    document["options"] = [
        {
            "name": HOSTILE[0],
            "type": "cloud",
            "billing": "on_demand",
            "offer": {"provider": "-1", "instance": HOSTILE[0], "region": HOSTILE[3]},
        },
        *(
            {"name": name, "type": "cloud", "billing": "on_demand", "usd_per_gpu_hour": 3.0}
            for name in HOSTILE[1:]
        ),
    ]
    scenario = Scenario.objects.create(owner=analyst("olive"), name=HOSTILE[0], document=document)
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        with override_settings(REDIS_URL=""):
            run = pipeline.run_create(scenario=scenario)
    finally:
        app.conf.task_always_eager = before
    assert run.status == "succeeded", run.error
    assert any(HOSTILE[1] in row["source"] for row in run.result["sources"])  # the feed's name
    return run


def test_no_export_holds_a_cell_a_spreadsheet_evaluates(client, hostile_run):
    run = hostile_run
    owner = run.scenario.owner
    client.force_login(owner)
    api = APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=owner)[1]}")
    page = client.post(f"/runs/{run.pk}/links/", follow=True).content.decode()
    shared = re.search(r"http://testserver(/shared/[\w-]+/)", page)
    assert shared, page
    viewer = UserFactory(username="v", roles=[VIEWER])
    catalog_api = APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=viewer)[1]}")

    csvs = {
        "monthly.csv": api.get(f"/api/v1/runs/{run.pk}/monthly.csv"),
        "shared monthly.csv": Client().get(f"{shared[1]}monthly.csv"),
        "prices/current.csv": catalog_api.get("/api/v1/prices/current.csv", {"provider": "-1"}),
    }
    books = {
        "run.xlsx": client.get(f"/runs/{run.pk}/run.xlsx"),
        "shared run.xlsx": Client().get(f"{shared[1]}run.xlsx"),
        "prices/current.xlsx": catalog_api.get("/api/v1/prices/current.xlsx", {"provider": "-1"}),
    }
    for name, response in csvs.items():
        assert response.status_code == 200, name
        text = response.content.decode()
        assert all(f"'{hostile}" in text for hostile in HOSTILE[1:]), (name, text[:400])
        assert csv_evaluable(text) == [], name
    prices = list(csv.DictReader(io.StringIO(csvs["prices/current.csv"].content.decode())))
    assert prices[0]["usd_per_hour"] == "20.0000000000"  # money stays a number
    assert prices[0]["instance_type"] == "'" + HOSTILE[0]
    monthly = list(csv.DictReader(io.StringIO(csvs["monthly.csv"].content.decode())))
    assert {row["option"] for row in monthly} == {"'" + hostile for hostile in HOSTILE}
    for name, response in books.items():
        assert response.status_code == 200, name
        assert workbook_evaluable(response.content) == [], name
        book = openpyxl.load_workbook(io.BytesIO(response.content))
        texts = {c.value for s in book.worksheets for r in s.iter_rows() for c in r}
        assert "'" + HOSTILE[0] in texts, name
    options = openpyxl.load_workbook(io.BytesIO(books["run.xlsx"].content))["options"]
    assert all(row[5].data_type == "n" for row in options.iter_rows(min_row=2))  # total_usd
