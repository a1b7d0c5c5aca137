"""Token prices and sourced assumptions: loaded from the shipped files with their sources,
idempotent, bad rows reported with file, line and reason, history kept; the lookups the cost side
calls."""

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from django.test import override_settings

from hardware.hosted.load import (
    ASSUMPTIONS_PATH,
    TOKEN_PRICES_PATH,
    assumptions_load,
    token_prices_load,
)
from hardware.hosted.selectors import (
    STAFF_FIELD,
    assumption_for_option,
    assumption_value,
    assumptions_for_field,
    current_assumptions,
    current_token_prices,
    staff_usd_per_month,
    token_price_terms,
)
from hardware.models import Assumption, TokenPrice
from hardware.sources.common import SourceError

FIREWORKS_70B = ("fireworks", "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct")
T0 = datetime(2026, 11, 1, tzinfo=UTC)

TOKEN_HEADER = (
    "provider,model,input_usd_per_million,output_usd_per_million,source,stated_on,notes\n"
)
ASSUMPTION_HEADER = "key,value,unit,applies_to,stated_on,source,confidence,notes\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_load_catalog_loads_the_shipped_token_prices_and_assumptions_each_with_its_source(
    catalog,
):
    prices = list(current_token_prices())
    assumptions = list(current_assumptions())
    assert len(prices) >= 30 and len(assumptions) >= 10
    assert all(p.source.strip() for p in prices) and all(a.source.strip() for a in assumptions)
    assert "models/token_prices.csv: 35 rows read, 35 accepted, 0 rejected; 35 new" in catalog
    assert "assumptions.csv: 11 rows read, 11 accepted, 0 rejected; 11 new" in catalog
    assert "35 without a stated day (unknown age)" in catalog


def test_fireworks_llama_3_1_70b_is_found_by_provider_and_model_with_the_file_s_prices(catalog):
    terms = token_price_terms(*FIREWORKS_70B)
    assert terms is not None
    assert (terms.usd_per_million_input_tokens, terms.usd_per_million_output_tokens) == (0.9, 0.9)
    assert terms.source.startswith("BerriAI/litellm model_prices_and_context_window.json @0003")
    # the file states no day: loaded, and of unknown age
    assert terms.stated_on is None and terms.flags == ("stale",)
    assert token_price_terms("fireworks", "no-such-model") is None
    assert token_price_terms("deepinfra", FIREWORKS_70B[1]) is None


def test_the_file_s_traps_are_met_with_correct_values(catalog):
    databricks = TokenPrice.objects.get(model="databricks/databricks-meta-llama-3-1-405b-instruct")
    # float noise of LiteLLM's DBU conversion (15.000020000000002) kept to 10 decimal places
    assert databricks.usd_per_million_output_tokens == Decimal("15.0000200000")
    assert "DBU" in databricks.notes and databricks.flag == ""
    chat = token_price_terms("deepseek", "deepseek/deepseek-chat")
    assert chat is not None and chat.flags == ("stale", "flagged") and "alias" in chat.flag
    # Turbo serving tiers are models of their own, not merged with the base model
    turbo = token_price_terms("deepinfra", "deepinfra/meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo")
    base = token_price_terms("deepinfra", "deepinfra/meta-llama/Meta-Llama-3.1-70B-Instruct")
    assert turbo and base
    assert (turbo.usd_per_million_output_tokens, base.usd_per_million_output_tokens) == (0.28, 0.4)


@override_settings(ASSUMPTION_STALE_DAYS=100_000)
def test_colocation_per_kw_month_is_184_06_with_its_source_and_an_unknown_key_is_none(catalog):
    colo = assumption_value("colo_usd_per_kw_month")
    assert colo is not None
    assert colo.value == 184.06 and colo.unit == "USD per kW-month"
    assert colo.applies_to == "on_prem.colo_usd_per_kw_month"
    assert (colo.option_type, colo.field) == ("on_prem", "colo_usd_per_kw_month")
    assert colo.source.startswith("CBRE North America Data Center Trends H2 2024")
    assert (colo.stated_on, colo.confidence, colo.flags) == ("2024-12-31", "high", ())
    assert assumption_value("no_such_key") is None
    assert assumption_for_option("no_such_key", servers=4) is None
    assert [a.key for a in assumptions_for_field("on_prem.pue")] == [
        "pue_industry_average",
        "pue_new_gpu_colo",
    ]


