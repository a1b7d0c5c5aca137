"""Price refreshes: feeds applied safely, held for review when they look wrong, hand edits kept,
and the refresh_prices command's summary and exit status."""

import io
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from bench.aws_offer_file import write_offer_file
from hardware.data_files import SKYPILOT_DIR
from hardware.models import (
    EgressTier,
    InstancePrice,
    Provider,
    RefreshRun,
    StagedPrice,
)
from hardware.refresh import pipeline as refresh_module
from hardware.refresh.pipeline import (
    RefreshError,
    price_refresh,
    refresh_run_approve,
    refresh_run_discard,
)
from hardware.selectors import current_prices

LAMBDA = SKYPILOT_DIR / "lambda.csv"


def refresh(*args: str) -> tuple[int, str]:
    """Run refresh_prices; return its exit status and what it printed."""
    out = io.StringIO()
    try:
        call_command("refresh_prices", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code), out.getvalue()
    return 0, out.getvalue()


def prices_of(provider: str) -> list[tuple]:
    """Every price row of a provider (current or not), with what makes it current."""
    return sorted(
        InstancePrice.objects.filter(offer__provider__slug=provider).values_list(
            "offer__instance_type", "region__code", "billing", "usd_per_hour", "first_seen",
            "vanished_at",
        )
    )  # fmt: skip


def current_of(provider: str) -> dict[tuple[str, str, str], Decimal]:
    return {
        (p.offer.instance_type, p.region.code, p.billing): p.usd_per_hour
        for p in current_prices().filter(offer__provider__slug=provider)
    }


def lambda_copy(tmp_path: Path, edit=None, keep=None) -> Path:
    """A copy of the shipped lambda.csv; ``edit(line) -> line``; ``keep(index, line) -> bool``."""
    lines = LAMBDA.read_text(encoding="utf-8").splitlines()
    header, body = lines[0], lines[1:]
    if keep:
        body = [line for i, line in enumerate(body) if keep(i, line)]
    if edit:
        body = [edit(line) for line in body]
    path = tmp_path / "lambda.csv"
    path.write_text("\n".join([header, *body]) + "\n", encoding="utf-8")
    return path


def hand_edit(price: InstancePrice, usd_per_hour: str) -> None:
    """What an admin edit does: the value changes in place, history records it without a load."""
    price.usd_per_hour = Decimal(usd_per_hour)
    price._change_reason = "corrected from the vendor's invoice"
    price.save()


# --- SkyPilot feeds --------------------------------------------------------------------------


def test_a_skypilot_feed_of_a_new_cloud_creates_the_provider_and_its_prices(
    catalog, tmp_path, settings
):
    settings.PRICE_REFRESH_PROVIDER_KINDS = {"nimbus": "marketplace"}
    path = tmp_path / "nimbus.csv"
    path.write_text(
        "Region,Price,AcceleratorName,InstanceType,AcceleratorCount,SpotPrice,Colour\n"
        "north-1,19.92,H100,nb.8xh100,8,,blue\n"
        "north-1,1.10,L4,nb.1xl4,1,0.55,red\n"
    )
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    assert "refresh skypilot nimbus: applied" in out
    assert "prices: 3 added, 0 changed, 0 unchanged, 0 vanished" in out
    provider = Provider.objects.get(slug="nimbus")
    assert provider.kind == "marketplace"
    assert current_of("nimbus") == {
        ("nb.8xh100", "north-1", "on_demand"): Decimal("19.92"),
        ("nb.1xl4", "north-1", "on_demand"): Decimal("1.10"),
        ("nb.1xl4", "north-1", "spot"): Decimal("0.55"),
    }
    gpu_hour = current_prices().get(offer__instance_type="nb.8xh100").usd_per_gpu_hour
    assert gpu_hour == Decimal("2.49")
    run = RefreshRun.objects.get()
    assert (run.rows_read, run.rows_accepted, run.rows_rejected) == (2, 2, 0)
    assert run.feed_sha256 and run.bytes_read == path.stat().st_size
    assert not StagedPrice.objects.exists()  # staging is emptied once applied


