"""The comparison page ``/runs/compare/?a=&b=``: the same scenario at last month's and today's
prices, who may see it, runs that cannot be compared, and the "Compare with…" forms."""

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from costapp.models import Scenario, SimulationRun
from costapp.runs import pipeline
from hardware.models import InstancePrice

from ..runs_helpers import analyst, stored_run

pytestmark = pytest.mark.django_db

LAMBDA = {"provider": "lambda", "instance": "gpu_8x_h100_sxm5", "region": "europe-central-1"}
DOCUMENT = {
    "name": "Lambda against a flat price",
    "horizon_months": 12,
    "workloads": [{"name": "fleet", "type": "steady", "gpus": 8, "utilization": 0.5}],
    "options": [
        {"name": "Lambda on-demand", "type": "cloud", "offer": LAMBDA},
        {"name": "Flat price", "type": "cloud", "usd_per_gpu_hour": 3.5},
    ],
}


@pytest.fixture
def pat(db):
    return analyst("pat")


@pytest.fixture
def repriced(pat, catalog, tasks_in_process):
    """Two runs of one scenario: at the catalog's price, then at a new price 10 % higher."""
    scenario = Scenario.objects.create(owner=pat, name="Lambda fleet", document=DOCUMENT)
    before = stored_run(scenario)  # computed once per test process, then copied
    price = InstancePrice.objects.get(
        offer__provider__slug="lambda",
        offer__instance_type="gpu_8x_h100_sxm5",
        region__code="europe-central-1",
        billing="on_demand",
        vanished_at__isnull=True,
    )
    now = timezone.now() + timedelta(seconds=1)
    InstancePrice.objects.create(
        offer=price.offer,
        region=price.region,
        billing="on_demand",
        usd_per_hour=price.usd_per_hour * Decimal("1.1"),
        first_seen=now,
        last_seen=now,
        stated_on=now.date(),
        source_name="test refresh",
    )
    after = pipeline.run_create(scenario=scenario, reprice=True)
    assert after.status == "succeeded", after.error
    return before, after


