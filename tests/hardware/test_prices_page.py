"""The Prices page: the current cloud prices filtered, sorted and paged with the API's filter
names, exact money, flagged rows marked, bad filter values explained instead of a crash."""

from datetime import date, timedelta
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.urls import reverse
from django.utils import timezone

from hardware.display.figures import stated_words
from hardware.filtersets import PriceFilterSet
from hardware.models import InstancePrice
from hardware.selectors import current_prices
from hardware.templatetags.catalog_format import plain_decimal
from tests.roles import user_with_role

from .conftest import lambda_regions_of

pytestmark = pytest.mark.django_db

URL = "/prices/"


class PriceTable(HTMLParser):
    """The rows of ``#price-table`` as dicts keyed by column header, plus each row's classes;
    and the links on the page."""

    def __init__(self, html: str):
        super().__init__()
        self.headers: list[str] = []
        self.rows: list[dict[str, str]] = []
        self.row_classes: list[str] = []
        self.links: list[str] = []
        self.header_links: list[str] = []
        self._in_table = self._in_head = False
        self._cells: list[str] | None = None
        self._text: list[str] | None = None
        self._hidden_depth = 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        if tag == "table" and attrs.get("id") == "price-table":
            self._in_table = True
        if not self._in_table:
            return
        if "visually-hidden" in (attrs.get("class") or "") or self._hidden_depth:
            self._hidden_depth += 1
        if tag == "a" and self._in_head:
            self.header_links.append(attrs["href"])
        if tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._cells = []
            if not self._in_head:
                self.row_classes.append(attrs.get("class") or "")
        elif tag in {"td", "th"}:
            self._text = []
            self._exact = attrs.get("data-exact")
        elif tag == "span" and self._text is not None:
            self._text.append(" ")

    def handle_endtag(self, tag):
        if not self._in_table:
            return
        if self._hidden_depth:
            self._hidden_depth -= 1
        if tag in {"td", "th"} and self._text is not None:
            # a money cell: the exact figure the source stated (its text is rounded to read)
            exact = getattr(self, "_exact", None)
            self._cells.append(
                exact if exact is not None else " ".join("".join(self._text).split())
            )
            self._text = None
        elif tag == "tr" and self._cells is not None:
            if self._in_head:
                self.headers = [cell.rstrip(" ▲▼↕") for cell in self._cells]
            elif len(self._cells) == len(self.headers):
                self.rows.append(dict(zip(self.headers, self._cells, strict=True)))
            self._cells = None
        elif tag == "thead":
            self._in_head = False
        elif tag == "table":
            self._in_table = False

    def handle_data(self, data):
        if self._text is not None and not self._hidden_depth:
            self._text.append(data)


@pytest.fixture
def user_client(client):
    user = user_with_role("finance", "viewer", password="a long pass phrase")
    client.force_login(user)
    return client


def get(client, **params):
    response = client.get(URL, params)
    assert response.status_code == 200
    return response, PriceTable(response.content.decode())


def gpu_hour(row: dict[str, str]) -> Decimal:
    return Decimal(row["USD per GPU-hour"])


def test_the_page_is_for_signed_in_users_only(client, catalog):
    response = client.get(URL)
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={URL}"


def test_the_url_is_named_prices_and_the_nav_links_to_it(user_client, catalog):
    assert reverse("prices") == URL
    home = user_client.get(reverse("home")).content.decode()
    assert f'<a href="{URL}">Prices</a>' in home


def test_the_page_shows_every_current_price_with_its_count(user_client, catalog):
    response, table = get(user_client)
    total = current_prices().count()
    assert total > 50 and InstancePrice.objects.count() >= total
    assert f"<strong>{total}</strong> current prices" in response.content.decode()
    assert len(table.rows) == 50
    assert table.headers == [
        "Provider",
        "Instance type",
        "GPU",
        "GPUs",
        "Region",
        "Billing",
        "USD per instance-hour",
        "USD per GPU-hour",
        "Source",
        "Confidence",
    ]


