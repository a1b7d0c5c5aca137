"""GCP Cloud Billing Catalog SKUs (``skus[]``, ``nextPageToken``) -> plain price rows.

A SKU prices one resource (a GPU, a vCPU, a GiB of RAM) in the regions it lists. What is read:

- ``pricingInfo`` (the last entry, the current one) ``pricingExpression.tieredRates[]``: each
  tier's ``unitPrice`` is ``units + nanos / 1e9`` of ``currencyCode`` per ``displayQuantity``
  usage units, from ``startUsageAmount`` on. Units read: ``h`` (hour) and ``GiBy.h`` (GiB-hour).
- A price in another currency than USD is converted with the SKU's ``currencyConversionRate``
  (currency units per USD): ``usd = price / rate``, rounded to 10 decimal places. A non-USD price
  without a usable rate (missing, 0 or 1) is rejected with that reason: never taken as USD and
  never multiplied by the rate.
- ``usageType`` ``OnDemand`` is on-demand and ``Preemptible`` is spot; commitments are priced per
  resource for a whole family and are left out with a reason.
- ``effectiveTime`` (some feeds write ``EffectiveTime``) is the date the source gave the price.

A GPU machine type's hourly price is the sum the price list states for it: GPUs x the GPU SKU +
vCPUs x the family's core SKU + GiB x the family's RAM SKU, in the same region and billing
(``hardware/data/cloud_instances.csv`` gives the machine types). SKUs no machine type uses are
reported ("not part of a GPU machine type").
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
from hardware.sources.instances import CloudInstance, InstanceTable

PROVIDER = "gcp"
NANOS = Decimal(10**9)
UNITS = {"h": "hour", "GiBy.h": "GiB-hour"}
BILLINGS = {"OnDemand": "on_demand", "Preemptible": "spot"}
PREFIXES = ("Spot Preemptible ", "Preemptible ")


def gcp_page_read(data: bytes | str | Path, *, file_name: str) -> tuple[list[object], str, str]:
    """One page: ``(skus, next_page_token, sha256)``; raise ``SourceError`` if it is no page."""
    document, sha256 = json_document(data, file_name=file_name)
    if not isinstance(document, dict) or not isinstance(document.get("skus"), list):
        raise SourceError(f"{file_name}: not a Cloud Billing Catalog page (no skus list)")
    token = document.get("nextPageToken") or ""
    return document["skus"], str(token), sha256


def resource_key(description: str) -> str:
    """The resource a SKU prices: its description without the spot prefix and the place."""
    for prefix in PREFIXES:
        if description.startswith(prefix):
            description = description[len(prefix) :]
            break
    return description.split(" running in ", 1)[0].strip()


def unit_price(rate: object, field_name: str) -> tuple[Decimal, str]:
    """A ``unitPrice`` (``units`` + ``nanos`` / 1e9) and its currency code."""
    if not isinstance(rate, dict) or not isinstance(rate.get("unitPrice"), dict):
        raise RowRejected("no price", f"{field_name} has no unitPrice")
    money = rate["unitPrice"]
    units = json_decimal(money.get("units") or 0, f"{field_name}.units")
    nanos = json_decimal(money.get("nanos") or 0, f"{field_name}.nanos")
    if units != units.to_integral_value() or nanos != nanos.to_integral_value() or nanos >= NANOS:
        raise RowRejected("bad number", f"{field_name}: units {units}, nanos {nanos}")
    return units + nanos / NANOS, str(money.get("currencyCode") or "")


def _sku_prices(sku: object, line_no: int) -> list[FeedPrice]:
    if not isinstance(sku, dict):
        raise RowRejected("bad SKU", "the SKU is not an object")
    sku_id = str(sku.get("skuId") or "")
    description = str(sku.get("description") or "")
    subject = f"{sku_id} {description!r}"
    stated_category = sku.get("category")
    category = stated_category if isinstance(stated_category, dict) else {}
    usage_type = str(category.get("usageType") or "")
    if usage_type.startswith("Commit"):
        raise RowRejected("commitment", f"{subject}: {usage_type} prices are not read")
    if usage_type not in BILLINGS:
        raise RowRejected("unknown usage type", f"{subject}: usageType {usage_type!r}")
    regions = [str(r) for r in sku.get("serviceRegions") or [] if r]
    if not regions:
        raise RowRejected("no region", f"{subject}: serviceRegions is empty")
    infos = sku.get("pricingInfo")
    if not isinstance(infos, list) or not infos or not isinstance(infos[-1], dict):
        raise RowRejected("no price", f"{subject}: no pricingInfo")
    info = infos[-1]
    expression = info.get("pricingExpression")
    if not isinstance(expression, dict):
        raise RowRejected("no price", f"{subject}: no pricingExpression")
    usage_unit = str(expression.get("usageUnit") or "")
    if usage_unit not in UNITS:
        raise RowRejected("unit", f"{subject}: priced per {usage_unit!r}")
    quantity = json_decimal(expression.get("displayQuantity") or 1, "displayQuantity")
    if quantity == 0:
        raise RowRejected("bad number", f"{subject}: displayQuantity is 0")
    tiers = expression.get("tieredRates")
    if not isinstance(tiers, list) or not tiers:
        raise RowRejected("no price", f"{subject}: no tieredRates")
    read = []
    for n, tier in enumerate(tiers):
        amount, currency = unit_price(tier, f"{subject} tieredRates[{n}]")
        start = json_decimal(tier.get("startUsageAmount") or 0, "startUsageAmount")
        read.append((start, amount, currency))
    currencies = {currency for _, _, currency in read}
    if len(currencies) != 1 or "" in currencies:
        raise RowRejected("currency", f"{subject}: currency codes {sorted(currencies)}")
    currency = currencies.pop()
    rate_value = info.get("currencyConversionRate")
    note = ""
    if currency == "USD":
        if rate_value is not None and json_decimal(rate_value, "currencyConversionRate") != 1:
            raise RowRejected(
                "conflicting conversion rate",
                f"{subject}: priced in USD with currencyConversionRate {rate_value}",
            )
        rate = Decimal(1)
    else:
        if rate_value is None:
            raise RowRejected(
                "no conversion rate", f"{subject}: priced in {currency}, no currencyConversionRate"
            )
        rate = json_decimal(rate_value, "currencyConversionRate")
        if rate in (0, 1):
            raise RowRejected(
                "no conversion rate",
                f"{subject}: priced in {currency} with currencyConversionRate {rate}: "
                f"not a rate from {currency} to USD",
            )
    stated_on = iso_date(info.get("effectiveTime") or info.get("EffectiveTime"))
    starts = [start for start, _, _ in read]
    if starts[0] != 0 or any(a >= b for a, b in zip(starts, starts[1:], strict=False)):
        raise RowRejected("tiers out of order", f"{subject}: startUsageAmount {starts}")
    out = []
    for start, amount, _ in read:
        usd = amount / quantity
        if currency != "USD":
            note = f"{amount} {currency} / {rate} {currency} per USD"
            usd = (usd / rate).quantize(USD_QUANTUM)
        for region in regions:
            out.append(
                FeedPrice(
                    PROVIDER, sku_id, description, region, BILLINGS[usage_type],
                    UNITS[usage_unit], usd, line_no, stated_on, start, note,
                )
            )  # fmt: skip
    return out


def gcp_feed_prices(
    pages: Sequence[bytes | str | Path], *, file_name: str = "gcp skus"
) -> tuple[list[FeedPrice], ParseReport]:
    """Every usable SKU price of the pages, one per region and tier; SKUs left out are reported.

    ``line_no`` counts SKUs across the pages (1-based). Raise ``SourceError`` when a page is not
    a Cloud Billing Catalog page (nothing of the feed is used then).
    """
    return paged_feed_prices(
        pages, file_name=file_name, page_items=gcp_page_read, item_prices=_sku_prices
    )


def _compose(
    instance: CloudInstance, parts: dict[str, list[FeedPrice]], region: str, billing: str
) -> tuple[Decimal, str, list[FeedPrice]]:
    """The machine type's hourly price from its GPU, core and RAM prices; raise ``RowRejected``."""
    wanted = [
        ("GPU", instance.price_key, Decimal(instance.gpu_count), "hour"),
        ("core", f"{instance.family} Instance Core", instance.vcpus, "hour"),
        ("RAM", f"{instance.family} Instance Ram", instance.memory_gib, "GiB-hour"),
    ]
    total, terms, used = Decimal(0), [], []
    for label, key, amount, unit in wanted:
        found = parts.get(key, [])
        if not found:
            raise RowRejected("incomplete machine type", f"no {label} price {key!r}")
        if amount is None:
            raise RowRejected("incomplete machine type", f"the table gives no {label} amount")
        if len(found) > 1:
            stated = ", ".join(f"{p.sku} {p.usd} from {p.tier_start}" for p in found)
            raise RowRejected("tiered or conflicting prices", f"{key!r}: {stated}")
        price = found[0]
        if price.unit != unit:
            raise RowRejected("unit", f"{key!r} is priced per {price.unit}, not per {unit}")
        total += amount * price.usd
        terms.append(f"{amount} x {price.usd} ({label} {price.sku})")
        used.append(price)
    return total, " + ".join(terms), used


