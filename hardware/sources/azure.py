"""Azure Retail Prices API pages (``Items[]``, ``NextPageLink``) -> plain price rows.

Each item prices one meter of one SKU in one region. What is read, and what is left out with a
reason:

- Virtual machines only (``serviceName``), in USD, per ``1 Hour``; Linux only (a product name
  ending in "Windows" is Windows); list prices (``retailPrice``).
- ``Consumption`` is on-demand, or spot when the meter name ends in "Spot"; the older "Low
  Priority" meters are neither and are left out; ``DevTestConsumption`` is a Dev/Test
  subscription's price, left out.
- ``savingsPlan`` entries of an on-demand item are hourly 1- and 3-year prices (``commit_1y``,
  ``commit_3y``); a ``Reservation`` item states the whole term's price, which becomes hourly over
  8,760 hours a year. Where both give a term, the lower price is kept and the note names both.
- ``effectiveStartDate`` is the date the source gave the price (``stated_on``).

The feed does not say which GPUs a VM size has: ``hardware/data/cloud_instances.csv`` does, and a
size missing there is rejected ("not a known GPU instance"), never guessed.
"""

from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from hardware.sources.common import (
    USD_QUANTUM,
    FeedPrice,
    ParseReport,
    PriceRow,
    RowRejected,
    SourceError,
    iso_date,
    json_decimal,
    json_document,
    paged_feed_prices,
)
from hardware.sources.instances import InstanceTable

PROVIDER = "azure"
HOURS_PER_YEAR = Decimal(8760)
TERMS = {"1 Year": ("commit_1y", 1), "3 Years": ("commit_3y", 3)}
COMMIT_BILLINGS = {"commit_1y", "commit_3y"}


def azure_page_read(data: bytes | str | Path, *, file_name: str) -> tuple[list[dict], str, str]:
    """One page: ``(items, next_page_link, sha256)``; raise ``SourceError`` if it is no page."""
    document, sha256 = json_document(data, file_name=file_name)
    if not isinstance(document, dict) or not isinstance(document.get("Items"), list):
        raise SourceError(f"{file_name}: not an Azure Retail Prices page (no Items list)")
    link = document.get("NextPageLink") or ""
    if not isinstance(link, str):
        raise SourceError(f"{file_name}: NextPageLink is not a link")
    return document["Items"], link, sha256


def _item_prices(item: object, line_no: int) -> list[FeedPrice]:
    if not isinstance(item, dict):
        raise RowRejected("bad item", "the item is not an object")
    sku = str(item.get("armSkuName") or "")
    region = str(item.get("armRegionName") or "")
    meter = str(item.get("meterName") or "")
    product = str(item.get("productName") or "")
    kind = str(item.get("type") or "")
    if item.get("serviceName") != "Virtual Machines":
        raise RowRejected("not a virtual machine", f"{product or meter}: not a VM price")
    subject = f"{sku or meter} in {region or '?'} ({product}, {kind} {item.get('retailPrice')})"
    if not sku or not region:
        raise RowRejected("no instance or region", f"{subject}: armSkuName or armRegionName empty")
    if item.get("currencyCode") != "USD":
        raise RowRejected(
            "not USD", f"{subject}: currency {item.get('currencyCode')!r}, no rate to USD given"
        )
    if kind == "DevTestConsumption":
        raise RowRejected("dev/test price", f"{subject}: a Dev/Test subscription's price")
    if product.rstrip().endswith("Windows"):
        raise RowRejected("not Linux", f"{subject}: Windows licence included")
    if "Low Priority" in meter:
        raise RowRejected("low priority", f"{subject}: Low Priority is not a spot price")
    if item.get("unitOfMeasure") != "1 Hour":
        raise RowRejected("unit", f"{subject}: priced per {item.get('unitOfMeasure')!r}")
    if json_decimal(item.get("tierMinimumUnits") or 0, "tierMinimumUnits") != 0:
        raise RowRejected(
            "tiered price", f"{subject}: applies from {item.get('tierMinimumUnits')} hours on"
        )
    usd = json_decimal(item.get("retailPrice"), "retailPrice")
    if usd == 0:
        raise RowRejected("zero price", f"{subject}: retailPrice is 0")
    stated_on = iso_date(item.get("effectiveStartDate"))

    def price(billing: str, amount: Decimal, note: str = "") -> FeedPrice:
        return FeedPrice(
            PROVIDER, sku, meter, region, billing, "hour", amount, line_no, stated_on, note=note
        )

    if kind == "Reservation":
        term = str(item.get("reservationTerm") or "")
        if term not in TERMS:
            raise RowRejected("unknown term", f"{subject}: reservationTerm {term!r}")
        billing, years = TERMS[term]
        hourly = (usd / (HOURS_PER_YEAR * years)).quantize(USD_QUANTUM)
        return [price(billing, hourly, f"{term} reservation: {usd} USD for the term")]
    if kind != "Consumption":
        raise RowRejected("unknown price type", f"{subject}: type {kind!r}")
    if meter.endswith(" Spot"):
        return [price("spot", usd)]
    out = [price("on_demand", usd)]
    plans = item.get("savingsPlan") or []
    if not isinstance(plans, list):
        raise RowRejected("bad savings plan", f"{subject}: savingsPlan is not a list")
    for plan in plans:
        term = str(plan.get("term") or "") if isinstance(plan, dict) else ""
        if term not in TERMS:
            raise RowRejected("unknown term", f"{subject}: savings plan term {term!r}")
        amount = json_decimal(plan.get("retailPrice"), f"savingsPlan {term} retailPrice")
        out.append(price(TERMS[term][0], amount, f"{term} savings plan"))
    return out