def test_lambda_8x_h100_sxm5_on_demand_is_23_92_an_hour_and_2_99_a_gpu_hour(user_client, catalog):
    _, table = get(user_client, q="gpu_8x_h100_sxm5", billing="on_demand")
    assert len(table.rows) == len(lambda_regions_of("gpu_8x_h100_sxm5"))  # one per region
    for row in table.rows:
        assert row["Provider"] == "Lambda"
        assert row["Instance type"] == "gpu_8x_h100_sxm5"
        assert row["GPU"].endswith("h100-sxm") and row["GPUs"] == "8"
        assert row["Billing"] == "on-demand"
        assert row["USD per instance-hour"] == "23.92"
        assert row["USD per GPU-hour"] == "2.99"
        stated = stated_words(date(2025, 10, 1), timezone.now().date())  # "stated 14 months ago"
        assert row["Source"].startswith(
            f"skypilot-v8/lambda.csv, {stated} Stale: older than 30 days loaded"
        ), row["Source"]


def test_money_keeps_every_digit_the_source_gave(user_client, catalog):
    _, table = get(user_client, ordering="-usd_per_gpu_hour")
    top = current_prices().order_by("-usd_per_gpu_hour").first()
    assert Decimal(table.rows[0]["USD per GPU-hour"]) == top.usd_per_gpu_hour
    for row in table.rows:
        for column in ("USD per instance-hour", "USD per GPU-hour"):
            text = row[column]
            assert "E" not in text and not (("." in text) and text.endswith("0")), text


def test_filter_by_gpu_and_billing_shows_only_spot_h100_sxm_rows(user_client, catalog):
    response, table = get(user_client, gpu="h100-sxm", billing="spot")
    expected = current_prices().filter(offer__gpu__slug="h100-sxm", billing="spot").count()
    assert 0 < expected == len(table.rows)
    assert response.context["paginator"].count == expected
    for row in table.rows:
        assert row["GPU"].endswith("h100-sxm")
        assert row["Billing"].startswith("spot")
    assert f"<strong>{expected}</strong> current prices match the filters" in (
        response.content.decode()
    )


def test_filter_by_provider_region_and_gpu_count(user_client, catalog):
    _, table = get(user_client, provider="aws", region="us-east-1", gpu_count="8")
    expected = current_prices().filter(
        offer__provider__slug="aws", region__code="us-east-1", offer__gpu_count=8
    )
    assert 0 < expected.count() == len(table.rows)
    for row in table.rows:
        assert row["Provider"] == "Amazon Web Services"
        assert row["Region"].startswith("us-east-1") and row["GPUs"] == "8"


def test_min_and_max_usd_per_gpu_hour_are_inclusive(user_client, catalog):
    _, table = get(user_client, min_usd_per_gpu_hour="2.99", max_usd_per_gpu_hour="2.99")
    assert table.rows and all(gpu_hour(row) == Decimal("2.99") for row in table.rows)
    assert any(row["Instance type"] == "gpu_8x_h100_sxm5" for row in table.rows)

    response, table = get(user_client, min_usd_per_gpu_hour="1.5", max_usd_per_gpu_hour="3")
    expected = current_prices().filter(usd_per_gpu_hour__gte=Decimal("1.5"))
    expected = expected.filter(usd_per_gpu_hour__lte=3)
    assert response.context["paginator"].count == expected.count() > 0
    assert all(Decimal("1.5") <= gpu_hour(row) <= 3 for row in table.rows)


@pytest.mark.parametrize("descending", [False, True])
def test_ordering_by_usd_per_gpu_hour_orders_the_rows(user_client, catalog, descending):
    ordering = "-usd_per_gpu_hour" if descending else "usd_per_gpu_hour"
    _, table = get(user_client, ordering=ordering, billing="on_demand")
    values = [gpu_hour(row) for row in table.rows]
    assert len(values) == 50 and len(set(values)) > 5
    assert values == sorted(values, reverse=descending)
    prices = current_prices().filter(billing="on_demand").values_list("usd_per_gpu_hour", flat=True)
    assert values[0] == (max(prices) if descending else min(prices))