def test_a_refreshed_price_is_dated_flagged_and_filed_as_the_catalog_loader_files_it(
    catalog, tmp_path
):
    path = tmp_path / "nimbus.csv"
    path.write_text(
        "Region,Price,AcceleratorName,InstanceType,AcceleratorCount,SpotPrice\n"
        "north-1,19.92,H100,nb.8xh100,8,\n"
        "north-1,1.10,L4,nb.1xl4,1,0.11\n"
    )
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    prices = {(p.offer.instance_type, p.billing): p for p in current_prices().filter(
        offer__provider__slug="nimbus")}  # fmt: skip
    # a SkyPilot feed states no date: its prices are stated the day they are loaded
    assert {p.stated_on for p in prices.values()} == {timezone.localdate()}
    spot = prices[("nb.1xl4", "spot")]
    assert spot.flag.startswith("spot is a tenth of on-demand") and not spot.note
    assert not prices[("nb.1xl4", "on_demand")].flag
    h100 = prices[("nb.8xh100", "on_demand")].offer
    assert (h100.gpu.slug, h100.gpu_confirmed) == ("h100-pcie", False) and h100.gpu_evidence


def test_an_unknown_provider_gets_the_gpu_cloud_kind_by_default(catalog, tmp_path):
    path = tmp_path / "othercloud.csv"
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,Region,Price\nx,L4,1,r,0.8\n")
    assert refresh("skypilot", "--file", str(path))[0] == 0
    assert Provider.objects.get(slug="othercloud").kind == "gpu-cloud"


def test_applying_the_same_feed_twice_adds_nothing(catalog):
    before = prices_of("lambda")
    status, out = refresh("skypilot", "--provider", "lambda")
    assert status == 0, out
    assert "refresh skypilot lambda: unchanged" in out
    run = RefreshRun.objects.get()
    assert (run.prices_added, run.prices_changed, run.prices_vanished) == (0, 0, 0)
    assert run.prices_unchanged == len(current_of("lambda")) > 100
    assert prices_of("lambda") == before
    assert refresh("skypilot", "--file", str(LAMBDA))[0] == 0
    assert prices_of("lambda") == before
    assert list(RefreshRun.objects.values_list("status", flat=True)) == ["unchanged"] * 2


def test_a_changed_price_adds_a_row_and_keeps_the_old_one_as_history(catalog, tmp_path):
    path = lambda_copy(
        tmp_path, edit=lambda line: line.replace(",23.92,", ",24.50,", 1)
    )  # gpu_8x_h100_sxm5 in every region
    old = current_prices().filter(offer__instance_type="gpu_8x_h100_sxm5").count()
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    assert f"prices: 0 added, {old} changed" in out
    rows = InstancePrice.objects.filter(
        offer__instance_type="gpu_8x_h100_sxm5", billing="on_demand"
    )
    assert rows.count() == 2 * old
    assert {
        p.usd_per_hour for p in current_prices().filter(offer__instance_type="gpu_8x_h100_sxm5")
    } == {Decimal("24.50")}


def test_a_price_that_vanished_from_an_applied_feed_stops_being_current_and_keeps_history(
    catalog, tmp_path
):
    gone = current_prices().filter(offer__provider__slug="lambda").order_by("pk").first()
    key = (gone.offer.instance_type, gone.region.code)
    path = lambda_copy(
        tmp_path,
        keep=lambda _, line: not (line.startswith(key[0] + ",") and f",{key[1]}," in line),
    )
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    assert "1 vanished" in out
    gone.refresh_from_db()
    assert gone.vanished_at is not None
    assert (key[0], key[1], gone.billing) not in current_of("lambda")
    assert current_prices(as_of=gone.first_seen).filter(pk=gone.pk).exists()
    assert gone.history.latest().history_change_reason == "vanished from lambda.csv"
    # it comes back: a new current row, the vanished one stays as it was
    assert refresh("skypilot", "--provider", "lambda")[0] == 0
    assert current_of("lambda")[(key[0], key[1], gone.billing)] == gone.usd_per_hour
    assert InstancePrice.objects.get(pk=gone.pk).vanished_at == gone.vanished_at


