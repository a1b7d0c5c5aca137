"""Every catalog endpoint of docs/api.md through the shared mixin (tests/api_crud.py).

A list that pages an unordered queryset fails here (Django's warning is an error), and every
list must be in a total order, with and without ``?ordering``, so pages never overlap.
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import Model, QuerySet, UniqueConstraint

from hardware.api.urls import router
from hardware.models import (
    Billing,
    DedicatedQuote,
    EgressTier,
    InstanceOffer,
    ProviderKind,
)
from tests.api_crud import T0, CatalogCrudTests, make_gpu, make_price

from ..factories import (
    DedicatedQuoteFactory,
    EgressTierFactory,
    InstanceOfferFactory,
    ProviderFactory,
    PurchaseQuoteFactory,
    RegionFactory,
)

pytestmark = pytest.mark.filterwarnings("error::django.core.paginator.UnorderedObjectListWarning")


def _identifies(model: type[Model], names: set[str]) -> bool:
    """Whether the fields ``names`` of ``model`` single out one row (the pk, a unique field, or
    every field of an unconditional unique constraint)."""
    keys = [{"pk"}, {model._meta.pk.name}]
    keys += [{field.name} for field in model._meta.fields if field.unique]
    keys += [
        set(constraint.fields)
        for constraint in model._meta.constraints
        if isinstance(constraint, UniqueConstraint) and constraint.fields
        if constraint.condition is None
    ]
    return any(key <= names for key in keys)


def _order_keys(queryset: QuerySet) -> set[str]:
    """The fields ``queryset`` sorts on; ``provider__slug`` counts as ``provider`` where the
    slug identifies the provider."""
    terms = queryset.query.order_by or (
        () if queryset.query.group_by else queryset.model._meta.ordering
    )
    names = set()
    for term in terms:
        name = term.lstrip("-") if isinstance(term, str) else term.expression.name
        head, _, rest = name.partition("__")
        related = queryset.model._meta.get_field(head).related_model if rest else None
        if related is not None and _identifies(related, {rest}):
            name = head
        names.add(name)
    return names


def test_every_catalog_list_is_in_a_total_order():
    """Data-independent: each list's queryset (and each ``?ordering`` it offers) sorts on
    fields that single out one row, so a page boundary never falls between equal keys."""
    checked = []
    for prefix, viewset, _ in router.registry:
        view = viewset(action="list", format_kwarg=None, kwargs={})
        queryset = view.get_queryset()
        orders = {"(default)": queryset}
        filterset_class = getattr(view, "filterset_class", None)
        ordering = filterset_class.base_filters.get("ordering") if filterset_class else None
        for param, _label in ordering.extra["choices"] if ordering else ():
            orders[param] = filterset_class({"ordering": param}, queryset=queryset).qs
        for param, ordered in orders.items():
            assert ordered.ordered, (prefix, param)
            keys = _order_keys(ordered)
            assert _identifies(ordered.model, keys), (prefix, param, keys)
            checked.append((prefix, param))
    assert len({prefix for prefix, _ in checked}) == len(router.registry) >= 9
    assert ("prices", "-usd_per_gpu_hour") in checked and ("gpus", "tdp_w") in checked


class TestGpus(CatalogCrudTests):
    path = "/api/v1/gpus/"
    lookup = "slug"

    def make(self, base, i):
        return make_gpu(f"gpu-{i}", vendor="AMD" if i % 2 else "NVIDIA", memory_gb=Decimal(40 + i))

    def create_body(self, base):
        return {
            "slug": "b200-test",
            "name": "B200",
            "vendor": "NVIDIA",
            "memory_gb": "192.00",
            "memory_bandwidth_tb_s": "8.000",
            "tdp_w": 1000,
        }

    def update_body(self, base, obj):
        return {"tdp_w": 123}

    def updated(self, obj):
        return obj.tdp_w == 123

    def filter_case(self, base, objects):
        return {"vendor": "amd", "min_memory_gb": "42"}, {"gpu-3"}


class TestProviders(CatalogCrudTests):
    path = "/api/v1/providers/"
    lookup = "slug"

    def make(self, base, i):
        kind = ProviderKind.HYPERSCALER if i % 2 else ProviderKind.RESELLER
        return ProviderFactory(slug=f"prov-{i}", name=f"Provider {i}", kind=kind)

    def create_body(self, base):
        return {"slug": "newco", "name": "NewCo", "kind": "gpu-cloud", "website": "https://x.test"}

    def update_body(self, base, obj):
        return {"name": "Renamed"}

    def updated(self, obj):
        return obj.name == "Renamed"

    def filter_case(self, base, objects):
        return {"kind": "hyperscaler", "q": "provider"}, {"prov-1", "prov-3"}


class TestRegions(CatalogCrudTests):
    path = "/api/v1/regions/"

    def make(self, base, i):
        return RegionFactory(provider=base.provider, code=f"zone-{i}", name=f"Zone {i}")

    def create_body(self, base):
        return {"provider": "cloudco", "code": "eu-west-9", "name": "Somewhere"}

    def update_body(self, base, obj):
        return {"name": "Renamed"}

    def updated(self, obj):
        return obj.name == "Renamed"

    def filter_case(self, base, objects):
        return {"provider": "cloudco", "code": "zone-2"}, {objects[2].pk}

    def test_a_region_reads_its_provider_in_brief(self, base, role_clients):
        body = role_clients["viewer"].get(f"{self.path}{base.region.pk}/").json()
        assert body["provider"] == {"slug": "cloudco", "name": "CloudCo", "kind": "gpu-cloud"}


class TestOffers(CatalogCrudTests):
    path = "/api/v1/offers/"

    def make(self, base, i):
        gpu = base.gpu if i % 2 else base.other_gpu
        return InstanceOfferFactory(
            provider=base.provider, instance_type=f"type-{i}", gpu=gpu, gpu_count=1 + i % 3
        )

    def create_body(self, base):
        return {
            "provider": "cloudco",
            "instance_type": "g.new",
            "gpu": "l4-test",
            "gpu_count": 2,
            "vcpus": "16",
            "memory_gib": "64",
        }

    def update_body(self, base, obj):
        return {"vcpus": "96.00"}

    def updated(self, obj):
        return obj.vcpus == Decimal("96")

    def filter_case(self, base, objects):
        return {"gpu": "h100-test", "gpu_count": 2}, {objects[1].pk}

    def test_an_unknown_gpu_slug_is_refused_and_nothing_written(self, base, role_clients):
        body = {**self.create_body(base), "gpu": "no-such-gpu"}
        response = role_clients["catalog-editor"].post(self.path, body, format="json")
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "gpu", "message": "Object with slug=no-such-gpu does not exist."}
        ]
        assert not InstanceOffer.objects.filter(instance_type="g.new").exists()


class TestPrices(CatalogCrudTests):
    path = "/api/v1/prices/"

    def make(self, base, i):
        offer = InstanceOfferFactory(
            provider=base.provider,
            instance_type=f"p-{i}",
            gpu=base.gpu if i % 2 else base.other_gpu,
            gpu_count=1,
        )
        billing = Billing.SPOT if i % 2 else Billing.ON_DEMAND
        return make_price(offer, base.region, f"{i + 1}.5", billing=billing)

    def create_body(self, base):
        return {
            "offer": base.offer.pk,
            "region": "us-east-1",
            "billing": "on_demand",
            "usd_per_hour": "23.92",
            "source": "quote by mail",
            "currency": "USD",
        }

    def update_body(self, base, obj):
        return {"usd_per_hour": "40"}

    def updated(self, obj):
        return obj.usd_per_hour == Decimal(40) and obj.usd_per_gpu_hour == Decimal(40)

    def filter_case(self, base, objects):
        params = {"billing": "spot", "max_usd_per_gpu_hour": "3", "gpu": "h100-test"}
        return params, {objects[1].pk}

    def test_a_price_is_a_decimal_string_with_its_offer_and_region_in_brief(
        self, base, role_clients
    ):
        price = make_price(base.offer, base.region, "23.92")
        body = role_clients["viewer"].get(f"{self.path}{price.pk}/").json()
        assert body["usd_per_hour"] == "23.9200000000"
        assert body["usd_per_gpu_hour"] == "2.9900000000"
        assert body["offer"] == {
            "id": base.offer.pk,
            "provider": "cloudco",
            "instance_type": "gpu.8x",
            "gpu": "h100-test",
            "gpu_count": 8,
        }
        assert body["region"] == {
            "id": base.region.pk,
            "code": "us-east-1",
            "name": "Virginia",
            "geography": "americas",
        }

    def test_the_direct_rendering_equals_drfs_field_by_field_one(self, base, role_clients):
        from rest_framework import serializers

        from hardware.api.serializers import InstancePriceSerializer

        prices = [
            make_price(base.offer, base.region, "23.92"),
            make_price(
                base.offer,
                base.region,
                "0.0000000001",
                billing=Billing.SPOT,
                zone="us-east-1a",
                first_seen=T0 + timedelta(microseconds=123456),
                last_seen=T0 + timedelta(days=400, seconds=7),
            ),
            make_price(base.offer, base.region, "1234567890.5", billing=Billing.COMMIT_3Y),
        ]
        for price in prices:
            price.refresh_from_db()
            fast = InstancePriceSerializer(price).data
            generic = serializers.ModelSerializer.to_representation(
                InstancePriceSerializer(price), price
            )
            assert fast == generic

    def test_invalid_prices_are_refused_with_the_field_named(self, base, role_clients):
        editor = role_clients["catalog-editor"]
        good = self.create_body(base)
        cases = [
            ({**good, "usd_per_hour": "-1"}, "usd_per_hour"),
            ({**good, "currency": "EUR"}, "currency"),
            ({**good, "region": "mars-1"}, "region"),
            ({**good, "offer": 999999}, "offer"),
            ({**good, "billing": "monthly"}, "billing"),
            ({k: v for k, v in good.items() if k != "source"}, "source"),
            (
                {**good, "first_seen": "2026-02-01T00:00:00Z", "last_seen": "2026-01-01T00:00:00Z"},
                "last_seen",
            ),
        ]
        for body, field in cases:
            response = editor.post(self.path, body, format="json")
            assert response.status_code == 400, (field, response.content)
            assert field in [e["field"] for e in response.json()["errors"]], response.json()
        assert not base.offer.prices.exists()

    def test_current_prices_give_the_latest_row_and_as_of_the_past(self, base, role_clients):
        old = make_price(base.offer, base.region, "16")
        new = make_price(
            base.offer,
            base.region,
            "8",
            first_seen=T0 + timedelta(days=30),
            last_seen=T0 + timedelta(days=31),
        )
        client = role_clients["viewer"]
        now = client.get(f"{self.path}current/").json()
        assert [r["id"] for r in now["results"]] == [new.pk]
        then = client.get(f"{self.path}current/", {"as_of": "2026-01-15"}).json()
        assert [r["id"] for r in then["results"]] == [old.pk]
        before = client.get(f"{self.path}current/", {"as_of": "2025-12-31"}).json()
        assert before["count"] == 0
        bad = client.get(f"{self.path}current/", {"as_of": "yesterday"})
        assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "as_of"


class TestEgressTiers(CatalogCrudTests):
    path = "/api/v1/egress-tiers/"

    def make(self, base, i):
        provider = base.provider
        if i % 2:
            provider = ProviderFactory(slug="other", name="Other", kind=ProviderKind.HYPERSCALER)
        return EgressTierFactory(
            provider=provider,
            up_to_tb=Decimal(10 * (i + 1)),
            usd_per_gb=Decimal("0.09"),
            stated_on=None,
        )

    def create_body(self, base):
        return {"provider": "cloudco", "up_to_tb": None, "usd_per_gb": "0.05", "currency": "USD"}

    def update_body(self, base, obj):
        return {"usd_per_gb": "0.07"}

    def updated(self, obj):
        return obj.usd_per_gb == Decimal("0.07")

    def filter_case(self, base, objects):
        return {"provider": "other"}, {objects[1].pk, objects[3].pk}

    def test_a_list_of_tiers_is_written_whole_or_not_at_all(self, base, role_clients):
        editor = role_clients["catalog-editor"]
        tiers = [
            {"provider": "cloudco", "up_to_tb": "10", "usd_per_gb": "0.09"},
            {"provider": "cloudco", "up_to_tb": "5", "usd_per_gb": "0.08"},
            {"provider": "cloudco", "up_to_tb": None, "usd_per_gb": "0.05"},
        ]
        response = editor.post(self.path, tiers, format="json")
        assert response.status_code == 400
        errors = response.json()["errors"]
        assert [e["field"] for e in errors] == ["[1].up_to_tb"]
        assert "increasing" in errors[0]["message"]
        assert not EgressTier.objects.exists()
        tiers[1]["up_to_tb"] = "150"
        ok = editor.post(self.path, tiers, format="json")
        assert ok.status_code == 201, ok.content
        stored = list(EgressTier.objects.filter(provider=base.provider).values_list("up_to_tb"))
        assert stored == [(Decimal(10),), (Decimal(150),), (None,)]

    def test_a_second_open_ended_tier_is_refused(self, base, role_clients):
        editor = role_clients["catalog-editor"]
        assert editor.post(self.path, self.create_body(base), format="json").status_code == 201
        again = editor.post(self.path, self.create_body(base), format="json")
        assert again.status_code == 400
        assert EgressTier.objects.count() == 1

    @pytest.mark.parametrize(
        ("bounds", "field", "why"),
        [
            (["10", "10", None], "[1].up_to_tb", "10 TB comes after 10 TB"),
            (["10", "5", None], "[1].up_to_tb", "5 TB comes after 10 TB"),
            ([None, "10"], "[0].up_to_tb", "only the last tier may have no limit"),
            (["5", "10"], "[1].up_to_tb", "the last tier must have no limit"),
        ],
        ids=["equal bounds", "decreasing bounds", "open tier not last", "no open tier"],
    )
    def test_a_list_breaking_the_tier_order_is_refused_naming_the_tier(
        self, base, role_clients, bounds, field, why
    ):
        tiers = [{"provider": "cloudco", "up_to_tb": b, "usd_per_gb": "0.05"} for b in bounds]
        response = role_clients["catalog-editor"].post(self.path, tiers, format="json")
        assert response.status_code == 400, response.content
        (error,) = response.json()["errors"]
        assert error["field"] == field and why in error["message"]
        assert not EgressTier.objects.exists()

    def test_single_writes_keep_the_providers_tiers_in_the_formats_order(self, base, role_clients):
        editor = role_clients["catalog-editor"]

        def refused(response, field, why):
            assert response.status_code == 400, response.content
            (error,) = response.json()["errors"]
            assert error["field"] == field and why in error["message"], error

        tier = {"provider": "cloudco", "usd_per_gb": "0.09"}
        # a tier with a limit and none without: the last tier would have a limit
        refused(
            editor.post(self.path, {**tier, "up_to_tb": "10"}, format="json"),
            "up_to_tb",
            "cloudco's tiers would be up to 10 TB: the last tier must have no limit",
        )
        assert not EgressTier.objects.exists()
        open_id = editor.post(self.path, {**tier, "up_to_tb": None}, format="json").json()["id"]
        ten = editor.post(self.path, {**tier, "up_to_tb": "10"}, format="json")
        assert ten.status_code == 201, ten.content
        # equal bounds
        refused(
            editor.post(self.path, {**tier, "up_to_tb": "10"}, format="json"),
            "up_to_tb",
            "already has a tier up to 10",
        )
        # the open tier given a bound: the last tier would have one
        refused(
            editor.patch(f"{self.path}{open_id}/", {"up_to_tb": "20"}, format="json"),
            "up_to_tb",
            "up to 10 TB, up to 20 TB: the last tier must have no limit",
        )
        # moved to another provider, it leaves cloudco without a tier without limit
        ProviderFactory(slug="other", name="Other", kind=ProviderKind.HYPERSCALER)
        refused(
            editor.patch(f"{self.path}{open_id}/", {"provider": "other"}, format="json"),
            "provider",
            "cannot leave cloudco",
        )
        # deleting the open tier while a tier with a limit stays
        refused(editor.delete(f"{self.path}{open_id}/"), "up_to_tb", "Not deleted")
        stored = EgressTier.objects.filter(provider=base.provider).values_list(
            "up_to_tb", flat=True
        )
        assert sorted(stored, key=lambda b: (b is None, b)) == [Decimal(10), None]
        # tiers added as a list to a provider with a tier without limit: the whole keeps the rule
        more = [{**tier, "up_to_tb": "20"}, {**tier, "up_to_tb": "30"}]
        assert editor.post(self.path, more, format="json").status_code == 201
        assert editor.delete(f"{self.path}{ten.json()['id']}/").status_code == 204
        for bound in (Decimal(20), Decimal(30)):
            pk = EgressTier.objects.get(provider=base.provider, up_to_tb=bound).pk
            assert editor.delete(f"{self.path}{pk}/").status_code == 204
        assert editor.delete(f"{self.path}{open_id}/").status_code == 204


def _dedicated(base, i):
    return DedicatedQuoteFactory(
        vendor="AMD host" if i % 2 else "HostCo",
        reference=f"Q-{i}",
        server_description="8x H100",
        gpu=base.gpu,
        gpus_per_server=8,
        usd_per_server_month=Decimal("15000"),
        term_months=12 + i,
    )


class TestDedicatedQuotes(CatalogCrudTests):
    path = "/api/v1/dedicated-quotes/"

    def make(self, base, i):
        return _dedicated(base, i)

    def create_body(self, base):
        return {
            "vendor": "HostCo",
            "reference": "Q-new",
            "server_description": "8x H100 SXM",
            "gpu": "h100-test",
            "gpus_per_server": 8,
            "usd_per_server_month": "16000",
            "term_months": 36,
            "currency": "USD",
        }

    def update_body(self, base, obj):
        return {"status": "accepted"}

    def updated(self, obj):
        return obj.status == "accepted"

    def filter_case(self, base, objects):
        return {"vendor": "hostco", "q": "Q-2"}, {objects[2].pk}

    def test_non_usd_and_non_positive_amounts_are_refused(self, base, role_clients):
        editor = role_clients["catalog-editor"]
        for patch, field in (
            ({"currency": "EUR"}, "currency"),
            ({"usd_per_server_month": "0"}, "usd_per_server_month"),
            ({"setup_usd": "-5"}, "setup_usd"),
            ({"term_months": 0}, "term_months"),
            ({"gpu": "nope"}, "gpu"),
        ):
            response = editor.post(self.path, {**self.create_body(base), **patch}, format="json")
            assert response.status_code == 400, field
            assert [e["field"] for e in response.json()["errors"]] == [field]
        assert not DedicatedQuote.objects.exists()


class TestPurchaseQuotes(CatalogCrudTests):
    path = "/api/v1/purchase-quotes/"

    def make(self, base, i):
        return PurchaseQuoteFactory(
            vendor="ResellCo",
            reference=f"P-{i}",
            server_description="8x H100",
            gpu=base.gpu if i % 2 else base.other_gpu,
            gpus_per_server=8,
            capex_usd_per_server=Decimal("250000"),
            server_kw=Decimal("10.2"),
            lead_time_months=3,
        )

    def create_body(self, base):
        return {
            "vendor": "ResellCo",
            "reference": "P-new",
            "server_description": "8x H100 SXM",
            "gpu": "h100-test",
            "gpus_per_server": 8,
            "capex_usd_per_server": "280000",
            "server_kw": "10.200",
            "lead_time_months": 4,
            "support_fraction_per_year": "0.08",
        }

    def update_body(self, base, obj):
        return {"server_kw": "11.000"}

    def updated(self, obj):
        return obj.server_kw == Decimal(11)

    def filter_case(self, base, objects):
        return {"gpu": "l4-test", "ordering": "-capex_usd_per_server"}, {
            objects[0].pk,
            objects[2].pk,
        }