def test_ordering_by_gpu_count_and_last_seen_is_accepted(user_client, catalog):
    _, table = get(user_client, ordering="-gpu_count")
    counts = [int(row["GPUs"]) for row in table.rows]
    assert counts == sorted(counts, reverse=True)
    for ordering in ("usd_per_hour", "first_seen", "-last_seen"):
        response, _ = get(user_client, ordering=ordering)
        assert not response.context["form"].errors


def test_the_sort_headers_keep_the_filters_and_flip_the_direction(user_client, catalog):
    response, table = get(user_client, billing="spot", ordering="usd_per_gpu_hour", page="2")
    body = response.content.decode()
    assert 'aria-sort="ascending"' in body
    assert "?billing=spot&amp;ordering=-usd_per_gpu_hour" in body
    assert "?billing=spot&amp;ordering=usd_per_hour" in body
    assert len(table.header_links) == 3  # GPUs, per instance-hour, per GPU-hour
    assert all("page=" not in link for link in table.header_links)
    # the filter form keeps the sort order when it is submitted again
    assert '<input type="hidden" name="ordering" value="usd_per_gpu_hour">' in body


def test_q_searches_instance_type_provider_gpu_and_region(user_client, catalog):
    _, table = get(user_client, q="lambda h100")
    assert table.rows
    for row in table.rows:
        assert row["Provider"] == "Lambda" and "h100" in row["GPU"].lower()

    response, table = get(user_client, q="p5.48xlarge")
    assert table.rows and all(row["Instance type"] == "p5.48xlarge" for row in table.rows)

    _, table = get(user_client, q="Oklahoma")
    assert table.rows and all("Oklahoma" in row["Region"] for row in table.rows)

    response, table = get(user_client, q="no-such-thing-anywhere")
    assert not table.rows and "No current price matches these filters." in (
        response.content.decode()
    )


def test_observed_dates_are_inclusive_days(user_client, catalog):
    today = timezone.now().date()
    total = current_prices().count()
    response, _ = get(user_client, observed_after=today, observed_before=today)
    assert response.context["paginator"].count == total
    response, _ = get(user_client, observed_after=today + timedelta(days=1))
    assert response.context["paginator"].count == 0
    response, _ = get(user_client, observed_before=today - timedelta(days=1))
    assert response.context["paginator"].count == 0


def test_flagged_spot_prices_are_marked_with_their_note(user_client, catalog):
    flagged = current_prices().exclude(flag="")
    assert flagged.exists()
    suspect = flagged.first()
    response, table = get(user_client, q=suspect.offer.instance_type, billing="spot")
    marked = [
        row
        for row, classes in zip(table.rows, table.row_classes, strict=True)
        if "suspect" in classes
    ]
    assert marked
    assert any(f"Flagged: {suspect.flag}" in row["Billing"] for row in marked)
    unmarked = [
        row
        for row, classes in zip(table.rows, table.row_classes, strict=True)
        if "suspect" not in classes
    ]
    assert all("Flagged" not in row["Billing"] for row in unmarked)


@pytest.mark.parametrize(
    ("params", "messages"),
    [
        ({"min_usd_per_gpu_hour": "abc", "billing": "nope"}, ["Enter a number.", "nope"]),
        ({"gpu": "no-such-gpu"}, ["Select a valid choice."]),
        ({"provider": "nobody"}, ["Select a valid choice."]),
        ({"ordering": "colour"}, ["Select a valid choice.", "usd_per_gpu_hour"]),
        ({"gpu_count": "0"}, ["greater than or equal to 1"]),
        ({"gpu_count": "two"}, ["Enter a whole number."]),
        ({"observed_after": "yesterday"}, ["Enter a valid date."]),
        ({"max_usd_per_gpu_hour": "1e400"}, ["no more than 20 digits"]),
        ({"max_usd_per_gpu_hour": "NaN"}, ["Enter a number."]),
        (
            {"min_usd_per_gpu_hour": "5", "max_usd_per_gpu_hour": "1"},
            ["minimum USD per GPU-hour is above the maximum"],
        ),
        (
            {"observed_after": "2026-02-01", "observed_before": "2026-01-01"},
            ["is later than"],
        ),
    ],
)
def test_a_bad_filter_value_is_explained_on_the_page(user_client, catalog, params, messages):
    response, table = get(user_client, **params)
    body = response.content.decode()
    assert 'role="alert"' in body and "Some filters could not be used" in body
    for message in messages:
        assert message in body
    assert table.headers  # the page still renders its table


