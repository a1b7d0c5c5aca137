"""The shared API test mixin: every catalog endpoint gets its list, retrieve, create, update,
delete and filter tests, what each role may and may not do (401 / 403 / 404), and a fixed number
of SQL queries whatever the page size.

A test class sets ``path`` (``"/api/v1/gpus/"``), ``lookup`` (the attribute in the URL), and
implements ``make(base, i)`` (one stored object, distinct per ``i``), ``create_body(base)``,
``update_body(base, obj)`` (a PATCH body, with ``updated(obj)`` saying whether the stored object
shows it), and ``filter_case(base, objects)`` (query parameters and the lookups they must give).
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.roles import ADMIN, ANALYST, CATALOG_EDITOR, ROLES, VIEWER
from accounts.services import token_create
from hardware.models import (
    Billing,
    GpuModel,
    InstanceOffer,
    Provider,
    ProviderKind,
    Region,
)
from tests.factories import UserFactory
from tests.hardware.factories import (
    GpuModelFactory,
    InstanceOfferFactory,
    InstancePriceFactory,
    ProviderFactory,
    RegionFactory,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
READERS = (VIEWER, ANALYST, CATALOG_EDITOR, ADMIN)
WRITERS = (CATALOG_EDITOR, ADMIN)


@dataclass
class Base:
    """Objects the rows under test hang on."""

    gpu: GpuModel
    other_gpu: GpuModel
    provider: Provider
    region: Region
    offer: InstanceOffer


def make_gpu(slug: str, **extra: Any) -> GpuModel:
    """A GPU with memory figures only (no throughput)."""
    fields = {"memory_bandwidth_tb_s": Decimal("3.35"), "bf16_dense_tflops": None, **extra}
    return GpuModelFactory(slug=slug, **fields)


def make_base() -> Base:
    gpu = make_gpu("h100-test", tdp_w=700)
    other = make_gpu("l4-test", memory_gb=Decimal("24"))
    provider = ProviderFactory(slug="cloudco", name="CloudCo", kind=ProviderKind.GPU_CLOUD)
    region = RegionFactory(provider=provider, code="us-east-1", name="Virginia")
    offer = InstanceOfferFactory(provider=provider, instance_type="gpu.8x", gpu=gpu, gpu_count=8)
    return Base(gpu, other, provider, region, offer)


def make_price(offer: InstanceOffer, region: Region, usd_per_hour: str, **extra: Any):
    fields = {
        "billing": Billing.ON_DEMAND,
        "stated_on": T0.date(),
        "first_seen": T0,
        "last_seen": T0 + timedelta(days=10),
        "source_name": "test",
        **extra,
    }
    return InstancePriceFactory(
        offer=offer, region=region, usd_per_hour=Decimal(usd_per_hour), **fields
    )


def role_clients() -> dict[str | None, APIClient]:
    """A token-authenticated client per role; ``"none"`` signed in without a role, ``None``
    anonymous."""
    clients: dict[str | None, APIClient] = {None: APIClient()}
    for role in (*ROLES, "none"):
        user = UserFactory(  # tokens only: no usable password
            username=f"user-{role}", password=None, roles=[] if role == "none" else [role]
        )
        _, key = token_create(user=user)
        clients[role] = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    return clients


class CatalogCrudTests:
    """Mixin: the tests every catalog endpoint must pass."""

    path: str
    lookup: str = "id"
    query_cap: int = 6
    """Most SQL queries a list may take (token, role, count, page, filter lookups)."""

    def make(self, base: Base, i: int) -> Any:
        raise NotImplementedError

    def create_body(self, base: Base) -> dict:
        raise NotImplementedError

    def update_body(self, base: Base, obj: Any) -> dict:
        raise NotImplementedError

    def updated(self, obj: Any) -> bool:
        raise NotImplementedError

    def filter_case(self, base: Base, objects: list) -> tuple[dict, set]:
        raise NotImplementedError

    @pytest.fixture
    def base(self, db) -> Base:
        return make_base()

    @pytest.fixture
    def role_clients(self, db) -> dict[str | None, APIClient]:
        return role_clients()

    # --- helpers ---------------------------------------------------------------------------

    def key(self, obj: Any) -> str:
        return str(getattr(obj, self.lookup))

    def url(self, obj: Any) -> str:
        return f"{self.path}{self.key(obj)}/"

    def keys(self, response) -> list[str]:
        return [str(row[self.lookup]) for row in response.json()["results"]]

    def model(self, obj: Any):
        return type(obj)

    # --- the tests -------------------------------------------------------------------------

    def test_list_is_paginated_and_shows_every_row(self, base, role_clients):
        objects = [self.make(base, i) for i in range(3)]
        response = role_clients[VIEWER].get(self.path, {"page_size": 2})
        assert response.status_code == 200, response.content
        body = response.json()
        assert set(body) == {"count", "next", "previous", "results"}
        assert body["count"] >= 3 and len(body["results"]) == 2 and body["next"]
        rest = role_clients[VIEWER].get(body["next"]).json()["results"]
        seen = set(self.keys(response)) | {str(r[self.lookup]) for r in rest}
        assert {self.key(o) for o in objects} <= seen

    def test_retrieve_gives_the_object_and_404_for_an_unknown_one(self, base, role_clients):
        obj = self.make(base, 0)
        response = role_clients[VIEWER].get(self.url(obj))
        assert response.status_code == 200, response.content
        assert str(response.json()[self.lookup]) == self.key(obj)
        missing = role_clients[VIEWER].get(f"{self.path}999999/")
        assert missing.status_code == 404
        assert missing.json()["errors"][0]["field"] is None

    def test_create_stores_the_object_and_returns_it(self, base, role_clients):
        body = self.create_body(base)
        response = role_clients[CATALOG_EDITOR].post(self.path, body, format="json")
        assert response.status_code == 201, response.content
        created = response.json()
        assert created[self.lookup] is not None
        got = role_clients[VIEWER].get(f"{self.path}{created[self.lookup]}/")
        assert got.status_code == 200 and got.json() == created

    def test_update_changes_the_stored_object(self, base, role_clients):
        obj = self.make(base, 0)
        response = role_clients[CATALOG_EDITOR].patch(
            self.url(obj), self.update_body(base, obj), format="json"
        )
        assert response.status_code == 200, response.content
        obj.refresh_from_db()
        assert self.updated(obj)

    def test_delete_removes_the_object(self, base, role_clients):
        obj = self.make(base, 0)
        model = self.model(obj)
        response = role_clients[ADMIN].delete(self.url(obj))
        assert response.status_code == 204, response.content
        assert not model.objects.filter(pk=obj.pk).exists()
        assert role_clients[VIEWER].get(self.url(obj)).status_code == 404

    def test_filters_select_the_right_rows(self, base, role_clients):
        objects = [self.make(base, i) for i in range(4)]
        params, expected = self.filter_case(base, objects)
        response = role_clients[VIEWER].get(self.path, {**params, "page_size": 500})
        assert response.status_code == 200, response.content
        assert set(self.keys(response)) == {str(k) for k in expected}
        everything = role_clients[VIEWER].get(self.path, {"page_size": 500})
        assert expected, "a filter case must select something"
        assert {str(k) for k in expected} < set(self.keys(everything)), "and leave something out"

    def test_each_role_may_do_what_api_md_says_and_no_more(self, base, role_clients):
        obj = self.make(base, 0)
        model = self.model(obj)
        before = model.objects.count()
        for role in (None, "none"):
            client = role_clients[role]
            expected = 401 if role is None else 403
            for response in (
                client.get(self.path),
                client.get(self.url(obj)),
                client.post(self.path, self.create_body(base), format="json"),
                client.patch(self.url(obj), self.update_body(base, obj), format="json"),
                client.delete(self.url(obj)),
            ):
                assert response.status_code == expected, (role, response.content)
                assert response.json()["errors"][0]["field"] is None
            if role is None:
                assert response["WWW-Authenticate"].startswith("Token")
        for role in READERS:
            client = role_clients[role]
            assert client.get(self.path).status_code == 200, role
            assert client.get(self.url(obj)).status_code == 200, role
            assert client.get(f"{self.path}999999/").status_code == 404, role
            if role in WRITERS:
                continue
            assert client.post(self.path, self.create_body(base), format="json").status_code == 403
            patch = client.patch(self.url(obj), self.update_body(base, obj), format="json")
            assert patch.status_code == 403, role
            assert client.delete(self.url(obj)).status_code == 403, role
        assert model.objects.count() == before
        obj.refresh_from_db()
        assert not self.updated(obj)

    def test_a_list_takes_the_same_queries_whatever_the_page_size(self, base, role_clients):
        for i in range(12):
            self.make(base, i)
        client = role_clients[VIEWER]
        counts = []
        for page_size in (2, 500):
            with CaptureQueriesContext(connection) as queries:
                response = client.get(self.path, {"page_size": page_size})
            assert response.status_code == 200
            counts.append(len(queries))
        assert counts[0] == counts[1], counts
        assert counts[1] <= self.query_cap, [q["sql"] for q in queries.captured_queries]