def test_a_feed_cut_short_at_a_line_is_held_and_changes_no_price(catalog, tmp_path):
    before = prices_of("lambda")
    path = lambda_copy(tmp_path, keep=lambda i, _: i < 150)
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 3, out
    assert "refresh skypilot lambda: held" in out
    assert "current price(s) in this feed's scope would vanish" in out
    assert prices_of("lambda") == before
    run = RefreshRun.objects.get()
    assert run.status == "held" and run.prices_vanished > 0
    assert StagedPrice.objects.filter(run=run).count() > 0


def test_a_feed_cut_in_the_middle_of_a_line_is_held_and_changes_no_price(catalog, tmp_path):
    before = prices_of("lambda")
    data = LAMBDA.read_bytes()
    path = tmp_path / "lambda.csv"
    path.write_bytes(data[: len(data) - 9])  # the last price loses its last digits
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 3, out
    assert "does not end with a line break" in out
    assert prices_of("lambda") == before


def test_a_corrupted_feed_fails_with_the_reason_and_changes_no_price(catalog, tmp_path):
    before = prices_of("lambda")
    path = tmp_path / "lambda.csv"
    path.write_bytes(LAMBDA.read_bytes()[:2000] + b"\xff\xfe\x00garbage\n")
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 1, out
    assert "refresh skypilot lambda: failed" in out
    assert "lambda.csv: not a readable CSV file" in out
    assert prices_of("lambda") == before
    run = RefreshRun.objects.get()
    assert run.status == "failed" and "not a readable CSV" in run.error


def test_a_price_moving_by_more_than_the_factor_is_held_showing_both_values(
    catalog, tmp_path, settings
):
    settings.PRICE_REFRESH_MAX_PRICE_FACTOR = 3
    before = prices_of("lambda")
    path = lambda_copy(tmp_path, edit=lambda line: line.replace(",23.92,", ",239.2,", 1))
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 3, out
    assert "would move by more than a factor of 3" in out
    assert "moves more than allowed: gpu_8x_h100_sxm5" in out
    assert "catalog 23.92" in out and "feed 239.2" in out
    assert prices_of("lambda") == before


def test_a_hand_edited_price_is_never_overwritten_silently_by_a_feed(catalog, tmp_path):
    price = current_prices().get(
        offer__instance_type="gpu_8x_h100_sxm5", region__code="us-east-1", billing="on_demand"
    )
    hand_edit(price, "21.00")
    before = prices_of("lambda")
    status, out = refresh("skypilot", "--provider", "lambda")
    assert status == 3, out
    assert "1 price(s) edited by hand would change or vanish" in out
    assert "edited by hand: gpu_8x_h100_sxm5 us-east-1 on_demand: catalog 21.0" in out
    assert "feed 23.92" in out
    assert prices_of("lambda") == before
    run = RefreshRun.objects.get()
    (conflict,) = run.conflicts
    assert (conflict["catalog_usd_per_hour"], conflict["feed_usd_per_hour"]) == (
        "21.0000000000",
        "23.9200000000",
    )
    # reviewed and approved: the feed's value becomes current, the hand value stays as history
    approved = refresh_run_approve(run_id=run.pk)
    assert approved.status == "approved"
    assert current_of("lambda")[("gpu_8x_h100_sxm5", "us-east-1", "on_demand")] == Decimal("23.92")
    price.refresh_from_db()
    assert price.usd_per_hour == Decimal("21.00")
    assert not StagedPrice.objects.filter(run=run).exists()
    with pytest.raises(RefreshError, match="approved, not held"):
        refresh_run_approve(run_id=run.pk)


def test_a_hand_edited_value_the_feed_agrees_with_is_no_conflict(catalog):
    price = current_prices().get(
        offer__instance_type="gpu_8x_h100_sxm5", region__code="us-east-1", billing="on_demand"
    )
    hand_edit(price, "23.92")  # the same value, re-typed
    status, out = refresh("skypilot", "--provider", "lambda")
    assert (status, "unchanged" in out) == (0, True)