def test_a_bad_value_leaves_out_that_filter_only(user_client, catalog):
    response, table = get(user_client, min_usd_per_gpu_hour="abc", billing="spot")
    assert response.context["form"].errors
    assert table.rows and all(row["Billing"].startswith("spot") for row in table.rows)


def test_extreme_but_valid_values_do_not_crash(user_client, catalog):
    for params in (
        {"observed_before": "9999-12-31", "observed_after": "0001-01-01"},
        {"gpu_count": "99999999999999999999"},
        {"page": "999"},
        {"page": "x"},
        {"q": "%_' OR 1=1 --"},
    ):
        response = user_client.get(URL, params)
        assert response.status_code == 200, params


def test_pagination_keeps_the_filters_and_the_order(user_client, catalog):
    params = {"billing": "on_demand", "ordering": "-usd_per_gpu_hour"}
    response, first = get(user_client, **params)
    assert response.context["paginator"].num_pages > 1
    next_links = [link for link in first.links if "page=2" in link]
    assert next_links
    link = next_links[0]
    assert "billing=on_demand" in link and "ordering=-usd_per_gpu_hour" in link
    response = user_client.get(URL + link)
    second = PriceTable(response.content.decode())
    assert response.context["page_obj"].number == 2
    assert len(second.rows) == 50
    assert all(row["Billing"] == "on-demand" for row in second.rows)
    assert gpu_hour(first.rows[-1]) >= gpu_hour(second.rows[0])
    seen_first = {(r["Instance type"], r["Region"]) for r in first.rows}
    assert not seen_first & {(r["Instance type"], r["Region"]) for r in second.rows}


def test_empty_form_fields_are_dropped_from_the_links(user_client, catalog):
    response, table = get(user_client, gpu="", provider="", billing="spot", q="")
    assert response.context["paginator"].num_pages > 1
    assert "?billing=spot&page=2" in table.links
    assert all("gpu=&" not in link and "q=&" not in link for link in table.links)


def test_the_query_count_is_bounded(user_client, catalog, django_assert_max_num_queries):
    params = {
        "gpu": "h100-sxm",
        "provider": "lambda",
        "billing": "on_demand",
        "min_usd_per_gpu_hour": "1",
        "ordering": "-usd_per_gpu_hour",
    }
    with django_assert_max_num_queries(10):
        response = user_client.get(URL, params)
    assert response.status_code == 200
    with django_assert_max_num_queries(10):
        response = user_client.get(URL, {"page": "3"})
    assert len(PriceTable(response.content.decode()).rows) == 50


def test_the_filterset_uses_the_api_names_and_filters_any_price_queryset(catalog):
    assert set(PriceFilterSet.base_filters) == {
        "gpu",
        "provider",
        "region",
        "geography",
        "billing",
        "gpu_count",
        "min_usd_per_gpu_hour",
        "max_usd_per_gpu_hour",
        "observed_after",
        "observed_before",
        "q",
        "confidence",
        "ordering",
    }
    history = PriceFilterSet(
        {"gpu": "h100-sxm", "ordering": "usd_per_gpu_hour"}, queryset=InstancePrice.objects.all()
    )
    assert history.is_valid()
    rows = list(history.qs)
    assert rows and all(row.offer.gpu.slug == "h100-sxm" for row in rows)
    values = [row.usd_per_gpu_hour for row in rows]
    assert values == sorted(values)
    bad = PriceFilterSet({"billing": "nope"}, queryset=InstancePrice.objects.all())
    assert not bad.is_valid() and "billing" in bad.errors


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        (Decimal("23.9200000000"), "23.92"),
        (Decimal("100.0000000000"), "100"),
        (Decimal("80.00"), "80"),
        (Decimal("0.5052125000"), "0.5052125"),
        (Decimal("0E-10"), "0"),
        (None, ""),
    ],
)
def test_decimals_show_every_digit_without_trailing_zeros_or_exponents(stored, shown):
    assert plain_decimal(stored) == shown
