"""The refresh runs API (admins: list, held run's diff, approve, discard) and the prices that
moved since a day (viewers), over HTTP with the role groups."""

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone

from accounts.roles import ADMIN, VIEWER
from hardware.models import InstancePrice, RefreshRun
from hardware.refresh.pipeline import price_refresh
from hardware.selectors import current_prices
from tests.factories import UserFactory

SAMPLES = Path(__file__).resolve().parents[1] / "feed_samples"
ORACLE = SAMPLES / "opencost_oracle_prices_usd.json"
D = Decimal
H100 = ("BM.GPU.H100.8", "global", "on_demand")


def oracle_with(tmp_path: Path, gpu_hour: dict[str, float]) -> Path:
    document = json.loads(ORACLE.read_text())
    for item in document["items"]:
        if item["partNumber"] in gpu_hour:
            item["currencyCodeLocalizations"][0]["prices"][0]["value"] = gpu_hour[
                item["partNumber"]
            ]
    path = tmp_path / "oracle.json"
    path.write_text(json.dumps(document))
    return path


def current_of(provider: str) -> dict[tuple[str, str, str], Decimal]:
    return {
        (p.offer.instance_type, p.region.code, p.billing): p.usd_per_hour
        for p in current_prices().filter(offer__provider__slug=provider)
    }


@pytest.fixture
def user_with(db):
    def make(role: str):
        return UserFactory(username=f"u-{role}", roles=[role])

    return make


@pytest.fixture
def held_run(catalog, tmp_path) -> RefreshRun:
    price_refresh(source="oracle", paths=[ORACLE], provider="oracle")
    run = price_refresh(
        source="oracle", paths=[oracle_with(tmp_path, {"B98415": 50})], provider="oracle"
    )
    assert run.status == "held"
    return run


def test_anonymous_requests_get_401(client, held_run):
    for path in ("/api/v1/refresh-runs/", "/api/v1/prices/changes/?since=2026-01-01"):
        assert client.get(path).status_code == 401, path
    assert client.post(f"/api/v1/refresh-runs/{held_run.pk}/approve/").status_code == 401


def test_runs_and_decisions_are_for_admins_only(client, held_run, user_with):
    client.force_login(user_with(VIEWER))
    assert client.get("/api/v1/refresh-runs/").status_code == 403
    for verb in ("approve", "discard"):
        response = client.post(f"/api/v1/refresh-runs/{held_run.pk}/{verb}/")
        assert response.status_code == 403
        assert response.json()["errors"][0]["field"] is None
    assert RefreshRun.objects.get(pk=held_run.pk).status == "held"


def test_admin_approves_a_held_run_and_it_changes_exactly_its_diff(client, held_run, user_with):
    client.force_login(user_with(ADMIN))
    listed = client.get("/api/v1/refresh-runs/?status=held").json()
    assert [r["id"] for r in listed["results"]] == [held_run.pk]
    detail = client.get(f"/api/v1/refresh-runs/{held_run.pk}/").json()
    assert detail["status"] == "held" and detail["held_reasons"]
    shown = {
        (c["instance_type"], c["region"], c["billing"]): (D(c["old_usd_per_hour"]), D(c["new_usd_per_hour"]))
        for c in detail["diff"]["prices"]
    }  # fmt: skip
    assert shown == {H100: (D("80"), D("400"))}
    before = current_of("oracle")
    response = client.post(f"/api/v1/refresh-runs/{held_run.pk}/approve/")
    assert response.status_code == 200 and response.json()["status"] == "approved"
    after = current_of("oracle")
    assert {k: (before[k], after[k]) for k in before if before[k] != after[k]} == shown
    again = client.post(f"/api/v1/refresh-runs/{held_run.pk}/approve/")
    assert again.status_code == 409
    assert "approved, not held" in again.json()["errors"][0]["message"]


def test_admin_discards_a_held_run_and_nothing_changes(client, held_run, user_with):
    client.force_login(user_with(ADMIN))
    rows_before = InstancePrice.objects.count()
    before = current_of("oracle")
    response = client.post(f"/api/v1/refresh-runs/{held_run.pk}/discard/")
    assert response.status_code == 200 and response.json()["status"] == "discarded"
    assert current_of("oracle") == before and InstancePrice.objects.count() == rows_before
    assert response.json()["diff"] == {"prices": [], "egress_tiers": []}


