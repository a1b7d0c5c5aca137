"""Refresh integrity on copies of a shipped feed: a bad row ends no good price, a flood of new
offers is held, the lock of a source is one for every path, a run that stopped is failed, an
approval re-checks against the catalog as it is now, and load_catalog keeps refreshed prices."""

import io
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.roles import ADMIN
from hardware.models import GpuModel, InstancePrice, RefreshLock, RefreshRun, StagedPrice
from hardware.refresh.lease import lease_name, refresh_lease
from hardware.refresh.pipeline import (
    CATALOG_MOVED,
    RefreshLocked,
    price_refresh,
    refresh_run_approve,
    refresh_runs_sweep,
)
from hardware.selectors import current_prices
from tests.factories import UserFactory

from .test_pipeline import LAMBDA, current_of, lambda_copy, prices_of, refresh

H100_LINE = "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,"
NEW_TYPES = 10_000


def current_rows() -> list[tuple]:
    """Every current price of every provider: its row and amount (a price seen again in a feed
    that states no date is stated again today, which changes no price)."""
    return sorted(
        current_prices().values_list(
            "pk", "offer__instance_type", "region__code", "billing", "usd_per_hour"
        )
    )


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def write_feed(path: Path, header: str, body: list[str]) -> Path:
    path.write_text("\n".join([header, *body]) + "\n", encoding="utf-8")
    return path


def new_types_feed(tmp_path: Path, *, with_shipped: bool) -> Path:
    """The shipped lambda.csv (or only its header) with 10 000 made-up H100 instance types."""
    header, *body = lines_of(LAMBDA)
    template = next(line for line in body if line.startswith(H100_LINE))
    new = [
        template.replace("gpu_1x_h100_pcie,", f"gpu_1x_h100_pcie_n{i},", 1)
        for i in range(NEW_TYPES)
    ]
    return write_feed(tmp_path / "lambda.csv", header, (body if with_shipped else []) + new)


# --- a rejected row keeps its offer's current price -------------------------------------------


def test_one_negative_price_keeps_that_offers_price_and_the_run_lists_it(catalog, tmp_path):
    before, all_before = prices_of("lambda"), current_rows()
    kept = current_prices().get(
        offer__instance_type="gpu_1x_h100_pcie", region__code="europe-central-1"
    )
    path = lambda_copy(
        tmp_path,
        edit=lambda line: (
            line.replace(",2.49,europe-central-1,", ",-2.49,europe-central-1,", 1)
            if line.startswith(H100_LINE.split(",")[0] + ",")
            else line
        ),
    )
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    assert "refresh skypilot lambda: unchanged" in out
    assert "0 vanished" in out
    assert (
        "line 223 (bad number): gpu_1x_h100_pcie europe-central-1 on_demand kept at 2.4900000000"
    ) in out
    assert prices_of("lambda") == before and current_rows() == all_before
    run = RefreshRun.objects.get()
    (row,) = [r for r in run.prices_kept if r["kept"]]
    assert (row["line"], row["reason"]) == (223, "bad number")
    assert row["kept"] == [
        {
            "instance_type": "gpu_1x_h100_pcie",
            "region": "europe-central-1",
            "billing": "on_demand",
            "price_id": kept.pk,
            "usd_per_hour": "2.4900000000",
        }
    ]


def test_one_conflicting_duplicate_keeps_that_offers_price(catalog, tmp_path):
    before, all_before = prices_of("lambda"), current_rows()
    header, *body = lines_of(LAMBDA)
    (line,) = [b for b in body if b.startswith(H100_LINE + "europe-central-1,")]
    path = write_feed(tmp_path / "lambda.csv", header, [*body, line.replace(",2.49,", ",2.99,", 1)])
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    assert "conflicting duplicate rows: 2" in out and "0 vanished" in out
    assert prices_of("lambda") == before and current_rows() == all_before
    run = RefreshRun.objects.get()
    listed = [(r["line"], r["reason"], len(r["kept"])) for r in run.prices_kept if r["kept"]]
    assert listed == [
        (223, "conflicting duplicate rows", 1),
        (len(body) + 2, "conflicting duplicate rows", 1),
    ]


