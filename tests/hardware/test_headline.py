"""The flagged headline: a GPU's cheapest page and the dashboard headline the cheapest price that
is not flagged, set a cheaper flagged one beside it with why, and say when there is none; every
price says when its source stated it (not when the catalog loaded it), a stale one with its
age."""

import re
from datetime import timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.roles import VIEWER
from hardware.display.figures import usd_rate
from hardware.display.price_flags import flag_words
from hardware.models import GpuModel, InstancePrice
from hardware.selectors import gpu_headline, price_headlines
from hardware.sources.skypilot import AUCTION_NOTE
from tests.factories import UserFactory
from tests.hardware.factories import GpuModelFactory, InstanceOfferFactory, InstancePriceFactory

pytestmark = pytest.mark.django_db

TENTH = "spot is a tenth of on-demand 16.936: suspect"


def price(gpu, usd_per_gpu_hour: str, *, flag: str = "", billing: str = "on_demand", **fields):
    """A current price of ``gpu`` on a one-GPU offer of its own (USD per hour = per GPU-hour)."""
    offer = InstanceOfferFactory(gpu=gpu, gpu_count=1)
    return InstancePriceFactory(
        offer=offer, billing=billing, usd_per_hour=Decimal(usd_per_gpu_hour), flag=flag, **fields
    )