def test_a_held_run_can_be_discarded_leaving_the_catalog_as_it_was(catalog, tmp_path):
    before = prices_of("lambda")
    path = lambda_copy(tmp_path, keep=lambda i, _: i < 50)
    run = price_refresh(source="skypilot", paths=[path], provider="lambda")
    assert run.status == "held"
    discarded = refresh_run_discard(run_id=run.pk)
    assert discarded.status == "discarded"
    assert not StagedPrice.objects.filter(run=run).exists()
    assert prices_of("lambda") == before


def test_a_refresh_that_dies_while_applying_leaves_the_catalog_as_it_was(
    catalog, tmp_path, monkeypatch
):
    before = prices_of("lambda")
    gone = current_prices().filter(offer__provider__slug="lambda").order_by("pk").first()
    path = lambda_copy(
        tmp_path,
        keep=lambda _, line: not line.startswith(gone.offer.instance_type + ","),
        edit=lambda line: line.replace(",23.92,", ",24.50,", 1),
    )

    def dies(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(refresh_module, "bulk_update_with_history", dies)
    run = price_refresh(source="skypilot", paths=[path], provider="lambda")
    assert run.status == "failed"
    assert "disk full" in run.error
    assert prices_of("lambda") == before  # the new rows written before it died are gone too


def test_a_dry_run_stores_nothing(catalog, tmp_path):
    before = prices_of("lambda")
    path = lambda_copy(tmp_path, edit=lambda line: line.replace(",23.92,", ",24.50,", 1))
    status, out = refresh("skypilot", "--file", str(path), "--dry-run")
    assert status == 0, out
    assert "applied (dry run: nothing stored)" in out
    assert prices_of("lambda") == before
    assert not RefreshRun.objects.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["azure-bulk"], "source: 'azure-bulk' is not one of skypilot, aws, aws-pricing-api"),
        (["aws"], "--file is required for aws"),
        (["skypilot"], "--file or --provider is required"),
        (["skypilot", "--file", "/nonexistent/x.csv"], "no such file"),
        (["skypilot", "--provider", "Not A Slug"], "is not a slug"),
    ],
)
def test_bad_arguments_exit_2_naming_the_problem(db, args, message):
    with pytest.raises(CommandError, match=message) as caught:
        call_command("refresh_prices", *args, stdout=io.StringIO())
    assert caught.value.returncode == 2


# --- AWS feeds -------------------------------------------------------------------------------


def test_an_aws_bulk_offer_file_applies_on_demand_and_commitment_prices(catalog, tmp_path):
    offer = write_offer_file(tmp_path / "index.json", target_bytes=1_000_000, seed=11)
    spot_before = {k: v for k, v in current_of("aws").items() if k[2] == "spot"}
    status, out = refresh("aws", "--file", str(offer.path))
    assert status in (0, 3), out
    run = RefreshRun.objects.get()
    if run.status == "held":  # the synthetic prices are far from SkyPilot's: approve them
        assert all(c["why"] == "moves more than allowed" for c in run.conflicts)
        run = refresh_run_approve(run_id=run.pk)
    assert run.feed_stated_on.isoformat() == "2026-11-01"
    assert run.bytes_read == offer.bytes_written
    now = current_of("aws")
    for key, usd in offer.expected.items():
        assert now[key] == usd, key
    # the bulk feed states no spot prices: it makes none vanish
    assert {k: v for k, v in now.items() if k[2] == "spot"} == spot_before
    again = price_refresh(source="aws", paths=[offer.path], provider="aws")
    assert (again.status, again.prices_added, again.prices_changed) == ("unchanged", 0, 0)


def test_aws_getproducts_pages_with_only_filtered_products_change_nothing(catalog):
    pages = Path(__file__).resolve().parents[1] / "data" / "aws"
    before = prices_of("aws")
    status, out = refresh(
        "aws-pricing-api",
        "--file", str(pages / "pricing_getproducts_page_as_dicts.json"),
        "--file", str(pages / "pricing_getproducts_page_as_strings.json"),
    )  # fmt: skip
    assert status == 0, out
    assert "capacity reservation: 4" in out
    assert prices_of("aws") == before


# --- load_catalog and hand edits --------------------------------------------------------------