def test_a_rejected_row_beside_real_changes_keeps_its_price_and_the_rest_applies(catalog, tmp_path):
    path = lambda_copy(
        tmp_path,
        edit=lambda line: line.replace(",23.92,", ",24.50,", 1).replace(
            H100_LINE + "europe-central-1,",
            "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,abc,europe-central-1,",
        ),
    )
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    assert "refresh skypilot lambda: applied" in out and "0 vanished" in out
    now = current_of("lambda")
    assert now[("gpu_1x_h100_pcie", "europe-central-1", "on_demand")] == Decimal("2.49")
    assert now[("gpu_8x_h100_sxm5", "us-east-1", "on_demand")] == Decimal("24.50")


# --- new offers --------------------------------------------------------------------------------


def test_ten_thousand_new_instance_types_are_held_then_a_feed_of_only_those_ends_nothing(
    catalog, tmp_path
):
    all_before, rows_before = current_rows(), InstancePrice.objects.count()
    status, out = refresh("skypilot", "--file", str(new_types_feed(tmp_path, with_shipped=True)))
    assert status == 3, out
    assert f"prices: {NEW_TYPES} added, 0 changed" in out
    lambda_offers = len({key[0] for key in current_of("lambda")})
    assert (
        f"held: {NEW_TYPES} new offer(s) would be added beside the provider's {lambda_offers} "
        "current one(s) (more than 25% of them, or more than 500)"
    ) in out
    assert current_rows() == all_before and InstancePrice.objects.count() == rows_before

    status, out = refresh("skypilot", "--file", str(new_types_feed(tmp_path, with_shipped=False)))
    assert status == 3, out
    in_scope = len(current_of("lambda"))
    assert f"{in_scope} of the provider's {in_scope} current price(s) in this feed's scope" in out
    assert current_rows() == all_before and InstancePrice.objects.count() == rows_before
    assert list(RefreshRun.objects.values_list("status", flat=True)) == ["held", "held"]


def test_a_few_new_offers_apply(catalog, tmp_path, settings):
    settings.PRICE_REFRESH_MAX_NEW_OFFERS = 500
    header, *body = lines_of(LAMBDA)
    template = next(line for line in body if line.startswith(H100_LINE))
    new = [template.replace("gpu_1x_h100_pcie,", f"gpu_1x_h100_pcie_n{i},", 1) for i in range(3)]
    status, out = refresh(
        "skypilot", "--file", str(write_feed(tmp_path / "lambda.csv", header, body + new))
    )
    assert status == 0, out
    assert "prices: 3 added" in out
    settings.PRICE_REFRESH_MAX_NEW_OFFERS = 2
    more = [template.replace("gpu_1x_h100_pcie,", f"gpu_1x_h100_pcie_m{i},", 1) for i in range(3)]
    path = write_feed(tmp_path / "lambda.csv", header, body + new + more)
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 3 and "3 new offer(s) would be added" in out, out


# --- one lock per source ------------------------------------------------------------------------


def test_the_command_finding_the_lock_held_exits_4_and_writes_no_run(catalog, tmp_path):
    before = prices_of("lambda")
    path = lambda_copy(tmp_path, edit=lambda line: line.replace(",23.92,", ",24.50,", 1))
    err = io.StringIO()
    # the hand refresh of lambda's SkyPilot file takes the lock of the scheduled skypilot-lambda
    with refresh_lease(source="skypilot-lambda"):
        with pytest.raises(SystemExit) as exited:
            call_command(
                "refresh_prices", "skypilot", "--file", str(path), stdout=io.StringIO(), stderr=err
            )
        assert exited.value.code == 4
        assert "a refresh of skypilot-lambda is already running" in err.getvalue()
        assert not RefreshRun.objects.exists()
        with refresh_lease(source="oracle", renew=False):  # another source's lock is free
            pass
    assert prices_of("lambda") == before
    assert refresh("skypilot", "--file", str(path))[0] == 0  # the lock was given back