def test_the_same_scenario_at_two_prices_shows_the_price_change_and_the_cost_difference(
    client, pat, repriced
):
    before, after = repriced
    client.force_login(pat)
    response = client.get(f"/runs/compare/?a={before.pk}&b={after.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    old = before.result["inputs"]["options"][0]["usd_per_gpu_hour"]
    new = after.result["inputs"]["options"][0]["usd_per_gpu_hour"]
    assert new == pytest.approx(old * 1.1)
    # the inputs that differ: the one price, nothing else, one row in words
    changes = response.context["comparison"].input_changes
    words = f"option 1 “Lambda on-demand”, USD per GPU hour: ${old:.2f} → ${new:.2f}"
    assert [c.words for c in changes] == [words]
    assert changes[0].key == "options[0].usd_per_gpu_hour"
    assert changes[0].delta_pct == pytest.approx(10.0)
    assert f'<td class="wrap">{words}</td>' in html
    assert "paired by position: both runs have 1 workload and 2 options of the same types" in html
    # key figures: Lambda's compute cost grows by 10 %, the flat price's does not move
    lambda_a, lambda_b = (r["options"][0]["total_usd"] for r in (before.result, after.result))
    busy = 8 * 0.5 * 730 * 12
    assert lambda_b - lambda_a == pytest.approx(busy * (new - old))
    figures = {
        (o.name, f.key): f for o in response.context["comparison"].options for f in o.figures
    }
    total = figures[("Lambda on-demand", "total_usd")]
    assert (total.a, total.b) == (lambda_a, lambda_b)
    assert total.delta_pct == pytest.approx(10.0)
    assert figures[("Flat price", "total_usd")].delta == 0.0
    assert f"+{lambda_b - lambda_a:,.2f}" in html and "+10.0" in html
    # the chart of both runs, and its table
    assert 'id="chart-compare-cumulative"' in html and 'id="figure-compare-cumulative"' in html
    assert "Lambda on-demand, run" in html
    assert "vendor/plotly.min.js" in html


def test_who_may_compare(client, pat, repriced):
    before, after = repriced
    url = f"/runs/compare/?a={before.pk}&b={after.pk}"
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(User.objects.create_user("nobody"))  # no role
    assert client.get(url).status_code == 403
    viewer = User.objects.create_user("vic")
    viewer.groups.add(Group.objects.get(name="viewer"))
    readers = (viewer, analyst("other"))
    for reader in readers:  # pat's scenario is private
        client.force_login(reader)
        assert client.get(url).status_code == 404
    Scenario.objects.filter(pk=before.scenario_id).update(shared=True)
    for reader in readers:  # shared: every role compares its runs
        client.force_login(reader)
        assert client.get(url).status_code == 200
    assert client.get(f"/runs/compare/?a={before.pk}&b=999999").status_code == 404


def test_runs_without_a_result_or_bad_ids_get_a_clear_message(client, pat, repriced):
    before, _after = repriced
    queued = SimulationRun.objects.create(
        scenario=before.scenario,
        seed=1,
        paths=0,
        document_sha256=before.document_sha256,
        inputs=before.inputs,
        gpus=before.gpus,
        units=before.units,
        status="running",
    )
    client.force_login(pat)
    response = client.get(f"/runs/compare/?a={before.pk}&b={queued.pk}")
    assert response.status_code == 409
    html = response.content.decode()
    assert f"Run {queued.pk} of “Lambda fleet” has not succeeded (it is running)" in html
    assert 'id="chart-compare-cumulative"' not in html
    response = client.get(f"/runs/compare/?a={before.pk}&b=x")
    assert response.status_code == 400
    assert "“b” must be the number of a run" in response.content.decode()


def test_the_runs_list_and_a_run_page_offer_a_labelled_compare_with_form(client, pat, repriced):
    before, after = repriced
    client.force_login(pat)
    html = client.get("/runs/").content.decode()
    assert '<form method="get" action="/runs/compare/"' in html
    assert '<label for="compare-a">Run A</label>' in html
    assert '<label for="compare-b">Run B</label>' in html
    # A: the older run, B: the newest
    assert f'<option value="{before.pk}" selected>' in html.split('id="compare-b"')[0]
    assert f'<option value="{after.pk}" selected>' in html.split('id="compare-b"')[1]
    page = client.get(f"/runs/{before.pk}/").content.decode()
    assert f'<input type="hidden" name="a" value="{before.pk}">' in page
    assert f'<label for="compare-b">Compare run {before.pk} with…</label>' in page
    select = page.split('id="compare-b"')[1].split("</select>")[0]
    assert f'value="{after.pk}"' in select and f'value="{before.pk}"' not in select
    # a run page with no other succeeded run visible has no form
    SimulationRun.objects.filter(pk=after.pk).update(status="failed")
    assert 'id="compare-form"' not in client.get(f"/runs/{before.pk}/").content.decode()
    assert 'id="compare-form"' not in client.get("/runs/").content.decode()


CLAIMS = Path(__file__).resolve().parents[3] / "costapp" / "data" / "claims"


def claim_run(owner, kind: str, **change) -> SimulationRun:
    document = json.loads((CLAIMS / f"dedicated-saves-half--{kind}.json").read_text())
    document.update(change)
    scenario = Scenario.objects.create(owner=owner, name=document["name"][:200], document=document)
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    return run


def rows_of(html: str) -> list[str]:
    table = html.split('id="compare-inputs"', 1)[1].split("</table>", 1)[0]
    return [row.split('<td class="wrap">', 1)[1].split("</td>", 1)[0] for row in table.split("<tr data-path=")[1:]]  # fmt: skip


def test_runs_differing_in_one_utilization_show_one_row_and_say_how_they_were_paired(
    client, pat, catalog, tasks_in_process
):
    """The claim's 90 % and 30 % busy fleets: one row in words, not a row of "(absent)" per
    field of the renamed workload; with an option added, paired by name, and said so."""
    high = claim_run(pat, "high-utilization")
    low = claim_run(pat, "low-utilization")
    client.force_login(pat)
    html = client.get(f"/runs/compare/?a={high.pk}&b={low.pk}").content.decode()
    assert rows_of(html) == ["workload 1, utilization: 90 % → 30 %"]
    assert "(absent)" not in html
    pairing = html.split('id="compare-pairing"', 1)[1].split("</p>", 1)[0]
    assert (
        "paired by position: both runs have 1 workload and 3 options of the same types" in pairing
    )
    assert "workload 1 is “64 H100s of work, 90% busy” in A" in pairing
    document = json.loads((CLAIMS / "dedicated-saves-half--low-utilization.json").read_text())
    more = claim_run(
        pat,
        "low-utilization",
        options=[
            *document["options"],
            {"type": "cloud", "name": "Spot", "billing": "spot", "usd_per_gpu_hour": 1.2},
        ],
    )
    html = client.get(f"/runs/compare/?a={low.pk}&b={more.pk}").content.decode()
    assert 'data-by="name"' in html
    assert (
        "Workloads and options paired by name: run A has 1 workload and 3 options, run B 1 "
        "workload and 4 options." in html
    )
    assert rows_of(html) == ["option 4 “Spot”: only in run B"]
    assert f"Only in run {more.pk} (B): <strong>option 4 “Spot”</strong>" in html