def azure_feed_prices(
    pages: Sequence[bytes | str | Path], *, file_name: str = "azure retail prices"
) -> tuple[list[FeedPrice], ParseReport]:
    """Every usable price of the pages, in the feed's terms; items left out are in the report.

    ``line_no`` counts items across the pages (1-based). Raise ``SourceError`` when a page is not
    an Azure Retail Prices page (nothing of the feed is used then).
    """
    return paged_feed_prices(
        pages, file_name=file_name, page_items=azure_page_read, item_prices=_item_prices
    )


def azure_price_rows(
    prices: list[FeedPrice], *, instances: InstanceTable, report: ParseReport
) -> list[PriceRow]:
    """One row per GPU instance type, region and billing; the rest rejected into ``report``."""
    groups: dict[tuple[str, str, str], list[FeedPrice]] = defaultdict(list)
    for price in prices:
        groups[(price.sku, price.region, price.billing)].append(price)
    rows: list[PriceRow] = []
    for (sku, region, billing), group in groups.items():
        instance = instances.get(sku)
        if instance is None:
            for price in group:
                report.reject(
                    price.line_no,
                    RowRejected(
                        "not a known GPU instance",
                        f"{sku} in {region} ({billing} {price.usd} USD/h) is not in "
                        "cloud_instances.csv",
                        subject=sku,
                    ),
                )
            continue
        chosen = min(group, key=lambda p: (p.usd, p.line_no))
        note = chosen.note
        if len({p.usd for p in group}) > 1:
            if billing not in COMMIT_BILLINGS:
                for price in group:
                    report.reject(
                        price.line_no,
                        RowRejected(
                            "conflicting prices",
                            f"{sku} in {region}: {billing} "
                            f"{', '.join(sorted({str(p.usd) for p in group}))}",
                        ),
                    )
                continue
            others = "; ".join(f"{p.note} {p.usd}" for p in group if p is not chosen)
            note = f"{chosen.note} {chosen.usd}, the lowest (also {others})"
        rows.append(
            PriceRow(
                provider=PROVIDER,
                instance_type=sku,
                gpu_slug=instance.gpu_slug,
                gpu_count=instance.gpu_count,
                vcpus=instance.vcpus,
                memory_gib=instance.memory_gib,
                host="",
                region=region,
                zone="",
                billing=billing,
                usd_per_hour=chosen.usd,
                line_no=chosen.line_no,
                note=note,
                stated_on=chosen.stated_on,
            )
        )
    report.rows_accepted = report.rows_read - len({r.line_no for r in report.rejections})
    return rows


def parse_azure_retail_prices(
    pages: Sequence[bytes | str | Path],
    *,
    instances: InstanceTable,
    file_name: str = "azure retail prices",
) -> tuple[list[PriceRow], ParseReport]:
    """Parse the pages of one Azure Retail Prices query into price rows and the report."""
    prices, report = azure_feed_prices(pages, file_name=file_name)
    return azure_price_rows(prices, instances=instances, report=report), report
