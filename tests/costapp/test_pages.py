"""The web pages: the layout's header and navigation, the dashboard, an offer's price history,
the claims; and a crawl of every page reachable from the home page."""

import io
import re
from datetime import timedelta
from decimal import Decimal
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.test import override_settings

from accounts.roles import ANALYST
from costapp.claims import CLAIMS
from hardware.models import InstanceOffer, InstancePrice
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(db):
    """The whole shipped catalog: GPU models, prices, egress tiers, demonstration quotes."""
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())


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
    user = UserFactory(username="ana")
    client.force_login(user)
    assert (
        '<span class="role" id="signed-in-role" title="Role">no role</span>'
        in client.get("/claims/").content.decode()
    )
    user.groups.add(Group.objects.get(name="viewer"), Group.objects.get(name="analyst"))
    assert 'title="Role">analyst</span>' in client.get("/claims/").content.decode()
    user.is_superuser = True
    user.save()
    assert 'title="Role">admin</span>' in client.get("/claims/").content.decode()


def test_the_dashboard_shows_the_cheapest_price_per_gpu_and_price_changes(client, catalog):
    client.force_login(UserFactory(username="ana"))
    body = client.get("/").content.decode()
    assert "No price has changed" in body
    h100 = (
        InstancePrice.objects.filter(offer__gpu__slug="h100-sxm", billing="on_demand", flag="")
        .order_by("usd_per_gpu_hour")
        .first()
    )
    assert '<tr data-gpu="h100-sxm">' in body
    assert f'href="/offers/{h100.offer_id}/"' in body
    # a new, lower price of that offer is today's cheapest and a change
    InstancePrice.objects.create(
        offer=h100.offer,
        region=h100.region,
        billing="on_demand",
        usd_per_hour=Decimal("0.01") * h100.offer.gpu_count,
        first_seen=h100.first_seen + timedelta(days=1),
        last_seen=h100.first_seen + timedelta(days=1),
        stated_on=h100.stated_on,
        source_name="test refresh",
    )
    body = client.get("/").content.decode()
    assert '<td class="num">0.01</td>' in body and 'id="changes-table"' in body


def test_an_offers_price_history_page_has_the_chart_json_and_its_table(client, catalog):
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    client.force_login(UserFactory(username="ana"))
    response = client.get(f"/offers/{offer.pk}/")
    assert response.status_code == 200
    figure = response.context["chart"].figure
    assert figure["layout"]["yaxis"]["title"]["text"] == "Price [USD per GPU-hour]"
    on_demand = next(t for t in figure["data"] if t["name"] == "us-east-1 on-demand")
    assert on_demand["y"][0] == 6.88
    body = response.content.decode()
    assert 'id="figure-price-history"' in body and "/static/vendor/plotly.min.js" in body
    assert client.get("/offers/999999/").status_code == 404


def test_a_claim_page_shows_the_arithmetic_key_figures_and_charts(client, catalog_gpus):
    client.force_login(UserFactory(username="ana"))
    response = client.get("/claims/dedicated-saves-half/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "59.6 %" in body and "4,204,800.00" in body
    keys = [chart.key for case in response.context["cases"] for chart in case["charts"]]
    assert keys.count("utilization") == 2 and keys.count("cumulative") == 2
    assert 'id="chart-utilization-high-utilization"' in body
    assert client.get("/claims/no-such-claim/").status_code == 404


def test_anonymous_visitors_are_sent_to_log_in(client):
    for url in ("/", "/gpus/", "/prices/", "/quotes/", "/claims/", f"/claims/{CLAIMS[0].slug}/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_every_page_reachable_from_home_renders_with_no_external_url_and_no_broken_link(
    client, catalog
):
    from costapp import services
    from costapp.celery import app

    from .factories import ScenarioFactory
    from .runs_helpers import scenario_document

    user = UserFactory(username="lead", is_staff=True, roles=[ANALYST])
    user.user_permissions.add(*Permission.objects.filter(codename__endswith="quote"))
    # a scenario with a finished run (tasks in this process), so the run pages are crawled too
    scenario = ScenarioFactory(
        owner=user, name="fleet", document=scenario_document(paths=1_000, seed=1)
    )
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        with override_settings(REDIS_URL=""):
            run = services.run_create(scenario=scenario)
    finally:
        app.conf.task_always_eager = eager
    assert run.status == "succeeded", run.error
    client.force_login(user)
    seen: set[str] = set()
    queue = ["/"]
    pages = 0
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code == 200, f"{url}: {response.status_code}"
        if not response["Content-Type"].startswith("text/html"):
            continue
        pages += 1
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
            # the admin and the prices table's sort and page links are followed once each kind
            if path.startswith("/admin/") and path != "/admin/":
                continue
            if path == "/prices/" and urlsplit(target).query and "/prices/?page=2" in seen:
                continue
            if path.startswith("/offers/") and any(s.startswith("/offers/") for s in seen):
                continue
            if path.startswith("/static/"):
                assert client.get(target).status_code == 200, f"{url}: broken {link}"
                seen.add(target)
                continue
            queue.append(target)
    for must in ("/gpus/", "/prices/", "/quotes/", "/claims/", "/quotes/dedicated/new/"):
        assert must in seen, f"{must} is not reachable from the home page"
    assert any(s.startswith("/offers/") for s in seen)
    assert all(f"/claims/{c.slug}/" in seen for c in CLAIMS)
    for must in ("/scenarios/", f"/scenarios/{scenario.pk}/", "/runs/", f"/runs/{run.pk}/"):
        assert must in seen, f"{must} is not reachable from the home page"
    for download in ("run.xlsx", "result.json"):
        assert f"/runs/{run.pk}/{download}" in seen
    assert f"/api/v1/runs/{run.pk}/monthly.csv" in seen
    assert "/static/vendor/plotly.min.js" in seen and "/static/vendor/htmx.min.js" in seen
    assert pages >= 10


def test_pages_use_a_bounded_number_of_queries(client, catalog, django_assert_max_num_queries):
    client.force_login(get_user_model().objects.create_superuser("lead"))
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    for url, most in (("/", 8), ("/gpus/", 6), ("/quotes/", 8), (f"/offers/{offer.pk}/", 8)):
        with django_assert_max_num_queries(most):
            assert client.get(url).status_code == 200


def test_a_claim_page_is_computed_again_when_the_gpu_figures_change(client, catalog_gpus):
    from hardware.models import GpuModel

    client.force_login(UserFactory(username="ana"))
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
    client.force_login(UserFactory(username="ana"))
    response = client.get("/claims/dedicated-saves-half/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "cannot be priced with the catalog as it stands" in html
    assert "unknown GPU" in html
