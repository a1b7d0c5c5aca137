"""Quotes pages: expired quotes marked; create and edit only for catalog editors and admins."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from hardware.models import DedicatedQuote, GpuModel, PurchaseQuote
from tests.roles import user_with_role

pytestmark = pytest.mark.django_db


def editor():
    return user_with_role("editor", "catalog-editor", password="a long pass phrase")


def dedicated_form(**changes) -> dict:
    form = {
        "vendor": "Hoster",
        "reference": "Q-1",
        "server_description": "8x H100 SXM",
        "gpu": GpuModel.objects.get(slug="h100-sxm").pk,
        "gpus_per_server": 8,
        "usd_per_server_month": "14250.50",
        "setup_usd": "0",
        "term_months": 12,
        "included_egress_tb": "50",
        "overage_usd_per_tb": "2",
        "valid_until": "",
        "status": "received",
        "notes": "",
    }
    form.update(changes)
    return form


def test_expired_quotes_are_marked_by_status_or_by_date(client, catalog):
    today = timezone.localdate()
    past = DedicatedQuote.objects.get(reference="DEMO-D-H100-8")
    past.valid_until = today - timedelta(days=1)
    past.save()
    marked = PurchaseQuote.objects.get(reference="DEMO-P-H100-8")
    marked.status = "expired"
    marked.save()
    client.force_login(user_with_role("viewer", "viewer"))
    body = client.get("/quotes/").content.decode()
    assert f'<tr data-quote="{past.pk}" class="expired" id="dedicated-quote-{past.pk}">' in body
    assert f'<tr data-quote="{marked.pk}" class="expired" id="on_prem-quote-{marked.pk}">' in body
    fresh = DedicatedQuote.objects.exclude(pk=past.pk).first()
    assert f'<tr data-quote="{fresh.pk}" id="dedicated-quote-{fresh.pk}">' in body
    # a viewer gets no create or edit links
    assert "/quotes/dedicated/new/" not in body and "/edit/" not in body


@pytest.mark.parametrize("role", [None, "viewer", "analyst"])
def test_below_catalog_editor_creating_or_editing_a_quote_is_forbidden(client, catalog, role):
    client.force_login(user_with_role("reader", role))
    quote = DedicatedQuote.objects.get(reference="DEMO-D-H100-8")
    assert client.get("/quotes/dedicated/new/").status_code == 403
    assert client.post("/quotes/dedicated/new/", dedicated_form()).status_code == 403
    assert client.get(f"/quotes/dedicated/{quote.pk}/edit/").status_code == 403
    edit = dedicated_form(reference=quote.reference, status="expired")
    assert client.post(f"/quotes/dedicated/{quote.pk}/edit/", edit).status_code == 403
    assert not DedicatedQuote.objects.filter(reference="Q-1").exists()
    quote.refresh_from_db()
    assert quote.status != "expired"


def test_an_editor_creates_a_quote_with_exact_money_then_edits_it(client, catalog):
    client.force_login(editor())
    body = client.get("/quotes/").content.decode()
    assert "/quotes/dedicated/new/" in body and "/quotes/purchase/new/" in body
    response = client.post("/quotes/dedicated/new/", dedicated_form())
    assert response.status_code == 302 and response["Location"] == "/quotes/"
    quote = DedicatedQuote.objects.get(reference="Q-1")
    assert quote.usd_per_server_month == Decimal("14250.50")
    response = client.post(
        f"/quotes/dedicated/{quote.pk}/edit/",
        dedicated_form(status="expired"),
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and response["HX-Redirect"] == "/quotes/"
    quote.refresh_from_db()
    assert quote.status == "expired"


def test_a_bad_value_is_reported_by_field_and_nothing_is_saved(client, catalog):
    client.force_login(editor())
    response = client.post(
        "/quotes/dedicated/new/", dedicated_form(usd_per_server_month="-5", term_months="")
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "The quote was not saved" in body
    assert "USD per server-month</a>: must be more than 0" in body
    assert "Term [months]</a>: This field is required." in body
    assert not DedicatedQuote.objects.filter(reference="Q-1").exists()


def test_htmx_gets_the_form_alone_and_its_errors_as_200(client, catalog):
    client.force_login(editor())
    response = client.get("/quotes/purchase/new/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<section class="panel"') and "<html" not in body
    response = client.post("/quotes/purchase/new/", {"vendor": "x"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "The quote was not saved" in response.content.decode()


def test_an_unknown_kind_or_quote_is_404(client, catalog):
    client.force_login(editor())
    assert client.get("/quotes/leased/new/").status_code == 404
    assert client.get("/quotes/dedicated/999999/edit/").status_code == 404


def test_the_edit_form_shows_amounts_as_written(client, catalog):
    client.force_login(editor())
    quote = DedicatedQuote.objects.get(reference="DEMO-D-H100-8")
    body = client.get(f"/quotes/dedicated/{quote.pk}/edit/").content.decode()
    assert 'name="usd_per_server_month" value="14600"' in body
    assert 'name="setup_usd" value="0"' in body and 'name="overage_usd_per_tb" value="2"' in body
    assert "E-10" not in body and "GPUs per server" in body


def test_quotes_read_as_money_with_their_validity_in_words(client, db):
    from tests.hardware.factories import DedicatedQuoteFactory, PurchaseQuoteFactory

    today = timezone.localdate()
    dedicated = DedicatedQuoteFactory(
        usd_per_server_month=Decimal("14250.50"),
        setup_usd=Decimal("1200"),
        overage_usd_per_tb=Decimal("2"),
        valid_until=today + timedelta(days=45),
    )
    purchase = PurchaseQuoteFactory(
        capex_usd_per_server=Decimal("265000.40"),
        support_fraction_per_year=Decimal("0.08"),
        valid_until=today - timedelta(days=3),
    )
    client.force_login(user_with_role("viewer", "viewer"))
    body = client.get("/quotes/").content.decode()
    row = body.split(f'id="dedicated-quote-{dedicated.pk}">', 1)[1].split("</tr>", 1)[0]
    assert 'data-label="USD per server-month">$14,251<' in row  # whole dollars, half up
    assert 'data-label="Set-up [USD]">$1,200<' in row
    assert 'data-label="Overage [USD/TB]">$2.00<' in row
    later = (today + timedelta(days=45)).isoformat()
    assert f'ends <time datetime="{later}" title="{later}">in 45 days</time>' in row
    row = body.split(f'id="on_prem-quote-{purchase.pk}">', 1)[1].split("</tr>", 1)[0]
    assert 'data-label="Capex [USD per server]">$265,000<' in row
    assert 'data-label="Support [share of capex a year]">8.0 %<' in row
    assert ">3 days ago</time>" in row and "ended <time" in row