def text_of(html: str) -> str:
    """The words a reader sees: tags dropped, spaces collapsed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html))).strip()


def headline_html(client, gpu) -> str:
    body = client.get(reverse("gpu-cheapest-page", args=[gpu.slug])).content.decode()
    return body.split('id="cheapest-summary" role="status">', 1)[1].split("</div>", 1)[0]


def dashboard_row(client, gpu) -> str:
    body = client.get("/").content.decode()
    return body.split(f'<tr data-gpu="{gpu.slug}"', 1)[1].split("</tr>", 1)[0]


@pytest.fixture
def reader(client):
    client.force_login(UserFactory(roles=[VIEWER]))
    return client


def test_a_cheaper_flagged_price_is_set_beside_the_unflagged_headline_with_why(reader):
    gpu = GpuModelFactory(name="Test H100")
    suspect = price(gpu, "0.95", flag=TENTH, billing="spot")
    price(gpu, "1.00", flag=AUCTION_NOTE)
    cheapest = price(gpu, "2.49")
    price(gpu, "3.10")
    price(gpu, "2.60", flag=TENTH)  # flagged, but dearer than the headline: not beside it

    line = gpu_headline(gpu=gpu)
    assert (line.price, line.flagged, line.flagged_below) == (cheapest, suspect, 2)
    assert line.flag_reason == flag_words(TENTH)

    words = text_of(headline_html(reader, gpu))
    provider = cheapest.offer.provider.name
    assert words.startswith(
        f"Cheapest unflagged: $2.49 per GPU-hour, on-demand at {provider} "
        f"({cheapest.offer.instance_type} in {cheapest.region.code}), stated today by test feed."
    )
    assert (
        f"Cheaper, but flagged: $0.950 per GPU-hour, spot at {suspect.offer.provider.name} "
        f"({suspect.offer.instance_type} in {suspect.region.code}), stated today. Flagged: "
        "suspect, as this spot price is exactly a tenth of the same instance's on-demand price "
        "($16.94 an hour)"
    ) in words
    # its confidence in brief, the flag being said in full just before (on lines of their own)
    assert words.endswith(
        "1 more flagged price is cheaper than the headline too. Low confidenceflagged, egress unknown"
    )

    # the dashboard's row of the GPU (on-demand only): the auction placeholder beside $2.49
    row = dashboard_row(reader, gpu)
    assert 'data-label="USD per GPU-hour">$2.49<' in row
    beside = row.split('class="flagged-beside" data-label="Cheaper, but flagged">', 1)[1]
    auction = InstancePrice.objects.get(offer__gpu=gpu, flag=AUCTION_NOTE)
    assert text_of(beside.split("</td>", 1)[0]) == (
        f"$1.00 at {auction.offer.provider.name} {auction.offer.instance_type}, stated today"
        f"Flagged: {AUCTION_NOTE}Low confidenceflagged, egress unknown"
    )  # the words stand on lines of their own on the page


def test_with_no_flagged_price_below_it_the_headline_stands_alone(reader):
    gpu = GpuModelFactory()
    cheapest = price(gpu, "2.49")
    price(gpu, "2.60", flag=TENTH)

    line = gpu_headline(gpu=gpu)
    assert (line.price, line.flagged, line.flagged_below, line.flag_reason) == (
        cheapest,
        None,
        0,
        "",
    )
    html = headline_html(reader, gpu)
    assert "Cheapest unflagged:" in html and 'id="cheaper-flagged"' not in html
    assert "flagged" not in text_of(html).replace("Cheapest unflagged", "")
    row = dashboard_row(reader, gpu)
    assert 'class="flagged-beside none" data-label="Cheaper, but flagged">—</td>' in row


def test_with_only_flagged_prices_the_page_says_there_is_no_unflagged_price(reader):
    gpu = GpuModelFactory(name="Test B300")
    auction = price(gpu, "1.00", flag=AUCTION_NOTE)
    price(gpu, "1.50", flag=TENTH)

    line = gpu_headline(gpu=gpu)
    assert (line.price, line.flagged, line.flagged_below) == (None, auction, 2)
    words = text_of(headline_html(reader, gpu))
    assert words.startswith(
        "No unflagged price: every current price of Test B300 is flagged, so none is headlined."
    )
    assert f"Cheapest, flagged: $1.00 per GPU-hour, on-demand at {auction.offer.provider.name}" in (
        words
    )
    assert "Cheapest unflagged" not in words
    row = dashboard_row(reader, gpu)
    assert "No unflagged price: every current on-demand price of this GPU is flagged." in (
        text_of(row)
    )


def test_the_dashboard_gives_one_line_per_gpu_and_billing_and_its_flagged_neighbour():
    h100, a100 = GpuModelFactory(name="H1"), GpuModelFactory(name="A1")
    price(h100, "1.00", flag=AUCTION_NOTE)
    h100_cheapest = price(h100, "2.00")
    price(h100, "0.50", billing="spot")  # another billing: not on the on-demand line
    a100_only = price(a100, "0.80", flag=TENTH)

    lines = {line.gpu.slug: line for line in price_headlines(billing="on_demand")}
    assert lines[h100.slug].price == h100_cheapest and lines[h100.slug].flagged_below == 1
    assert lines[a100.slug].price is None and lines[a100.slug].flagged == a100_only
    spot = {line.gpu.slug: line for line in price_headlines(billing="spot")}
    assert list(spot) == [h100.slug] and spot[h100.slug].flagged is None


def test_prices_say_when_their_source_stated_them_and_a_stale_one_its_age(reader, settings):
    settings.PRICE_STALE_DAYS = 30
    today = timezone.localdate()
    gpu = GpuModelFactory()
    # loaded an hour ago, stated 45 days ago: the page gives the source's day, marked stale
    stale = price(gpu, "2.00", stated_on=today - timedelta(days=45))
    fresh_gpu = GpuModelFactory()
    fresh = price(fresh_gpu, "3.00", stated_on=today - timedelta(days=3))

    row = dashboard_row(reader, gpu)
    day = stale.stated_on.isoformat()
    assert f'<time datetime="{day}" title="{day}">stated 45 days ago</time>' in row
    assert "Stale: stated 45 days ago by test feed" in text_of(row)
    assert stale.first_seen.date().isoformat() not in row  # never the load's day
    assert "more than" not in text_of(row)
    fresh_row = dashboard_row(reader, fresh_gpu)
    assert "stated 3 days ago by test feed" in text_of(fresh_row)
    assert "Stale" not in fresh_row
    assert fresh.stated_on.isoformat() in fresh_row

    words = text_of(headline_html(reader, gpu))
    assert "Stale: stated 45 days ago by test feed." in words
    table = reader.get(reverse("gpu-cheapest-page", args=[gpu.slug])).content.decode()
    table = table.split('id="cheapest-table"', 1)[1].split("</table>", 1)[0]
    assert "Stale: stated 45 days ago by test feed" in text_of(table)


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        (
            TENTH,
            "suspect, as this spot price is exactly a tenth of the same instance's on-demand "
            "price ($16.94 an hour): a slip in the source would make it so",
        ),
        (
            "spot is a tenth of the on-demand price of p5en.48xlarge (87.34848 for 8 GPUs) in "
            "ap-southeast-3, and this instance has no on-demand price: suspect",
            "suspect, as this spot price is exactly a tenth of the on-demand price of "
            "p5en.48xlarge ($87.35 an hour for 8 GPUs) in ap-southeast-3, and this instance has "
            "no on-demand price of its own",
        ),
        (AUCTION_NOTE, AUCTION_NOTE),
        ("a reason of another kind", "a reason of another kind"),
        ("", ""),
    ],
)
def test_a_flag_is_said_in_words_with_its_money_as_money(flag, words):
    assert flag_words(flag) == words


def test_every_flag_of_the_shipped_catalog_reads_as_words(catalog):
    flags = set(InstancePrice.objects.exclude(flag="").values_list("flag", flat=True))
    assert flags
    for flag in flags:
        words = flag_words(flag)
        assert words == AUCTION_NOTE or (words.startswith("suspect, as ") and "$" in words), flag
        assert not re.search(r"\d\.\d{3,}", words), words  # no raw figure of 3+ decimals


MONEY_PER_HOUR = re.compile(r"^\$(?:[1-9]\d{0,2}(?:,\d{3})*\.\d\d|0\.0*[1-9]\d\d)$")
"""A price per hour as a person reads it: 2 decimals from $1, 3 significant figures below."""


def test_the_catalog_pages_write_every_price_per_hour_as_money(reader, catalog):
    body = reader.get("/").content.decode()
    for line in price_headlines(billing="on_demand"):
        row = body.split(f'<tr data-gpu="{line.gpu.slug}"', 1)[1].split("</tr>", 1)[0]
        if line.price is not None:
            shown = row.split('data-label="USD per GPU-hour">', 1)[1].split("<", 1)[0]
            assert MONEY_PER_HOUR.match(shown), (line.gpu.slug, shown)
            assert shown == usd_rate(line.price.usd_per_gpu_hour)
    for slug in ("b200", "h100-sxm", "h200"):
        page = reader.get(reverse("gpu-cheapest-page", args=[slug])).content.decode()
        shown = re.findall(r'data-label="USD per GPU-hour">([^<]*)<', page)
        assert shown and all(MONEY_PER_HOUR.match(s) for s in shown), (slug, shown)
        figure = re.search(r'<strong class="figure">([^<]*)</strong>', page)[1]
        assert figure == usd_rate(
            gpu_headline(gpu=GpuModel.objects.get(slug=slug)).price.usd_per_gpu_hour
        )
