"""Cached pages of prices/current/ (hardware/api/page_cache.py): served again only while the
catalog is unchanged; every write path (API, admin, load_catalog, a refresh, bulk updates) shows on
the next request. The writes here are committed for real (``transaction=True``), as in production:
the catalog version changes when a transaction commits."""

import io
import json
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.roles import CATALOG_EDITOR, VIEWER
from accounts.services import token_create
from hardware.catalog_version import catalog_version
from hardware.models import InstanceOffer, InstancePrice, Region
from hardware.selectors import current_prices
from tests.api_crud import make_base, make_price

from ..refresh.test_pipeline import lambda_copy, refresh
from ..test_admin import split

CURRENT = "/api/v1/prices/current/"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def page_cache(settings):
    settings.API_PAGE_CACHE_SECONDS = 300


def client_for(user_model, name: str, role: str) -> APIClient:
    user = user_model.objects.create_user(name)
    # (a transactional test empties the tables after it, the role groups of the migration too)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")


@pytest.fixture
def viewer(django_user_model) -> APIClient:
    return client_for(django_user_model, "viewer", VIEWER)


@pytest.fixture
def editor(django_user_model) -> APIClient:
    return client_for(django_user_model, "editor", CATALOG_EDITOR)


@pytest.fixture
def prices():
    base = make_base()
    return base, [
        make_price(base.offer, base.region, "24"),
        make_price(base.offer, base.region, "8", billing="spot"),
    ]


