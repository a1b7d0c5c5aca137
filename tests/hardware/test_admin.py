"""The catalog admin: every list loads with search and filters, and hand edits are recorded
with who made them."""

from decimal import Decimal

import pytest
from django.urls import reverse

from hardware.models import DedicatedQuote, EgressTier, InstancePrice, PurchaseQuote
from hardware.selectors import current_prices

from .factories import EgressTierFactory

pytestmark = pytest.mark.django_db

CHANGELISTS = [
    ("gpumodel", {"q": "H100", "vendor": "NVIDIA"}, "h100-sxm"),
    ("provider", {"q": "lambda", "kind__exact": "gpu-cloud"}, "Lambda"),
    ("region", {"q": "Oklahoma"}, "Oklahoma, US, NA"),
    ("instanceoffer", {"q": "p5.48xlarge", "gpu_count": "8"}, "p5.48xlarge"),
    ("instanceprice", {"q": "gpu_8x_h100_sxm5", "billing__exact": "on_demand"}, "23.92"),
    ("instanceprice", {"flagged": "yes", "billing__exact": "spot"}, "7.5955"),
    ("egresstier", {"q": "oracle"}, "0.0085"),
    ("dedicatedquote", {"q": "H100", "status__exact": "received", "is_demo__exact": "1"}, "DEMO-D-H100-8"),
    ("purchasequote", {"q": "H200", "is_demo__exact": "1"}, "DEMO-P-H200-8"),
]  # fmt: skip


@pytest.mark.parametrize(("model", "params", "expected"), CHANGELISTS)
def test_superuser_searches_and_filters_every_catalog_list(
    admin_client, catalog, model, params, expected
):
    url = reverse(f"admin:hardware_{model}_changelist")
    assert admin_client.get(url).status_code == 200
    response = admin_client.get(url, params)
    assert response.status_code == 200  # an unknown filter would redirect with ?e=1
    body = response.content.decode()
    assert expected in body


def test_a_search_that_matches_nothing_shows_no_price(admin_client, catalog):
    url = reverse("admin:hardware_instanceprice_changelist")
    response = admin_client.get(url, {"q": "no-such-instance"})
    assert response.status_code == 200 and "0 instance prices" in response.content.decode()


def test_every_change_form_and_history_page_loads(admin_client, catalog):
    for model in (InstancePrice, EgressTier, DedicatedQuote, PurchaseQuote):
        obj = model.objects.first()
        name = model._meta.model_name
        for view in ("change", "history"):
            url = reverse(f"admin:hardware_{name}_{view}", args=[obj.pk])
            assert admin_client.get(url).status_code == 200, url


def split(moment):
    return {"0": moment.strftime("%Y-%m-%d"), "1": moment.strftime("%H:%M:%S.%f")}


def test_a_hand_edit_of_a_price_is_recorded_with_the_user_and_readable_in_the_admin(
    admin_client, admin_user, catalog
):
    row = current_prices().get(
        offer__instance_type="gpu_8x_h100_sxm5", region__code="us-east-1", billing="on_demand"
    )
    data = {
        "offer": row.offer_id,
        "region": row.region_id,
        "billing": row.billing,
        "usd_per_hour": "22.00",
        "zone": "",
        "source_name": "hand edit: negotiated price",
        "source_sha256": "",
        "stated_on": "2026-11-02",
        "flag": "",
        "note": "negotiated",
    }
    for field in ("first_seen", "last_seen"):
        for part, value in split(getattr(row, field)).items():
            data[f"{field}_{part}"] = value
    url = reverse("admin:hardware_instanceprice_change", args=[row.pk])
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    row.refresh_from_db()
    assert row.usd_per_hour == Decimal("22.00") and row.usd_per_gpu_hour == Decimal("2.75")
    edit = row.history.latest()
    assert edit.history_type == "~" and edit.history_user == admin_user
    assert edit.prev_record.usd_per_hour == Decimal("23.92")
    page = admin_client.get(reverse("admin:hardware_instanceprice_history", args=[row.pk]))
    assert admin_user.get_username() in page.content.decode()


def test_a_hand_edit_of_an_egress_tier_is_recorded_with_the_user(admin_client, admin_user, catalog):
    tier = EgressTier.objects.get(provider__slug="oracle", up_to_tb=None)
    data = {
        "provider": tier.provider_id,
        "up_to_tb": "",
        "usd_per_gb": "0.0090",
        "scope": tier.scope,
        "source": tier.source,
        "stated_on": "2026-11-02",
    }
    url = reverse("admin:hardware_egresstier_change", args=[tier.pk])
    assert admin_client.post(url, data).status_code == 302
    edit = EgressTier.objects.get(pk=tier.pk).history.latest()
    assert edit.history_user == admin_user and edit.usd_per_gb == Decimal("0.0090")
    changed = set(edit.diff_against(edit.prev_record).changed_fields)
    assert changed == {"usd_per_gb", "stated_on"}


def test_a_hand_edit_of_a_quote_status_is_recorded_with_the_user(admin_client, admin_user, catalog):
    quote = DedicatedQuote.objects.get(reference="DEMO-D-H100-8")
    fields = [
        "vendor", "reference", "server_description", "gpus_per_server", "usd_per_server_month",
        "setup_usd", "term_months", "included_egress_tb", "overage_usd_per_tb", "notes",
    ]  # fmt: skip
    data = {f: getattr(quote, f) for f in fields}
    data.update(gpu=quote.gpu_id, valid_until="2027-03-31", status="accepted", is_demo="on")
    url = reverse("admin:hardware_dedicatedquote_change", args=[quote.pk])
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    edit = DedicatedQuote.objects.get(pk=quote.pk).history.latest()
    assert (edit.status, edit.history_user) == ("accepted", admin_user)
    assert edit.prev_record.status == "received"


def test_a_provider_website_typed_without_its_scheme_is_saved_as_https(admin_client, catalog):
    from hardware.models import Provider

    provider = Provider.objects.get(slug="lambda")
    url = reverse("admin:hardware_provider_change", args=[provider.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {name: form.initial.get(name) or "" for name in form.fields}
    data["website"] = "lambda.ai"
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    provider.refresh_from_db()
    assert provider.website == "https://lambda.ai"


def test_the_admin_keeps_a_providers_egress_tiers_in_the_formats_order(admin_client):
    open_tier = EgressTierFactory(up_to_tb=None, usd_per_gb=Decimal("0.05"))
    provider = open_tier.provider
    EgressTierFactory(provider=provider, up_to_tb=Decimal(10), usd_per_gb=Decimal("0.09"))
    data = {"provider": provider.pk, "up_to_tb": "20", "usd_per_gb": "0.05", "scope": "", "source": "", "stated_on": ""}  # fmt: skip
    url = reverse("admin:hardware_egresstier_change", args=[open_tier.pk])
    page = admin_client.post(url, data)
    assert page.status_code == 200  # the form again, with the error at up_to_tb
    assert page.context["adminform"].form.errors["up_to_tb"] == [
        f"{provider.slug}'s tiers would be up to 10 TB, up to 20 TB: the last tier must have no "
        "limit (empty up_to_tb)."
    ]
    open_tier.refresh_from_db()
    assert open_tier.up_to_tb is None
    add = reverse("admin:hardware_egresstier_add")
    equal = admin_client.post(add, {**data, "up_to_tb": "10"})
    assert "up_to_tb" in equal.context["adminform"].form.errors
    assert admin_client.post(add, {**data, "up_to_tb": "20"}).status_code == 302
    assert EgressTier.objects.filter(provider=provider).count() == 3