def test_load_catalog_keeps_a_hand_edited_egress_tier_and_says_so(catalog):
    tier = EgressTier.objects.filter(provider__slug="aws", up_to_tb__isnull=False).earliest(
        "up_to_tb"
    )
    stated = tier.usd_per_gb
    tier.usd_per_gb = Decimal("0.0777")
    tier._change_reason = "negotiated rate"
    tier.save()
    tiers_before = list(
        EgressTier.objects.order_by("pk").values_list("pk", "up_to_tb", "usd_per_gb")
    )
    out = io.StringIO()
    call_command("load_catalog", stdout=out)
    assert (
        list(EgressTier.objects.order_by("pk").values_list("pk", "up_to_tb", "usd_per_gb"))
        == tiers_before
    )
    assert (
        f"kept, not reloaded: aws egress tier up to {tier.up_to_tb} TB: catalog 0.0777000000 "
        f"USD/GB (edited by hand), file {stated.normalize():f} USD/GB"
    ) in out.getvalue()
    # a reload without the hand edit's provider changing still loads the others
    assert "egress tiers: 0 created, 0 updated" in out.getvalue()


def test_load_catalog_keeps_a_hand_edited_price_and_reports_both_values(catalog):
    price = current_prices().get(
        offer__instance_type="gpu_8x_h100_sxm5", region__code="us-east-1", billing="on_demand"
    )
    hand_edit(price, "21.00")
    out = io.StringIO()
    call_command("load_catalog", stdout=out)
    assert current_of("lambda")[("gpu_8x_h100_sxm5", "us-east-1", "on_demand")] == Decimal("21")
    assert "hand-edited price kept" in out.getvalue()
    assert "catalog 21.0000000000 (edited by hand), feed 23.92" in out.getvalue()


def test_a_truncated_aws_bulk_file_fails_the_run_and_changes_no_price(catalog, tmp_path):
    offer = write_offer_file(tmp_path / "index.json", target_bytes=400_000, seed=2)
    path = tmp_path / "cut.json"
    path.write_bytes(offer.path.read_bytes()[:300_000])
    before = prices_of("aws")
    status, out = refresh("aws", "--file", str(path))
    assert status == 1, out
    assert "refresh aws aws: failed" in out
    assert "cut.json: not a whole JSON offer file" in out
    assert prices_of("aws") == before
    assert RefreshRun.objects.get().status == "failed"
    assert not StagedPrice.objects.exists()


def test_an_admin_edit_holds_the_refresh_and_the_admin_approves_it(admin_client, catalog):
    from django.urls import reverse

    row = current_prices().get(
        offer__instance_type="gpu_8x_h100_sxm5", region__code="us-east-1", billing="on_demand"
    )
    data = {
        "offer": row.offer_id, "region": row.region_id, "billing": row.billing,
        "usd_per_hour": "22.00", "zone": "", "source_name": "negotiated", "source_sha256": "",
        "note": "", "stated_on": row.stated_on.isoformat(),
    }  # fmt: skip
    for name in ("first_seen", "last_seen"):
        moment = getattr(row, name)
        data[f"{name}_0"] = moment.strftime("%Y-%m-%d")
        data[f"{name}_1"] = moment.strftime("%H:%M:%S.%f")
    edit = admin_client.post(reverse("admin:hardware_instanceprice_change", args=[row.pk]), data)
    assert edit.status_code == 302, edit.content.decode()[:2000]

    status, out = refresh("skypilot", "--provider", "lambda")
    assert status == 3, out
    assert "catalog 22.0000000000, feed 23.9200000000" in out
    run = RefreshRun.objects.get()
    changelist = reverse("admin:hardware_refreshrun_changelist")
    page = admin_client.get(changelist, {"status__exact": "held"})
    assert page.status_code == 200 and "lambda" in page.content.decode()
    assert (
        admin_client.get(reverse("admin:hardware_refreshrun_change", args=[run.pk])).status_code
        == 200
    )
    response = admin_client.post(
        changelist, {"action": "approve", "_selected_action": [run.pk]}, follow=True
    )
    assert response.status_code == 200
    run.refresh_from_db()
    assert run.status == "approved"
    assert current_of("lambda")[("gpu_8x_h100_sxm5", "us-east-1", "on_demand")] == Decimal("23.92")
