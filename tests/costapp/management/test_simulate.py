"""``manage.py simulate``: the result on stdout, validation errors on stderr, exit codes."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "tests" / "tco" / "scenarios"


def run_simulate(*args: str, env_extra: dict[str, str] | None = None, stdin: bytes | None = None):
    """Run the command as a user would, in a fresh process with nothing configured."""
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL"}}
    env["DJANGO_SETTINGS_MODULE"] = "costapp.settings"
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "manage.py", "simulate", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
    )


def test_on_a_fresh_checkout_it_prices_a_scenario_from_the_shipped_gpu_table(tmp_path):
    database = tmp_path / "never-created.sqlite3"
    result = run_simulate(
        str(SCENARIOS / "h100-fleet-buy-vs-rent.json"),
        "--json",
        env_extra={"DATABASE_URL": f"sqlite:///{database}"},
    )
    assert result.returncode == 0, result.stderr.decode()
    document = json.loads(result.stdout)
    expected = json.loads((SCENARIOS / "expected" / "h100-fleet-buy-vs-rent.json").read_text())
    assert document["cheapest"] == expected["cheapest"]
    for option, wanted in zip(document["options"], expected["options"], strict=True):
        assert option["total_usd"] == pytest.approx(wanted["total_usd"], rel=1e-6)
    assert document["gpus"]["h100-sxm"]["memory_gb"] == 80
    assert not database.exists(), "simulate must not create the embedded database"


def test_the_table_shows_every_option_the_cheapest_and_the_baseline():
    result = run_simulate(str(SCENARIOS / "egress-heavy-inference.json"))
    assert result.returncode == 0, result.stderr.decode()
    text = result.stdout.decode()
    assert "Hyperscaler on-demand" in text and "Dedicated L4 servers" in text
    assert "cheapest: Dedicated L4 servers" in text
    assert "baseline: Hyperscaler on-demand" in text


def test_an_invalid_document_prints_one_path_and_message_per_problem_and_exits_2(tmp_path):
    scenario = json.loads((SCENARIOS / "h100-fleet-buy-vs-rent.json").read_text())
    scenario["horizon_months"] = 0
    scenario["options"][1]["pue"] = 1.3  # belongs to on-prem options only
    scenario["options"][4]["pue"] = 0.5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scenario))
    result = run_simulate(str(path), "--json")
    assert result.returncode == 2
    assert result.stdout == b""
    lines = result.stderr.decode().strip().splitlines()
    fields = {line.split(": ", 1)[0] for line in lines}
    assert {"horizon_months", "options[1].pue", "options[4].pue"} <= fields
    assert all(": " in line for line in lines)


def test_broken_json_and_duplicate_keys_are_invalid_documents(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text('{"name": "a", "name": "b", "workloads": [], "options": []}')
    result = run_simulate(str(path))
    assert result.returncode == 2 and result.stdout == b""
    assert "name" in result.stderr.decode()
    path.write_text('{"name": ')
    result = run_simulate(str(path))
    assert result.returncode == 2 and result.stdout == b""


def test_a_missing_file_is_a_failure_with_exit_1(tmp_path):
    result = run_simulate(str(tmp_path / "nowhere.json"))
    assert result.returncode == 1
    assert result.stdout == b""
    assert "nowhere.json" in result.stderr.decode()


def test_the_table_says_each_warning_once(tmp_path):
    scenario = {
        "name": "short of servers",
        "horizon_months": 12,
        "workloads": [{"name": "w", "type": "steady", "gpus": 16}],
        "options": [
            {"name": "cloud", "type": "cloud", "usd_per_gpu_hour": 2},
            {"name": "one server", "type": "dedicated", "servers": 1, "usd_per_server_month": 9000},
        ],
    }
    path = tmp_path / "short.json"
    path.write_text(json.dumps(scenario))
    result = run_simulate(str(path))
    assert result.returncode == 0, result.stderr.decode()
    warnings = [line for line in result.stdout.decode().splitlines() if "shortfall" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: one server:")


def test_it_reads_standard_input():
    text = (SCENARIOS / "cross-gpu-70b.json").read_bytes()
    result = run_simulate("-", "--json", stdin=text)
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout)["cheapest"] == "H100 on-demand"


@pytest.mark.django_db
def test_catalog_references_resolve_to_todays_prices_and_appear_in_inputs(tmp_path, catalog):
    scenario = {
        "name": "Lambda H100 against a quoted purchase",
        "horizon_months": 12,
        "workloads": [{"name": "fleet", "type": "steady", "gpus": 8, "utilization": 0.5}],
        "options": [
            {
                "name": "Lambda on-demand",
                "type": "cloud",
                "offer": {
                    "provider": "lambda",
                    "instance": "gpu_8x_h100_sxm5",
                    "region": "europe-central-1",
                },
            },
            {"name": "AWS tiers, flat price", "type": "cloud", "usd_per_gpu_hour": 6.88,
             "egress_provider": "aws"},
        ],
        "egress_tb_per_month": 20,
    }  # fmt: skip
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(scenario))
    out = io.StringIO()
    call_command("simulate", str(path), "--json", stdout=out)
    result = json.loads(out.getvalue())
    lambda_option = result["inputs"]["options"][0]
    assert lambda_option["usd_per_gpu_hour"] == pytest.approx(2.99)
    assert lambda_option["gpu"] == "h100-sxm"
    aws = result["inputs"]["options"][1]
    assert "egress_provider" not in aws
    assert aws["egress_tiers"][0] == {"up_to_tb": 0.1, "usd_per_gb": 0.0}
    assert aws["egress_tiers"][-1]["up_to_tb"] is None
    # 20 TB: 0.1 TB free, 9.9 TB at 0.09, 10 TB at 0.085 (per GB), every month for 12 months
    assert result["options"][1]["breakdown_usd"]["egress"] == pytest.approx(
        12 * (9900 * 0.09 + 10000 * 0.085)
    )
    busy = 8 * 0.5 * 730 * 12
    assert result["options"][0]["breakdown_usd"]["compute"] == pytest.approx(busy * 2.99)


@pytest.mark.django_db
def test_an_unknown_offer_is_reported_with_its_path(tmp_path, catalog):
    scenario = {
        "name": "typo",
        "workloads": [{"name": "w", "type": "steady", "gpus": 1}],
        "options": [
            {"name": "x", "type": "cloud",
             "offer": {"provider": "lambda", "instance": "gpu_8x_h100_sxm9", "region": "us-east-1"}},
        ],
    }  # fmt: skip
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(scenario))
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("simulate", str(path), stdout=io.StringIO(), stderr=err)
    assert exit_info.value.code == 2
    assert err.getvalue().startswith("options[0].offer")


@pytest.mark.django_db
def test_quotes_supply_their_terms_with_the_meanings_of_the_scenario_fields(tmp_path, catalog):
    from hardware.models import DedicatedQuote, PurchaseQuote

    lease = DedicatedQuote.objects.get(reference="DEMO-D-A100-8")
    purchase = PurchaseQuote.objects.get(reference="DEMO-P-H100-8")
    scenario = {
        "name": "quotes",
        "horizon_months": 12,
        "egress_tb_per_month": 80,
        "workloads": [{"name": "w", "type": "steady", "gpu": "a100-sxm-80gb", "gpus": 16}],
        "options": [
            {"name": "lease", "type": "dedicated", "quote": lease.pk},
            {"name": "buy", "type": "on_prem", "gpu": "h100-sxm", "quote": purchase.pk},
        ],
    }
    path = tmp_path / "quotes.json"
    path.write_text(json.dumps(scenario))
    out = io.StringIO()
    call_command("simulate", str(path), "--json", stdout=out)
    result = json.loads(out.getvalue())
    leased = result["options"][0]
    assert result["inputs"]["options"][0]["usd_per_server_month"] == float(
        lease.usd_per_server_month
    )
    assert result["inputs"]["options"][0]["servers"] == 2
    # setup once for the order; included egress a month for the order, overage beyond it
    assert leased["breakdown_usd"]["setup"] == pytest.approx(float(lease.setup_usd))
    overage_tb = 80 - float(lease.included_egress_tb)
    assert leased["breakdown_usd"]["egress"] == pytest.approx(
        12 * overage_tb * float(lease.overage_usd_per_tb)
    )
    assert leased["breakdown_usd"]["compute"] == pytest.approx(
        12 * 2 * float(lease.usd_per_server_month)
    )
    bought = result["inputs"]["options"][1]
    assert bought["capex_usd_per_server"] == float(purchase.capex_usd_per_server)
    assert bought["server_kw"] == float(purchase.server_kw)
    assert bought["lead_time_months"] == purchase.lead_time_months


@pytest.mark.django_db
def test_a_scenario_relying_on_a_demo_draft_or_lapsed_quote_says_so(tmp_path, catalog):
    import datetime

    from hardware.models import DedicatedQuote, PurchaseQuote, QuoteStatus

    draft = DedicatedQuote.objects.get(reference="DEMO-D-L40S-4")
    assert draft.status == QuoteStatus.DRAFT and draft.is_demo
    lapsed = PurchaseQuote.objects.get(reference="DEMO-P-H100-8")
    PurchaseQuote.objects.filter(pk=lapsed.pk).update(
        valid_until=datetime.date(2020, 1, 31), is_demo=False
    )
    scenario = {
        "name": "quotes that may not hold",
        "horizon_months": 12,
        "workloads": [{"name": "w", "type": "steady", "gpu": "l40s", "gpus": 4}],
        "options": [
            {"name": "lease", "type": "dedicated", "quote": draft.pk},
            {"name": "buy", "type": "on_prem", "gpu": "h100-sxm", "quote": lapsed.pk},
            {"name": "cloud", "type": "cloud", "usd_per_gpu_hour": 1.2},
        ],
    }
    path = tmp_path / "quotes.json"
    path.write_text(json.dumps(scenario))
    out = io.StringIO()
    call_command("simulate", str(path), "--json", stdout=out)
    warnings = json.loads(out.getvalue())["warnings"]
    assert (
        'Option "lease" uses dedicated-server quote DEMO-D-L40S-4 from Demo Dedicated Hosting A, '
        "which is demonstration data, not a quote anyone received." in warnings
    )
    assert any(w.startswith('Option "lease"') and w.endswith("is still a draft.") for w in warnings)
    assert any(
        w.startswith('Option "buy" uses purchase quote DEMO-P-H100-8')
        and w.endswith("was valid until 2020-01-31.")
        for w in warnings
    )
    assert not any(w.startswith('Option "buy"') and "demonstration" in w for w in warnings)
    assert not any('"cloud"' in w for w in warnings)


def test_the_table_gives_each_sweeps_best_size_and_objective_and_json_carries_the_sweeps():
    table = run_simulate(str(SCENARIOS / "size-the-fleet.json"))
    assert table.returncode == 0, table.stderr.decode()
    lines = table.stdout.decode().splitlines()
    sweeps = lines[lines.index("Sizing:") + 1 :]
    assert sweeps[:3] == [
        "  Commit some, rest on-demand: committed_gpus 0-240 by 8 (31 sizes), npv: "
        "best 96, npv 4,840,782 USD",
        "  Buy some, burst the rest: servers 0-30 by 1 (31 sizes), npv: best 13, npv 5,977,850 USD",
        "  Buy some, burst the rest: servers 0-30 by 3 (11 sizes), npv: best 12, npv 5,978,419 USD",
    ]
    document = run_simulate(str(SCENARIOS / "size-the-fleet.json"), "--json")
    assert document.returncode == 0, document.stderr.decode()
    result = json.loads(document.stdout)
    expected = json.loads((SCENARIOS / "expected" / "size-the-fleet.json").read_text())
    assert [s["best"] for s in result["sizing"]] == [s["best"] for s in expected["sizing"]]
    for got, wanted in zip(result["sizing"], expected["sizing"], strict=True):
        assert got["candidates"] == wanted["candidates"]
        assert got["npv_usd"] == pytest.approx(wanted["npv_usd"], rel=1e-6)


def test_a_bad_sweep_is_reported_at_its_path_with_exit_2(tmp_path):
    scenario = json.loads((SCENARIOS / "size-the-fleet.json").read_text())
    scenario["sizing"][1]["option"] = "GPU cloud on-demand"
    scenario["sizing"][2]["objective"] = "p90_npv"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scenario))
    result = run_simulate(str(path))
    assert result.returncode == 2
    assert result.stdout == b""
    lines = result.stderr.decode().splitlines()
    assert [line.split(": ")[0] for line in lines] == ["sizing[1].option", "sizing[2].objective"]