def test_price_changes_since_a_day_say_what_moved_and_by_how_much(
    client, catalog, tmp_path, user_with
):
    price_refresh(source="oracle", paths=[ORACLE], provider="oracle")
    a_month_ago = timezone.now() - timedelta(days=30)
    InstancePrice.objects.update(first_seen=a_month_ago, last_seen=a_month_ago)
    run = price_refresh(
        source="oracle", paths=[oracle_with(tmp_path, {"B98415": 11})], provider="oracle"
    )
    assert run.status == "applied"
    client.force_login(user_with(VIEWER))
    today = timezone.now().date()
    body = client.get(f"/api/v1/prices/changes/?since={today}").json()
    assert body["count"] == 1
    (change,) = body["results"]
    assert (change["kind"], change["provider"], change["instance_type"], change["gpu_count"]) == (
        "changed", "oracle", "BM.GPU.H100.8", 8,
    )  # fmt: skip
    assert (change["old_usd_per_hour"], change["new_usd_per_hour"]) == (
        "80.0000000000", "88.0000000000",
    )  # fmt: skip
    assert (change["change_usd_per_hour"], change["change_ratio"]) == ("8.0000000000", "0.100000")
    assert (change["old_usd_per_gpu_hour"], change["new_usd_per_gpu_hour"]) == (
        "10.0000000000", "11.0000000000",
    )  # fmt: skip
    week = client.get(f"/api/v1/prices/changes/?since={today - timedelta(days=7)}").json()
    assert week["results"] == body["results"]
    since = today - timedelta(days=40)  # before anything was loaded: every current price is new
    earlier = client.get(f"/api/v1/prices/changes/?since={since}&page_size=500").json()
    assert earlier["count"] == current_prices().count()
    assert {c["kind"] for c in earlier["results"]} == {"added"}
    oracle = client.get(f"/api/v1/prices/changes/?since={since}&page=2&page_size=500").json()
    h100 = next(
        c for c in earlier["results"] + oracle["results"] if c["instance_type"] == "BM.GPU.H100.8"
    )
    assert (h100["old_usd_per_hour"], h100["new_usd_per_hour"]) == (None, "88.0000000000")
    tomorrow = client.get(f"/api/v1/prices/changes/?since={today + timedelta(days=1)}").json()
    assert tomorrow["count"] == 0


def test_price_changes_need_a_day(client, db, user_with):
    client.force_login(user_with(VIEWER))
    for query, message in (
        ("", "required"),
        ("?since=30-11-2026", "is not a day"),
        ("?since=0001-01-01", "must be after 0001-01-01"),  # no day before it to compare with
    ):
        response = client.get(f"/api/v1/prices/changes/{query}")
        assert response.status_code == 400
        (error,) = response.json()["errors"]
        assert error["field"] == "since" and message in error["message"]


def test_admin_page_of_a_held_run_shows_its_diff(admin_client, held_run):
    page = admin_client.get(f"/admin/hardware/refreshrun/{held_run.pk}/change/")
    assert page.status_code == 200
    assert "changed: BM.GPU.H100.8 global on_demand: 80.0000000000 -&gt; 400.0000000000 USD/h" in (
        page.content.decode()
    )


def test_price_changes_list_a_vanished_price_with_its_old_value(
    client, catalog, tmp_path, user_with
):
    price_refresh(source="oracle", paths=[ORACLE], provider="oracle")
    a_month_ago = timezone.now() - timedelta(days=30)
    InstancePrice.objects.update(first_seen=a_month_ago, last_seen=a_month_ago)
    document = json.loads(ORACLE.read_text())
    document["items"] = [i for i in document["items"] if i["partNumber"] != "B98415"]
    path = tmp_path / "oracle.json"
    path.write_text(json.dumps(document))
    assert price_refresh(source="oracle", paths=[path], provider="oracle").status == "applied"
    client.force_login(user_with(VIEWER))
    body = client.get(f"/api/v1/prices/changes/?since={timezone.now().date()}").json()
    (change,) = body["results"]
    assert (change["kind"], change["instance_type"]) == ("vanished", "BM.GPU.H100.8")
    assert (change["old_usd_per_hour"], change["new_usd_per_hour"]) == ("80.0000000000", None)
    assert change["change_usd_per_hour"] is None and change["change_ratio"] is None