def gcp_price_rows(
    prices: list[FeedPrice], *, instances: InstanceTable, report: ParseReport
) -> list[PriceRow]:
    """One row per GPU machine type, region and billing whose parts the feed prices."""
    by_place: dict[tuple[str, str], dict[str, list[FeedPrice]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for price in prices:
        by_place[(price.region, price.billing)][resource_key(price.description)].append(price)
    rows: list[PriceRow] = []
    used_lines: set[int] = set()
    for (region, billing), parts in by_place.items():
        for instance in instances.instances:
            if instance.price_key not in parts:
                continue
            try:
                total, how, used = _compose(instance, parts, region, billing)
            except RowRejected as exc:
                line_no = parts[instance.price_key][0].line_no
                exc.detail = f"{instance.instance_type} in {region} ({billing}): {exc.detail}"
                report.reject(line_no, exc)
                continue
            used_lines.update(p.line_no for p in used)
            rows.append(
                PriceRow(
                    provider=PROVIDER,
                    instance_type=instance.instance_type,
                    gpu_slug=instance.gpu_slug,
                    gpu_count=instance.gpu_count,
                    vcpus=instance.vcpus,
                    memory_gib=instance.memory_gib,
                    host="",
                    region=region,
                    zone="",
                    billing=billing,
                    usd_per_hour=total,
                    line_no=used[0].line_no,
                    note=how,
                    stated_on=max((p.stated_on for p in used if p.stated_on), default=None),
                )
            )
    rejected = {r.line_no for r in report.rejections}
    first_price: dict[int, FeedPrice] = {}
    for price in prices:
        first_price.setdefault(price.line_no, price)
    for line_no in sorted(first_price.keys() - used_lines - rejected):
        first = first_price[line_no]
        report.reject(
            line_no,
            RowRejected(
                "not part of a GPU machine type",
                f"{first.sku} {first.description!r} ({first.usd} USD per {first.unit}) "
                "prices no machine type of cloud_instances.csv",
            ),
        )
    report.rows_accepted = report.rows_read - len({r.line_no for r in report.rejections})
    return rows


def parse_gcp_skus(
    pages: Sequence[bytes | str | Path], *, instances: InstanceTable, file_name: str = "gcp skus"
) -> tuple[list[PriceRow], ParseReport]:
    """Parse the pages of one Cloud Billing Catalog SKU listing into price rows and the report."""
    prices, report = gcp_feed_prices(pages, file_name=file_name)
    return gcp_price_rows(prices, instances=instances, report=report), report