def test_an_assumption_stated_longer_ago_than_the_limit_is_stale(catalog):
    with override_settings(ASSUMPTION_STALE_DAYS=1):
        assert assumption_value("colo_usd_per_kw_month").flags == ("stale",)
    with override_settings(ASSUMPTION_STALE_DAYS=100_000):
        assert assumption_value("colo_usd_per_kw_month").flags == ()


def test_staff_per_month_comes_from_the_two_rows_by_the_documented_rule(catalog):
    staff = staff_usd_per_month(75)
    assert staff is not None
    assert staff.value == pytest.approx(200_000 / 12)  # one engineer for 75 servers
    assert staff_usd_per_month(8).value == pytest.approx(8 * 200_000 / 12 / 75)
    assert staff.applies_to == STAFF_FIELD and staff.unit == "USD per month"
    assert "SemiAnalysis 2023" in staff.source and "50-100 GPU servers" in staff.source
    assert staff.stated_on == "2023-07-01"  # the older of the two days
    assert staff.confidence == "low"
    # either row written on the staff field resolves by the rule, never to its own value
    for key in ("engineer_usd_per_year", "servers_per_engineer"):
        assert assumption_for_option(key, servers=8).value == pytest.approx(8 * 200_000 / 900)
    assert assumption_value("engineer_usd_per_year").value == 200_000
    assert assumption_for_option("dgx_h100_max_kw", servers=8).value == 10.2


def test_staff_needs_both_rows(catalog):
    Assumption.objects.filter(key="servers_per_engineer").delete()
    assert staff_usd_per_month(8) is None
    assert assumption_for_option("engineer_usd_per_year", servers=8) is None


def test_loading_twice_changes_nothing_not_even_a_date(db):
    first = [token_prices_load(observed_at=T0), assumptions_load(observed_at=T0)]
    assert [r.created for r in first] == [35, 11]

    def state():
        return [
            sorted(model.objects.values_list("pk", "first_seen", "last_seen"))
            for model in (TokenPrice, Assumption)
        ] + [model.history.count() for model in (TokenPrice, Assumption)]

    before = state()
    later = T0 + timedelta(days=3)
    again = [token_prices_load(observed_at=later), assumptions_load(observed_at=later)]
    assert [(r.created, r.unchanged, r.rejections) for r in again] == [(0, 35, []), (0, 11, [])]
    assert state() == before


def test_a_changed_figure_is_a_new_row_and_the_old_one_stays_as_history(db, tmp_path):
    assumptions_load(observed_at=T0)
    old = Assumption.objects.get(key="colo_usd_per_kw_month")
    text = (
        ASSUMPTIONS_PATH.read_text().replace("184.06", "190.00").replace("2024-12-31", "2025-06-30")
    )
    later = T0 + timedelta(days=1)
    report = assumptions_load(write(tmp_path, "assumptions.csv", text), observed_at=later)
    assert (report.created, report.unchanged) == (1, 10)
    assert Assumption.objects.filter(key="colo_usd_per_kw_month").count() == 2
    assert assumption_value("colo_usd_per_kw_month").value == 190.0
    old.refresh_from_db()
    assert old.value == Decimal("184.06") and old.last_seen == T0
    # an unchanged row from another file is seen again: last_seen moves, no new row
    pue = Assumption.objects.get(key="usd_per_kwh")
    assert pue.last_seen == later and pue.first_seen == T0


def test_the_same_price_from_another_file_moves_last_seen_only(db, tmp_path):
    token_prices_load(observed_at=T0)
    text = TOKEN_PRICES_PATH.read_text() + "\n"  # same rows, other bytes
    later = T0 + timedelta(days=2)
    report = token_prices_load(write(tmp_path, "token_prices.csv", text), observed_at=later)
    assert (report.created, report.unchanged) == (0, 35)
    row = TokenPrice.objects.get(provider=FIREWORKS_70B[0], model=FIREWORKS_70B[1])
    assert (row.first_seen, row.last_seen) == (T0, later)


