"""The three claim scenarios: valid documents, run by the engine, with the figures their texts
quote asserted by value."""

import pytest

from costapp.reports.claims import CLAIMS, claim_get
from tests.tco.helpers import by_name, normalized, run


def result(claim_slug: str, case_slug: str) -> dict:
    claim = claim_get(claim_slug)
    case = next(c for c in claim.cases if c.slug == case_slug)
    return run(claim.document(case))


@pytest.mark.parametrize(
    "claim,case", [(c, case) for c in CLAIMS for case in c.cases], ids=lambda v: v.slug
)
def test_every_claim_case_is_a_valid_scenario_document_without_warnings(claim, case):
    document = claim.document(case)
    _inputs, warnings = normalized(document)
    assert warnings == []
    assert run(document)["options"]
    assert claim.text_html.strip()


def test_7b_in_fp16_fits_one_24_gb_gpu_and_two_16_gb_gpus_when_served():
    options = by_name(result("7b-fp16-needs-28gb", "serving"))
    # 2 bytes x 7e9 x 1.2 = 16.8 GB: one L4 (24 GB), two T4s (16 GB), one A100 40 GB
    assert options["L4 24 GB, fleet kept running"]["provisioned_gpus"] == 1
    assert options["T4 16 GB, fleet kept running"]["provisioned_gpus"] == 2
    assert options["A100 40 GB, fleet kept running"]["provisioned_gpus"] == 1
    assert options["L4 24 GB, fleet kept running"]["total_usd"] == pytest.approx(7_884.0)
    assert options["T4 16 GB, fleet kept running"]["total_usd"] == pytest.approx(9_215.52)
    assert options["A100 40 GB, fleet kept running"]["total_usd"] == pytest.approx(24_043.6158)


def test_7b_full_fine_tuning_needs_112_gb_two_h100s_or_one_h200():
    options = by_name(result("7b-fp16-needs-28gb", "training"))
    # 16 bytes x 7e9 = 112 GB; 90 % of memory usable: ceil(112 / 72) = 2, ceil(112 / 126.9) = 1
    assert options["H100 80 GB, fleet kept running"]["provisioned_gpus"] == 2
    assert options["H200 141 GB, fleet kept running"]["provisioned_gpus"] == 1
    assert options["H100 80 GB, fleet kept running"]["total_usd"] == pytest.approx(120_537.60)
    assert options["H200 141 GB, fleet kept running"]["total_usd"] == pytest.approx(69_309.12)


def test_dedicated_saves_more_than_half_only_against_hyperscaler_prices_at_high_utilization():
    high = by_name(result("dedicated-saves-half", "high-utilization"))
    dedicated = high["Dedicated 8-GPU servers"]
    assert dedicated["total_usd"] == pytest.approx(4_204_800.0)
    assert high["Hyperscaler on-demand"]["total_usd"] == pytest.approx(10_414_448.64)
    assert high["GPU cloud on-demand"]["total_usd"] == pytest.approx(4_526_046.72)
    assert dedicated["savings_vs_baseline_pct"] == pytest.approx(59.625323, abs=1e-5)
    vs_gpu_cloud = 100 * (1 - dedicated["total_usd"] / high["GPU cloud on-demand"]["total_usd"])
    assert vs_gpu_cloud == pytest.approx(7.097733, abs=1e-5)
    # break-even against the hyperscaler at 4,204,800 / (64 x 730 x 36 x 6.88) = 36.3 % busy
    assert dedicated["break_even_utilization"] == pytest.approx(0.363372093, rel=1e-8)

    low = by_name(result("dedicated-saves-half", "low-utilization"))
    assert low["Dedicated 8-GPU servers"]["total_usd"] == pytest.approx(4_204_800.0)
    assert low["Hyperscaler on-demand"]["total_usd"] == pytest.approx(3_471_482.88)
    assert low["Dedicated 8-GPU servers"]["savings_vs_baseline_pct"] == pytest.approx(
        -21.124031, abs=1e-5
    )
    assert low["GPU cloud on-demand"]["total_usd"] == pytest.approx(1_508_682.24)


def test_egress_adds_a_third_to_the_bill_only_when_heavy():
    for case, monthly_usd, share in (("light", 441.0, 0.010976), ("heavy", 13_791.0, 0.343237)):
        options = by_name(result("egress-adds-20-40-pct", case))
        hyperscaler = options["Hyperscaler on-demand"]["breakdown_usd"]
        assert hyperscaler["compute"] == pytest.approx(1_446_451.20)
        assert hyperscaler["egress"] == pytest.approx(36 * monthly_usd)
        assert hyperscaler["egress"] / hyperscaler["compute"] == pytest.approx(share, abs=1e-6)
        assert options["GPU cloud on-demand, no egress fee"]["breakdown_usd"]["egress"] == 0.0
    heavy_share = 13_791.0 * 36 / 1_446_451.20
    assert 0.20 <= heavy_share <= 0.40 and 441.0 * 36 / 1_446_451.20 < 0.02


def test_a_claims_text_quotes_the_figures_the_engine_gives():
    text = claim_get("dedicated-saves-half").text_html
    for figure in ("$4,204,800", "$10,414,448.64", "59.6 %", "7.1 %", "21.1 %", "36.3 %"):
        assert figure in text
    text = claim_get("egress-adds-20-40-pct").text_html
    for figure in ("$13,791", "$496,476", "34.3 %", "1.1 %", "$15,876"):
        assert figure in text
    text = claim_get("7b-fp16-needs-28gb").text_html
    for figure in ("14 GB", "16.8 GB", "112 GB", "$7,884", "$9,215.52", "$120,537.60"):
        assert figure in text
