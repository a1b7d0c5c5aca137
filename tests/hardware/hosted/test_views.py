"""The token prices and assumptions pages, the navigation to them, and their admin: viewers
read, catalog editors edit."""

from datetime import date

from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from accounts.roles import ANALYST, CATALOG_EDITOR, VIEWER
from hardware.display.figures import stated_words
from hardware.models import Assumption, TokenPrice
from tests.roles import user_with_role

FIREWORKS_70B = "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct"


def signed_in(client, role, **fields):
    user = user_with_role(f"u-{role}", role, **fields)
    client.force_login(user)
    return user


def test_the_token_prices_page_shows_every_price_with_its_source_and_unknown_age(client, catalog):
    signed_in(client, VIEWER)
    response = client.get(reverse("token-prices"))
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count('data-provider="') == 35
    assert FIREWORKS_70B in body
    row = body.split(f"<code>{FIREWORKS_70B}</code>", 1)[1].split("</tr>", 1)[0]
    assert 'data-label="USD per million input tokens">$0.900<' in row  # 3 significant figures
    assert 'data-label="USD per million output tokens">$0.900<' in row
    assert body.count("unknown age (the source states no day)") == 35
    assert "<strong>Flagged</strong>: an alias" in body  # deepseek-chat
    assert f'href="{reverse("token-prices")}" aria-current="page"' in body
    assert reverse("assumptions") in body  # linked from the navigation


def test_the_token_prices_page_filters_with_the_api_s_names(client, catalog):
    signed_in(client, VIEWER)
    body = client.get(
        reverse("token-prices"), {"provider": "deepinfra", "q": "Llama-3.3-70B"}
    ).content
    text = body.decode()
    assert text.count('data-provider="deepinfra"') == 2 and 'data-provider="fireworks"' not in text
    assert "<strong>2</strong> token prices match the filters" in text


def test_the_assumptions_page_shows_each_figure_its_source_stale_marks_and_the_staff_rule(
    client, catalog
):
    signed_in(client, VIEWER)
    with override_settings(ASSUMPTION_STALE_DAYS=730):
        body = client.get(reverse("assumptions")).content.decode()
    assert body.count('<tr id="assumption-') == 11
    assert "184.06" in body and "CBRE North America Data Center Trends H2 2024" in body
    assert "on_prem.colo_usd_per_kw_month" in body
    # stated 2023-12-31: more than 730 days before any day this test runs; its age in words
    row = body.split('id="assumption-pue_industry_average"')[1].split("</tr>")[0]
    age = stated_words(date(2023, 12, 31), timezone.localdate())
    assert age.startswith("stated ") and age.endswith(" years ago")
    assert (
        '<strong>Stale</strong>: <time datetime="2023-12-31" title="2023-12-31">'
        f"{age}</time>" in row
    )
    assert 'data-label="Value">$184.06<' in body and 'data-label="Value">12.0 %<' in body
    assert 'data-label="Value">$200,000<' in body  # engineer_usd_per_year, a sum
    assert 'id="staff-example">$1,778<' in body  # 8 servers × 200 000 / 12 / 75 = 1777.78


def test_a_signed_in_user_without_a_role_is_refused(client, db):
    signed_in(client, None)
    assert client.get(reverse("token-prices")).status_code == 403
    assert client.get(reverse("assumptions")).status_code == 403


def test_catalog_editors_edit_both_tables_in_the_admin_and_viewers_cannot(client, catalog):
    colo = Assumption.objects.get(key="colo_usd_per_kw_month")
    url = reverse("admin:hardware_assumption_change", args=[colo.pk])
    data = {
        "key": colo.key,
        "value": "190.00",
        "unit": colo.unit,
        "applies_to": colo.applies_to,
        "stated_on": "2025-06-30",
        "source": colo.source,
        "confidence": "high",
        "notes": "",
        "first_seen_0": colo.first_seen.strftime("%Y-%m-%d"),
        "first_seen_1": colo.first_seen.strftime("%H:%M:%S.%f"),
        "last_seen_0": colo.last_seen.strftime("%Y-%m-%d"),
        "last_seen_1": colo.last_seen.strftime("%H:%M:%S.%f"),
        "source_name": colo.source_name,
        "source_sha256": colo.source_sha256,
    }
    analyst = signed_in(client, ANALYST, is_staff=True)
    analyst.refresh_from_db()
    assert not analyst.is_staff  # staff by role, never by hand: an analyst is not
    for answer in (client.get(url), client.post(url, data)):
        assert answer.status_code == 302 and answer["Location"].startswith("/admin/login/")
    client.logout()

    editor = signed_in(client, CATALOG_EDITOR, is_staff=True)
    assert (
        client.get(reverse("admin:hardware_tokenprice_changelist"), {"q": "llama"}).status_code
        == 200
    )
    price = TokenPrice.objects.get(model=FIREWORKS_70B)
    assert (
        client.get(reverse("admin:hardware_tokenprice_change", args=[price.pk])).status_code == 200
    )
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    colo.refresh_from_db()
    assert str(colo.value) == "190.0000000000"
    assert colo.history.latest().history_user == editor
    body = client.get(reverse("assumptions")).content.decode()
    assert reverse("admin:hardware_assumption_changelist") in body  # the page says where to edit


def test_the_pages_name_no_address_of_another_site(client, catalog):
    signed_in(client, VIEWER)
    for name in ("token-prices", "assumptions"):
        body = client.get(reverse(name)).content.decode()
        assert "//" not in body.replace('xmlns="http://www.w3.org/2000/svg"', ""), name
    body = client.get(reverse("token-prices")).content.decode()
    assert "(row source: fireworks.ai/pricing)" in body
