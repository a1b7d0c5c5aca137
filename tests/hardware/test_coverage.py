"""What the catalog cannot name: every refresh and catalog load records the GPU and instance
names it could not map (``hardware.coverage``); ``/catalog/coverage/`` and
``GET /api/v1/coverage/`` list them per source and run, newest first."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from accounts.roles import VIEWER
from accounts.services import token_create
from hardware.coverage import coverage_record, unmapped_names
from hardware.models import CoverageReport, Provider, ProviderKind, Region
from hardware.refresh.pipeline import price_refresh
from hardware.sources.common import ParseReport, RowRejected
from tests.factories import UserFactory
from tests.roles import user_with_role

SKYPILOT = Path(__file__).resolve().parents[2] / "hardware" / "data" / "prices" / "skypilot-v8"
T0 = datetime(2026, 12, 1, tzinfo=UTC)


def report_of(*rejections: tuple[int, str, str, str], rows: int = 10) -> ParseReport:
    report = ParseReport(file_name="feed.csv", sha256="", rows_read=rows)
    for line, reason, detail, subject in rejections:
        report.reject(line, RowRejected(reason, detail, subject))
    return report


def test_unmapped_names_are_counted_per_name_and_reason_with_the_first_row_as_example():
    report = report_of(
        (4, "unknown GPU name", "'Zorblax' (instance 'z1') has no row", "Zorblax"),
        (9, "unknown GPU name", "'Zorblax' (instance 'z8') has no row", "Zorblax"),
        (5, "GPU variant not settled", "'A800' in 'a8': PCIe or SXM", "A800"),
        (6, "no GPU", "cpu_4x has no GPU", ""),
        (7, "not a known GPU instance", "Standard_X9 in eastus is not listed", "Standard_X9"),
    )
    report.dropped_by_reason["unknown GPU name"] += 3
    names = [(n.kind, n.name, n.reason, n.rows, n.example_line) for n in unmapped_names(report)]
    assert names == [
        ("gpu", "(more rows, not listed one by one)", "unknown GPU name", 3, None),
        ("gpu", "Zorblax", "unknown GPU name", 2, 4),
        ("gpu", "A800", "GPU variant not settled", 1, 5),
        ("instance", "Standard_X9", "not a known GPU instance", 1, 7),
    ]
    assert unmapped_names(report)[1].example == "'Zorblax' (instance 'z1') has no row"


def test_load_catalog_records_each_file_and_the_names_it_could_not_map(catalog):
    loads = CoverageReport.objects.filter(source=CoverageReport.LOAD_CATALOG)
    by_provider = {r.provider: r for r in loads if r.provider}
    assert set(by_provider) == {p.stem for p in SKYPILOT.glob("*.csv")}
    cudo = {(n.kind, n.name, n.reason): n.rows for n in by_provider["cudo"].names.all()}
    assert cudo == {("gpu", "V100", "GPU variant not settled"): 13}  # 16 or 32 GB: not said
    assert by_provider["lambda"].rows_unmapped == 0
    several = [r for r in loads if not r.provider]  # the committed and Epoch files
    named = {n.name for report in several for n in report.names.all()}
    assert {"NVIDIA P100", "Google TPU v4"} <= named, named
    for report in loads:
        assert report.rows_unmapped == sum(n.rows for n in report.names.all())
        assert report.refresh_run is None


def test_a_refresh_by_hand_records_its_run_s_unmapped_names(catalog, tmp_path):
    feed = tmp_path / "hyperstack.csv"
    feed.write_text(
        (SKYPILOT / "hyperstack.csv").read_text()
        + "n9-Zorblax,Zorblax-9000,1,28,120.0,,2.5,CANADA-1,\n"
        + "n9-Zorblax2,Zorblax-9000,2,28,120.0,,5.0,CANADA-1,\n"
    )
    run = price_refresh(source="skypilot", paths=[feed], provider="hyperstack")
    coverage = run.coverage
    assert (coverage.source, coverage.provider, coverage.rows_read) == (
        "skypilot",
        "hyperstack",
        27,
    )
    zorblax = coverage.names.get(name="Zorblax-9000")
    assert (zorblax.kind, zorblax.reason, zorblax.rows, zorblax.example_line) == (
        "gpu",
        "unknown GPU name",
        2,
        27,
    )
    assert "n9-Zorblax" in zorblax.example


@pytest.fixture
def recorded(db):
    old = coverage_record(
        source="skypilot-lambda",
        provider="lambda",
        report=report_of((3, "unknown GPU name", "'Q1' has no row", "Q1")),
        recorded_at=T0,
    )
    new = coverage_record(
        source="skypilot-vast",
        provider="vast",
        report=report_of((8, "GPU variant not settled", "'A800': PCIe or SXM", "A800")),
        recorded_at=T0 + timedelta(hours=1),
    )
    clean = coverage_record(
        source="skypilot-lambda",
        provider="lambda",
        report=report_of(),
        recorded_at=T0 + timedelta(hours=2),
    )
    provider = Provider.objects.create(slug="daytona", name="Daytona", kind=ProviderKind.GPU_CLOUD)
    Region.objects.create(provider=provider, code="earth")
    return old, new, clean


@pytest.fixture
def viewer_api(db) -> APIClient:
    user = UserFactory(username="v", roles=[VIEWER])
    return APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")


def test_the_api_lists_each_run_newest_first_with_its_names(recorded, viewer_api):
    old, new, clean = recorded
    body = viewer_api.get("/api/v1/coverage/").json()
    assert [r["id"] for r in body["results"]] == [clean.pk, new.pk, old.pk]
    assert body["results"][1]["names"] == [
        {
            "kind": "gpu",
            "name": "A800",
            "reason": "GPU variant not settled",
            "rows": 1,
            "example_line": 8,
            "example": "'A800': PCIe or SXM",
        }
    ]
    assert body["results"][0]["rows_unmapped"] == 0 and body["results"][0]["names"] == []
    lambda_only = viewer_api.get("/api/v1/coverage/?source=skypilot-lambda&unmapped=true").json()
    assert [r["id"] for r in lambda_only["results"]] == [old.pk]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("unmapped=maybe", "unmapped"),
        ("provider=lambda", "provider"),
        ("source=" + "x" * 41, "source"),
    ],
)
def test_the_api_refuses_a_bad_filter_naming_it(recorded, viewer_api, query, field):
    answer = viewer_api.get(f"/api/v1/coverage/?{query}")
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json()["errors"]] == [field]


def test_the_api_needs_a_role(recorded):
    assert APIClient().get("/api/v1/coverage/").status_code in (401, 403)


def test_the_page_lists_the_runs_the_newest_of_each_source_and_regions_without_geography(
    client, recorded
):
    client.force_login(user_with_role("viewer", VIEWER))
    page = client.get("/catalog/coverage/")
    assert page.status_code == 200
    html = page.content.decode()
    old, new, _ = recorded
    assert html.index(f'id="coverage-{new.pk}"') < html.index(f'id="coverage-{old.pk}"')
    assert "<code>A800</code>" in html and "<code>Q1</code>" in html
    assert "none: every name mapped" in html  # skypilot-lambda's newest run mapped every name
    assert "<code>earth</code>" in html
    one = client.get("/catalog/coverage/?source=skypilot-vast").content.decode()
    assert "<code>A800</code>" in one and "<code>Q1</code>" not in one
    bad = client.get("/catalog/coverage/?source=nowhere")
    assert bad.status_code == 200 and "Some filters could not be used" in bad.content.decode()


def test_the_page_needs_a_role(client, recorded):
    client.force_login(user_with_role("nobody", None))
    assert client.get("/catalog/coverage/").status_code == 403