def test_an_approval_while_another_refresh_of_the_source_runs_is_refused(catalog, tmp_path):
    run = price_refresh(
        source="skypilot",
        paths=[lambda_copy(tmp_path, keep=lambda i, _: i < 50)],
        provider="lambda",
    )
    assert run.status == "held"
    with refresh_lease(source="skypilot-lambda"), pytest.raises(RefreshLocked):
        refresh_run_approve(run_id=run.pk)
    assert RefreshRun.objects.get(pk=run.pk).status == "held"


def stopped_run(source: str = "skypilot") -> RefreshRun:
    """What a refresh killed mid-apply leaves: a running run with staged rows, and its lease
    (renewed no more) lapsed."""
    run = RefreshRun.objects.create(
        source=source, provider="lambda", feed_name="lambda.csv", started_at=timezone.now()
    )
    StagedPrice.objects.create(
        run=run, line_no=2, instance_type="x", gpu_slug="h100-sxm", gpu_count=1, region="r",
        billing="on_demand", usd_per_hour=Decimal("1"),
    )  # fmt: skip
    RefreshLock.objects.update_or_create(
        source=lease_name(source=source, provider="lambda"),
        defaults={"token": "dead", "locked_until": timezone.now() - timedelta(seconds=1)},
    )
    return run


def test_the_next_refresh_fails_a_run_that_stopped_and_removes_its_staged_rows(catalog):
    dead = stopped_run()
    status, out = refresh("skypilot", "--provider", "lambda")
    assert status == 0, out
    dead.refresh_from_db()
    assert dead.status == "failed" and dead.finished_at is not None
    assert dead.error.startswith("stopped without finishing")
    assert "found by the next refresh of skypilot-lambda" in dead.error
    assert not StagedPrice.objects.filter(run=dead).exists()


def test_the_sweep_fails_a_stopped_run_and_leaves_a_live_one(catalog, settings):
    dead = stopped_run()
    with refresh_lease(source="oracle"):
        live = RefreshRun.objects.create(
            source="oracle", provider="oracle", feed_name="o", started_at=timezone.now()
        )
        assert refresh_runs_sweep() == [dead.pk]
    dead.refresh_from_db()
    assert dead.status == "failed" and "found by beat's sweep" in dead.error
    assert not StagedPrice.objects.filter(run=dead).exists()
    assert RefreshRun.objects.get(pk=live.pk).status == "running"
    assert RefreshLock.objects.get(source="skypilot-lambda").token == ""  # the sweep gave it back
    assert "price-refresh-sweep" in settings.CELERY_BEAT_SCHEDULE
    entry = settings.CELERY_BEAT_SCHEDULE["price-refresh-sweep"]
    assert entry["task"] == "hardware.refresh_runs_sweep" and entry["schedule"] <= 600


def test_a_live_lease_is_not_taken_and_a_lapsed_one_is(db, settings):
    settings.PRICE_REFRESH_LEASE_SECONDS = 120
    with refresh_lease(source="aws") as lease:
        with pytest.raises(RefreshLocked, match="already running"), refresh_lease(source="aws"):
            pass
        RefreshLock.objects.filter(source="aws").update(
            locked_until=timezone.now() - timedelta(seconds=1)
        )
        with refresh_lease(source="aws", renew=False):
            assert not lease.renew()  # taken over: the first holder's lease is gone
            with pytest.raises(RuntimeError, match="taken by another refresh"):
                lease.confirm()


# --- approvals --------------------------------------------------------------------------------