def test_bad_token_price_rows_are_rejected_with_file_line_and_reason(db, tmp_path):
    text = TOKEN_HEADER + (
        "acme,acme/good,1,2,Acme price page,2026-10-01,\n"
        "acme,acme/negative,-1,2,Acme price page,,\n"
        "acme,,1,2,Acme price page,,\n"
        "acme,acme/no-output,1,,Acme price page,,\n"
        "acme,acme/bad-date,1,2,Acme price page,1st of May,\n"
        "acme,acme/good,1,3,Acme price page,,\n"
        "acme,acme/no-source,1,2,,,\n"
        "Acme Inc,acme/x,1,2,Acme,,\n"
    )
    report = token_prices_load(write(tmp_path, "tokens.csv", text), observed_at=T0)
    assert report.rows_read == 8 and report.created == 1 and report.rows_rejected == 7
    assert [(r.file_name, r.line_no, r.reason) for r in report.rejections] == [
        ("tokens.csv", 3, "bad number"),
        ("tokens.csv", 4, "missing value"),
        ("tokens.csv", 5, "missing value"),
        ("tokens.csv", 6, "bad date"),
        ("tokens.csv", 7, "duplicate row"),
        ("tokens.csv", 8, "missing value"),
        ("tokens.csv", 9, "bad provider"),
    ]
    assert "output_usd_per_million is empty" in report.rejections[2].detail
    assert "already on line 2" in report.rejections[4].detail
    lines = report.lines()
    assert lines[0].startswith("tokens.csv: 8 rows read, 1 accepted, 7 rejected (bad number: 1")
    assert "  rejected tokens.csv:6: bad date: stated_on '1st of May' is not a date" in lines[4]
    assert TokenPrice.objects.get().stated_on == date(2026, 10, 1)


def test_bad_assumption_rows_are_rejected_and_load_catalog_prints_them(db, tmp_path):
    text = ASSUMPTION_HEADER + (
        "ok_key,1.5,ratio,on_prem.pue,2025-01-01,Somebody,medium,\n"
        "Bad Key,1,ratio,on_prem.pue,,Somebody,low,\n"
        "other,1,ratio,pue,,Somebody,low,\n"
        "sure,1,ratio,on_prem.pue,,Somebody,certain,\n"
        "undated,2,ratio,on_prem.pue,,Somebody,LOW,\n"
    )
    report = assumptions_load(write(tmp_path, "a.csv", text), observed_at=T0)
    assert [(r.line_no, r.reason) for r in report.rejections] == [
        (3, "bad key"),
        (4, "bad applies_to"),
        (5, "bad confidence"),
    ]
    assert report.undated == 1
    undated = Assumption.objects.get(key="undated")
    assert undated.confidence == "low" and undated.stated_on is None and undated.stale


def test_a_file_without_a_required_column_is_refused_whole(db, tmp_path):
    path = write(tmp_path, "a.csv", "key,value\ncolo,1\n")
    with pytest.raises(SourceError, match="a.csv: missing column"):
        assumptions_load(path)
    assert not Assumption.objects.exists()


def test_a_value_edited_by_hand_is_kept_and_the_file_s_row_reported(db, tmp_path):
    assumptions_load(observed_at=T0)
    row = Assumption.objects.get(key="usd_per_kwh")
    row.value = Decimal("0.1000")
    row._change_reason = "negotiated tariff"
    row.save()
    text = ASSUMPTIONS_PATH.read_text() + "\n"
    report = assumptions_load(
        write(tmp_path, "assumptions.csv", text), observed_at=T0 + timedelta(1)
    )
    assert [(r.line_no, r.reason) for r in report.rejections] == [(3, "hand-edited value kept")]
    assert "value 0.1000000000 (edited by hand) / file 0.0826" in report.rejections[0].detail
    assert assumption_value("usd_per_kwh").value == 0.1