def get(client: APIClient, **params) -> tuple[dict, int]:
    """The page and how many SQL queries answering it took."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(CURRENT, params)
    assert response.status_code == 200, response.content
    return response.json(), len(queries)


def usd(body: dict) -> dict[int, str]:
    return {row["id"]: row["usd_per_hour"] for row in body["results"]}


def test_a_page_asked_again_is_the_same_bytes_and_headers_and_reads_only_the_token(
    page_cache, prices, viewer
):
    first = viewer.get(CURRENT, {"page_size": 1})
    with CaptureQueriesContext(connection) as queries:
        again = viewer.get(CURRENT, {"page_size": 1})
    assert again.content == first.content
    assert json.loads(again.content)["next"].endswith("?page=2&page_size=1")
    assert dict(again.headers) == dict(first.headers)
    assert len(queries) == 1, [q["sql"] for q in queries]  # the token: no price query
    other, count = get(viewer, page_size=2)  # another query string is another page
    assert len(other["results"]) == 2 and count == 3


def test_without_the_setting_nothing_is_cached(settings, prices, viewer):
    settings.API_PAGE_CACHE_SECONDS = 0
    get(viewer)
    assert get(viewer)[1] == 3


def test_the_browsable_api_and_errors_are_never_cached(page_cache, prices, viewer):
    for _ in range(2):
        with CaptureQueriesContext(connection) as queries:
            html = viewer.get(CURRENT, HTTP_ACCEPT="text/html")
        assert html.status_code == 200 and html["Content-Type"].startswith("text/html")
        assert len(queries) > 1
    for _ in range(2):
        bad = viewer.get(CURRENT, {"billing": "monthly"})
        assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "billing"


def test_roles_and_throttling_still_apply_to_a_cached_page(
    page_cache, prices, viewer, django_user_model, settings
):
    get(viewer)
    assert APIClient().get(CURRENT).status_code == 401
    nobody = django_user_model.objects.create_user("nobody")
    no_role = APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=nobody)[1]}")
    assert no_role.get(CURRENT).status_code == 403
    settings.API_THROTTLE_RATE = "2/minute"
    limited = client_for(django_user_model, "limited", VIEWER)
    assert [limited.get(CURRENT).status_code for _ in range(3)] == [200, 200, 429]


def test_an_api_write_shows_on_the_next_request(page_cache, prices, viewer, editor):
    base, (on_demand, spot) = prices
    assert usd(get(viewer)[0])[on_demand.pk] == "24.0000000000"
    changed = editor.patch(f"/api/v1/prices/{on_demand.pk}/", {"usd_per_hour": "20"}, format="json")
    assert changed.status_code == 200, changed.content
    body, count = get(viewer)
    assert usd(body)[on_demand.pk] == "20.0000000000" and count == 3
    assert get(viewer)[1] == 1  # cached again
    assert editor.delete(f"/api/v1/prices/{spot.pk}/").status_code == 204
    assert spot.pk not in usd(get(viewer)[0])
    renamed = editor.patch(
        f"/api/v1/offers/{base.offer.pk}/", {"instance_type": "gpu.8x-new"}, format="json"
    )
    assert renamed.status_code == 200, renamed.content
    assert get(viewer)[0]["results"][0]["offer"]["instance_type"] == "gpu.8x-new"


def test_an_admin_edit_shows_on_the_next_request(page_cache, prices, viewer, admin_client):
    base, (on_demand, _) = prices
    get(viewer)
    data = {
        "offer": on_demand.offer_id,
        "region": on_demand.region_id,
        "billing": on_demand.billing,
        "usd_per_hour": "22.00",
        "zone": "",
        "source_name": "hand edit",
        "source_sha256": "",
        "stated_on": on_demand.stated_on.isoformat(),
        "flag": "",
        "note": "",
    }
    for field in ("first_seen", "last_seen"):
        for part, value in split(getattr(on_demand, field)).items():
            data[f"{field}_{part}"] = value
    url = reverse("admin:hardware_instanceprice_change", args=[on_demand.pk])
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert usd(get(viewer)[0])[on_demand.pk] == "22.0000000000"
    region_url = reverse("admin:hardware_region_change", args=[base.region.pk])
    response = admin_client.post(
        region_url, {"provider": base.provider.pk, "code": "us-east-1", "name": "N. Virginia"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert {row["region"]["name"] for row in get(viewer)[0]["results"]} == {"N. Virginia"}


def test_bulk_writes_show_on_the_next_request(page_cache, prices, viewer):
    base, (on_demand, spot) = prices
    get(viewer)
    InstancePrice.objects.filter(pk=spot.pk).update(vanished_at=spot.last_seen)
    assert set(usd(get(viewer)[0])) == {on_demand.pk}
    other = InstanceOffer.objects.bulk_create(
        [InstanceOffer(provider=base.provider, instance_type="gpu.1x", gpu=base.gpu, gpu_count=1)]
    )[0]
    price = InstancePrice(
        offer=other,
        region=base.region,
        billing="on_demand",
        usd_per_hour=Decimal(3),
        stated_on=on_demand.stated_on,
        first_seen=on_demand.first_seen,
        last_seen=on_demand.last_seen,
        source_name="bulk",
    )
    price.derive_usd_per_gpu_hour()
    InstancePrice.objects.bulk_create([price])
    assert len(get(viewer)[0]["results"]) == 2
    InstancePrice.objects.bulk_update([on_demand], ["stated_on"])  # same value: still a write
    assert get(viewer)[1] == 3


def test_the_version_changes_when_the_write_commits_not_before(page_cache, prices, viewer):
    base, (on_demand, _) = prices
    before = catalog_version()
    with transaction.atomic():
        Region.objects.filter(pk=base.region.pk).update(name="Elsewhere")
        on_demand.usd_per_hour = Decimal(30)
        on_demand.save()
        assert catalog_version() == before  # a reader now still sees the old rows
    after = catalog_version()
    assert after != before
    try:
        with transaction.atomic():
            on_demand.usd_per_hour = Decimal(31)
            on_demand.save()
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass
    assert catalog_version() == after  # nothing committed, nothing to throw away
    assert usd(get(viewer)[0])[on_demand.pk] == "30.0000000000"


def test_load_catalog_and_a_refresh_show_on_the_next_request(page_cache, viewer, tmp_path):
    assert get(viewer)[0]["count"] == 0
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())
    assert get(viewer)[0]["count"] == current_prices().count() > 0
    params = {"provider": "lambda", "page_size": 500}
    before = get(viewer, **params)[0]
    h100 = {r["id"] for r in before["results"] if r["offer"]["instance_type"] == "gpu_8x_h100_sxm5"}
    assert h100 and get(viewer, **params)[1] == 1
    path = lambda_copy(tmp_path, edit=lambda line: line.replace(",23.92,", ",24.50,", 1))
    status, out = refresh("skypilot", "--file", str(path))
    assert status == 0, out
    after = get(viewer, **params)[0]
    now = {
        r["usd_per_hour"]
        for r in after["results"]
        if r["offer"]["instance_type"] == "gpu_8x_h100_sxm5"
    }
    assert now == {"24.5000000000"}
    assert not h100 & {r["id"] for r in after["results"]}  # new rows replaced them
