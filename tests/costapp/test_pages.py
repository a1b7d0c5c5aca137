"""The web pages: the layout's header and navigation, the dashboard, an offer's price history,
the claims; and, for each role, a crawl of every page reachable from the home page."""

import re
from datetime import timedelta
from decimal import Decimal
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import override_settings
from django.utils import timezone

from accounts.roles import ADMIN, ANALYST, CATALOG_EDITOR, VIEWER, role_rank
from costapp.reports.claims import CLAIMS
from hardware.display import figures
from hardware.models import InstanceOffer, InstancePrice
from tests.roles import user_with_role

pytestmark = pytest.mark.django_db


class Links(HTMLParser):
    """Every URL a page refers to (links, scripts, styles, images, forms)."""

    ATTRS = {"href", "src", "action", "hx-get", "hx-post", "data-src", "poster"}

    def __init__(self, html: str):
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in self.ATTRS and value:
                self.urls.append((tag, name, value))


def test_the_header_shows_the_user_and_role(client):
    user = get_user_model().objects.create_user("ana")
    client.force_login(user)
    assert (
        '<span class="role" id="signed-in-role" title="Role">no role</span>'
        in client.get("/").content.decode()
    )
    user.groups.add(Group.objects.get(name="viewer"), Group.objects.get(name="analyst"))
    assert 'title="Role">analyst</span>' in client.get("/claims/").content.decode()
    user.is_superuser = True
    user.save()
    assert 'title="Role">admin</span>' in client.get("/claims/").content.decode()