def test_an_approval_after_the_catalog_moved_holds_the_run_again_with_the_new_diff(
    catalog, tmp_path, client
):
    moved = lambda_copy(tmp_path, edit=lambda line: line.replace(",23.92,", ",239.2,", 1))
    run = price_refresh(source="skypilot", paths=[moved], provider="lambda")
    assert run.status == "held"
    held_changes = run.prices_changed
    # meanwhile another refresh of lambda applies: one price it also states moves
    other = tmp_path / "other"
    other.mkdir()
    h100_row = (
        H100_LINE + "europe-central-1,",
        "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.59,europe-central-1,",
    )
    applied = price_refresh(
        source="skypilot",
        paths=[lambda_copy(other, edit=lambda line: line.replace(*h100_row))],
        provider="lambda",
    )
    assert applied.status == "applied" and applied.prices_changed == 1
    before = current_rows()

    client.force_login(UserFactory(username="admin", roles=[ADMIN]))
    response = client.post(f"/api/v1/refresh-runs/{run.pk}/approve/")
    assert response.status_code == 409
    assert CATALOG_MOVED in response.json()["errors"][0]["message"]
    assert current_rows() == before
    run.refresh_from_db()
    assert run.status == "held" and run.held_reasons[0] == CATALOG_MOVED
    assert run.prices_changed == held_changes + 1  # the staged 2.49 now changes the 2.59
    diff = client.get(f"/api/v1/refresh-runs/{run.pk}/").json()["diff"]["prices"]
    (h100,) = [
        c
        for c in diff
        if c["instance_type"] == "gpu_1x_h100_pcie" and c["region"] == "europe-central-1"
    ]
    assert (h100["old_usd_per_hour"], h100["new_usd_per_hour"]) == ("2.5900000000", "2.4900000000")
    # reviewed again, with the catalog unchanged since: applied as staged
    approved = refresh_run_approve(run_id=run.pk)
    assert approved.status == "approved"
    now = current_of("lambda")
    assert now[("gpu_1x_h100_pcie", "europe-central-1", "on_demand")] == Decimal("2.49")
    assert now[("gpu_8x_h100_sxm5", "us-east-1", "on_demand")] == Decimal("239.2")


# --- load_catalog keeps refreshed prices --------------------------------------------------------


def test_load_catalog_after_a_refresh_leaves_every_refreshed_price_unchanged(catalog, tmp_path):
    def raised(line: str) -> str:
        cells = line.split(",")
        if cells[5]:  # Price
            cells[5] = str((Decimal(cells[5]) * Decimal("1.01")).quantize(Decimal("0.0001")))
        return ",".join(cells)

    path = lambda_copy(tmp_path, edit=raised)
    run = price_refresh(source="skypilot", paths=[path], provider="lambda")
    assert run.status == "applied" and run.prices_changed > 100
    refreshed = {
        p.pk: (p.usd_per_hour, p.stated_on)
        for p in current_prices().filter(offer__provider__slug="lambda", billing="on_demand")
    }
    assert {stated for _, stated in refreshed.values()} == {timezone.localdate()}
    out = io.StringIO()
    call_command("load_catalog", stdout=out)
    assert "a price stated later is kept" in out.getvalue()
    after = {
        p.pk: (p.usd_per_hour, p.stated_on)
        for p in current_prices().filter(offer__provider__slug="lambda", billing="on_demand")
    }
    assert after == refreshed


def test_load_catalog_if_empty_loads_an_empty_catalog_only(db):
    out = io.StringIO()
    call_command("load_catalog", "--if-empty", stdout=out)
    assert GpuModel.objects.exists() and current_prices().count() > 800
    rows = InstancePrice.objects.count()
    out = io.StringIO()
    call_command("load_catalog", "--if-empty", stdout=out)
    assert out.getvalue().strip() == "the catalog is already loaded: nothing done (--if-empty)"
    assert InstancePrice.objects.count() == rows