def test_the_dashboard_shows_the_cheapest_price_per_gpu_and_price_changes(client, catalog):
    client.force_login(user_with_role("ana", VIEWER))
    body = client.get("/").content.decode()
    assert "No price has changed" in body
    assert "Cheapest on-demand price per GPU model in the catalog" in body and " today<" not in body
    h100 = (
        InstancePrice.objects.filter(offer__gpu__slug="h100-sxm", billing="on_demand", flag="")
        .order_by("usd_per_gpu_hour")
        .first()
    )
    row = body.split('<tr data-gpu="h100-sxm">', 1)[1].split("</tr>", 1)[0]
    assert f'href="/offers/{h100.offer_id}/"' in row
    assert f'datetime="{h100.stated_on.isoformat()}"' in row  # the source's day, not the load's
    # a new, lower price of that offer, stated today, is the cheapest and a change
    InstancePrice.objects.create(
        offer=h100.offer,
        region=h100.region,
        billing="on_demand",
        usd_per_hour=Decimal("0.01") * h100.offer.gpu_count,
        first_seen=h100.first_seen + timedelta(days=1),
        last_seen=h100.first_seen + timedelta(days=1),
        stated_on=timezone.localdate(),
        source_name="test refresh",
    )
    body = client.get("/").content.decode()
    row = body.split('<tr data-gpu="h100-sxm">', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num" data-catalog-price data-label="USD per GPU-hour">$0.0100</td>' in row
    assert ">stated today</time> by test refresh" in row
    changes = body.split('id="changes-table"', 1)[1].split("</table>", 1)[0]
    assert f"<code>{h100.offer.instance_type}</code>" in changes
    assert figures.usd_rate(h100.usd_per_gpu_hour) in changes  # the price it replaced


def test_an_offers_price_history_page_has_the_chart_json_and_its_table(client, catalog):
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    client.force_login(user_with_role("ana", VIEWER))
    response = client.get(f"/offers/{offer.pk}/")
    assert response.status_code == 200
    figure = response.context["chart"].figure
    assert figure["layout"]["yaxis"]["title"]["text"] == "Price [USD per GPU-hour]"
    on_demand = next(t for t in figure["data"] if t["name"] == "us-east-1, on-demand")
    stated = InstancePrice.objects.get(offer=offer, region__code="us-east-1", billing="on_demand")
    assert on_demand["y"] == [6.88] and on_demand["x"] == [stated.stated_on.isoformat()]
    body = response.content.decode()
    assert 'id="figure-price-history"' in body and "/static/vendor/plotly.min.js" in body
    assert client.get("/offers/999999/").status_code == 404


def test_a_claim_page_shows_the_arithmetic_key_figures_and_charts(client, catalog):
    client.force_login(user_with_role("ana", VIEWER))
    response = client.get("/claims/dedicated-saves-half/")
    assert response.status_code == 200
    body = response.content.decode()
    # a chart's table cell (its end tag left out, as HTML allows)
    assert "59.6 %" in body and re.search(r"<td>4,204,800\s*<", body)
    keys = [chart.key for case in response.context["cases"] for chart in case["charts"]]
    assert keys.count("utilization") == 2 and keys.count("cumulative") == 2
    assert 'id="chart-utilization-high-utilization"' in body
    assert client.get("/claims/no-such-claim/").status_code == 404


def test_anonymous_visitors_are_sent_to_log_in(client):
    for url in ("/", "/gpus/", "/prices/", "/quotes/", "/claims/", f"/claims/{CLAIMS[0].slug}/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


ROLE_NAMES = (None, VIEWER, ANALYST, CATALOG_EDITOR, ADMIN)


def crawl(client, start: str = "/") -> set[str]:
    """Every URL reachable from ``start`` by following the links, scripts, styles and forms of
    each page, asserting on the way that no page names another site and that every link answers
    200 (or 302 to the login page). Pages of one kind (admin pages, the prices table's sort and
    page links, offers, a GPU's cheapest prices) are followed once each: the first of each kind
    queued, not every offer of the prices table."""
    seen: set[str] = set()
    queue = [start]
    once: set[str] = set()  # the kinds of page followed once, queued already
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        if response.status_code == 302:
            assert "/login/" in response["Location"], f"{url}: 302 to {response['Location']}"
            continue
        assert response.status_code == 200, f"{url}: {response.status_code}"
        if not response["Content-Type"].startswith("text/html"):
            continue
        html = response.content.decode()
        # no address of another site anywhere in the page, not only in links and scripts (an
        # SVG's xmlns is a name, never fetched)
        text = re.sub(r'xmlns(:\w+)?="[^"]*"', "", html)
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), url
        for tag, attr, link in Links(html).urls:
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, f"{url}: external {tag}[{attr}]={link}"
            if link.startswith("#") or parts.path.startswith("/logout"):
                continue
            target = urljoin(url, link).split("#")[0]
            path = urlsplit(target).path
            if path.startswith("/admin/") and path != "/admin/":
                continue
            if tag == "form" and path == "/runs/compare/" and not urlsplit(target).query:
                continue  # a GET form: asked without the runs it names, a 400 says what is missing
            if path == "/prices/" and urlsplit(target).query and "/prices/?page=2" in seen:
                continue
            kind = (
                "offer"
                if path.startswith("/offers/")
                else "cheapest"
                if re.fullmatch(r"/gpus/[^/]+/cheapest/", path)
                else None
            )
            if kind is not None:  # one page of each of these kinds, the first one queued
                if kind in once:
                    continue
                once.add(kind)
            if path.startswith("/static/"):
                assert client.get(target).status_code == 200, f"{url}: broken {link}"
                seen.add(target)
                continue
            queue.append(target)
    return seen


def sourced_document() -> dict:
    """A document whose figures come from every kind of format 1.2 reference: offers (one with
    its egress price unknown), a hosted model's token price and sourced assumptions."""
    return {
        "name": "sourced",
        "horizon_months": 12,
        "egress_tb_per_month": 5,
        "workloads": [
            {"type": "inference", "name": "chat", "gpu": "h100-sxm", "params_billion": 70,
             "tokens_per_second": 200},
        ],
        "options": [
            {"type": "cloud", "name": "Shadeform",
             "offer": {"provider": "shadeform", "instance": "hyperstack_H100x8-NVLINK",
                       "region": "montreal-canada-2"}},
            {"type": "api", "name": "Fireworks",
             "token_price": {"provider": "fireworks",
                             "model": "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct"}},
            {"type": "on_prem", "name": "Buy", "servers": 1, "capex_usd_per_server": 270_000,
             "server_kw": {"assumption": "dgx_h100_max_kw"},
             "colo_usd_per_kw_month": {"assumption": "colo_usd_per_kw_month"}},
        ],
    }  # fmt: skip


@pytest.mark.long
def test_every_role_reaches_its_pages_from_home_with_no_external_url_and_no_broken_link(
    client, catalog
):
    from costapp.celery import app
    from costapp.models import Scenario
    from costapp.runs import pipeline
    from costapp.runs.links import run_link_create
    from hardware.models import DedicatedQuote

    from .runs_helpers import scenario_document

    # a shared scenario with a finished run (tasks in this process), so run pages are crawled
    owner = user_with_role("owner", ANALYST)
    scenario = Scenario.objects.create(
        owner=owner, name="fleet", shared=True, document=scenario_document(paths=1_000, seed=1)
    )
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        with override_settings(REDIS_URL=""):
            run = pipeline.run_create(scenario=scenario)
            sourced_scenario = Scenario.objects.create(
                owner=owner, name="sourced", shared=True, document=sourced_document()
            )
            sourced = pipeline.run_create(scenario=sourced_scenario)
    finally:
        app.conf.task_always_eager = eager
    assert run.status == "succeeded", run.error
    assert sourced.status == "succeeded" and sourced.sources, sourced.error
    # a run stored before format 1.2: no sources, no tokens or goodput figures
    old_result = {k: v for k, v in run.result.items() if k != "sources"}
    old_result["engine_version"] = "1.1.0"
    old_result["options"] = [
        {k: v for k, v in o.items() if k not in ("all_in_usd_per_million_tokens", "goodput")}
        for o in run.result["options"]
    ]
    old = type(run).objects.create(
        scenario=scenario,
        status="succeeded",
        inputs=run.inputs,
        gpus=run.gpus,
        result=old_result,
        monthly_breakdown_usd=run.monthly_breakdown_usd,
        engine_version="1.1.0",
        document_sha256=run.document_sha256,
    )
    # a private scenario with a run: not found for anyone but its owner, whatever the role
    hidden = Scenario.objects.create(owner=owner, name="mine", document={})
    hidden_run = type(run).objects.create(
        scenario=hidden, status="succeeded", result=old_result, engine_version="1.1.0"
    )
    private = [
        f"/scenarios/{hidden.pk}/",
        f"/runs/{hidden_run.pk}/",
        f"/runs/{hidden_run.pk}/run.xlsx",
    ]
    _, key = run_link_create(run=run, user=owner)
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    quote = DedicatedQuote.objects.get(reference="DEMO-D-H100-8")
    # the role table: each page and the lowest role that may open it (None: any signed-in user)
    pages = {
        "/": None,
        "/tokens/": None,
        "/gpus/": VIEWER,
        "/gpus/h100-sxm/cheapest/": VIEWER,
        "/prices/": VIEWER,
        f"/offers/{offer.pk}/": VIEWER,
        "/quotes/": VIEWER,
        "/claims/": VIEWER,
        **{f"/claims/{claim.slug}/": VIEWER for claim in CLAIMS},
        "/scenarios/": VIEWER,
        f"/scenarios/{scenario.pk}/": VIEWER,
        "/scenarios/new/": ANALYST,
        "/runs/": VIEWER,
        f"/runs/{run.pk}/": VIEWER,
        f"/runs/{run.pk}/status/": VIEWER,
        f"/runs/{sourced.pk}/": VIEWER,
        f"/runs/{sourced.pk}/run.xlsx": VIEWER,
        f"/api/v1/runs/{sourced.pk}/monthly.csv": VIEWER,
        f"/runs/{old.pk}/": VIEWER,
        f"/runs/{old.pk}/run.xlsx": VIEWER,
        f"/runs/compare/?a={old.pk}&b={sourced.pk}": VIEWER,
        f"/shared/{key}/": None,
        f"/shared/{key}/monthly.csv": None,
        "/token-prices/": VIEWER,
        "/assumptions/": VIEWER,
        "/catalog/coverage/": VIEWER,
        "/ask/": VIEWER,
        "/ask/questions/": VIEWER,
        f"/runs/{run.pk}/run.xlsx": VIEWER,
        f"/runs/{run.pk}/result.json": VIEWER,
        f"/api/v1/runs/{run.pk}/monthly.csv": VIEWER,
        "/quotes/dedicated/new/": CATALOG_EDITOR,
        "/quotes/purchase/new/": CATALOG_EDITOR,
        f"/quotes/dedicated/{quote.pk}/edit/": CATALOG_EDITOR,
        "/admin/": CATALOG_EDITOR,
        "/admin/hardware/dedicatedquote/": CATALOG_EDITOR,
        f"/admin/hardware/dedicatedquote/{quote.pk}/change/": CATALOG_EDITOR,
        "/admin/hardware/assumption/": CATALOG_EDITOR,
        "/admin/hardware/refreshrun/": ADMIN,
        "/admin/auth/user/": ADMIN,
    }
    # pages reached by following links; the others are only asked for directly
    linked = set(pages) - {
        "/gpus/h100-sxm/cheapest/",
        f"/offers/{offer.pk}/",  # one offer page is crawled (below), this one asked for
        f"/runs/{run.pk}/status/",
        f"/runs/{sourced.pk}/run.xlsx",
        f"/api/v1/runs/{sourced.pk}/monthly.csv",
        f"/runs/{old.pk}/",
        f"/runs/{old.pk}/run.xlsx",
        f"/runs/compare/?a={old.pk}&b={sourced.pk}",
        f"/shared/{key}/",
        f"/shared/{key}/monthly.csv",
        *(url for url in pages if url.startswith("/admin/") and url != "/admin/"),
    }
    for role in ROLE_NAMES:
        user = user_with_role(f"user-{role}", role)
        client.force_login(user)
        seen = crawl(client)
        rank = -1 if role is None else role_rank(role)
        for url, lowest in pages.items():
            allowed = lowest is None or rank >= role_rank(lowest)
            answer = client.get(url).status_code
            if allowed:
                assert answer == 200, f"{role}: {url} answered {answer}"
                if url in linked:
                    assert url in seen, f"{role}: {url} is not reachable from the home page"
            else:
                # the admin sends a user who may not use it to its own sign-in page
                refused = (403, 404, 302) if url.startswith("/admin/") else (403, 404)
                assert answer in refused, f"{role}: {url} answered {answer}"
                assert url not in seen, f"{role}: {url} is linked from a page"
        for url in private:
            assert client.get(url).status_code == (403 if role is None else 404), (role, url)
            assert url not in seen, (role, url)
        assert any(s.startswith("/gpus/") and s.endswith("/cheapest/") for s in seen) == (
            role is not None
        )
        assert any(s.startswith("/offers/") for s in seen) == (role is not None)
        assert ("/admin/" in seen) == (role in (CATALOG_EDITOR, ADMIN))
        assert "/static/vendor/htmx.min.js" in seen
        assert ("/static/vendor/plotly.min.js" in seen) == (role is not None)
        client.logout()


def test_pages_use_a_bounded_number_of_queries(client, catalog, django_assert_max_num_queries):
    client.force_login(get_user_model().objects.create_superuser("lead"))
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    for url, most in (("/", 8), ("/gpus/", 6), ("/quotes/", 8), (f"/offers/{offer.pk}/", 8)):
        with django_assert_max_num_queries(most):
            assert client.get(url).status_code == 200


def test_a_claim_page_is_computed_again_when_the_gpu_figures_change(client, catalog):
    from hardware.models import GpuModel

    client.force_login(user_with_role("ana", VIEWER))
    client.get("/claims/7b-fp16-needs-28gb/")  # fills the per-process cache
    l4 = GpuModel.objects.get(slug="l4")
    l4.memory_gb = Decimal("12")  # 16.8 GB of weights and cache no longer fit one L4
    l4.save()
    response = client.get("/claims/7b-fp16-needs-28gb/")
    serving = response.context["cases"][0]["result"]
    l4_option = next(o for o in serving["options"] if o["gpu"] == "l4")
    assert l4_option["provisioned_gpus"] == 2


def test_a_claim_page_on_a_catalog_without_its_gpu_says_so_instead_of_failing(client, db):
    # No catalog loaded: the page names the problem for each case, with the engine's paths.
    client.force_login(user_with_role("ana", VIEWER))
    response = client.get("/claims/dedicated-saves-half/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "cannot be priced with the catalog as it stands" in html
    assert "unknown GPU" in html


def test_a_superuser_reads_every_private_scenario_and_run_as_docs_api_says(client, db):
    """docs/api.md: superusers can do everything; another user's private work is 404 for the
    rest (the role table above)."""
    from costapp.models import Scenario, SimulationRun

    owner = user_with_role("owner", ANALYST)
    hidden = Scenario.objects.create(owner=owner, name="mine", document={"name": "mine"})
    run = SimulationRun.objects.create(scenario=hidden, status="failed", error="x")
    client.force_login(get_user_model().objects.create_superuser("root"))
    assert client.get(f"/scenarios/{hidden.pk}/").status_code == 200
    assert client.get(f"/runs/{run.pk}/").status_code == 200
    assert client.get(f"/api/v1/runs/{run.pk}/").status_code == 200
    client.force_login(user_with_role("boss", ADMIN))
    assert client.get(f"/runs/{run.pk}/").status_code == 404
