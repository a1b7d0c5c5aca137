"""Oracle Cloud price list (``items[]``) -> plain price rows and egress tiers.

- GPU shapes: items of ``serviceCategory`` "Compute - GPU" priced "GPU Per Hour", by part number.
  The list does not name shapes: ``hardware/data/cloud_instances.csv`` says which shapes (and how
  many GPUs each) a part prices; a shape's hourly price is its GPUs x the GPU-hour price. Oracle
  prices every region alike: rows carry the region ``global``. A part that prices no shape of the
  table is rejected ("unknown GPU part"), never guessed.
- Outbound data transfer: the "Outbound Data Transfer - Originating in ..." items give tiers by
  the volume sent a month, ``rangeMin`` .. ``rangeMax`` in GB; they become egress tiers in the
  contract's form (``up_to_tb`` cumulative, 1 TB = 1,000 GB; the open last tier has no limit).
  One origin is read (by default North America, Europe and the UK, where the catalog's Oracle
  tiers apply); the other origins are reported with their prices.
- Only ``PAY_AS_YOU_GO`` prices in USD are read. Everything else in the list (databases,
  storage, other services) is reported as "not a GPU or egress price".
"""

from decimal import Decimal
from pathlib import Path

from hardware.sources.common import (
    ParseReport,
    PriceRow,
    RowRejected,
    SourceError,
    json_decimal,
    json_document,
)
from hardware.sources.egress import EgressTierRow, tier_order_problem
from hardware.sources.instances import InstanceTable

PROVIDER = "oracle"
REGION = "global"
GB_PER_TB = Decimal(1000)
# The list writes "no upper bound" as a very large rangeMax.
NO_LIMIT_GB = Decimal(10**14)
EGRESS_PREFIX = "Outbound Data Transfer - Originating in "
DEFAULT_EGRESS_ORIGIN = "North America, Europe, and UK"


def _usd_prices(item: dict, subject: str) -> list[dict]:
    for localization in item.get("currencyCodeLocalizations") or []:
        if isinstance(localization, dict) and localization.get("currencyCode") == "USD":
            prices = [
                p
                for p in localization.get("prices") or []
                if isinstance(p, dict) and p.get("model") == "PAY_AS_YOU_GO"
            ]
            if prices:
                return prices
            raise RowRejected("no pay-as-you-go price", f"{subject}: no PAY_AS_YOU_GO price")
    raise RowRejected("not USD", f"{subject}: no USD price")


def _gpu_rows(item: dict, line_no: int, subject: str, instances: InstanceTable) -> list[PriceRow]:
    if item.get("metricName") != "GPU Per Hour":
        raise RowRejected("unit", f"{subject}: priced per {item.get('metricName')!r}")
    prices = _usd_prices(item, subject)
    if len(prices) != 1:
        raise RowRejected("tiered GPU price", f"{subject}: {len(prices)} price tiers")
    usd_per_gpu_hour = json_decimal(prices[0].get("value"), "value")
    shapes = instances.with_price_key(str(item.get("partNumber") or ""))
    if not shapes:
        raise RowRejected(
            "unknown GPU part",
            f"{subject} ({usd_per_gpu_hour} USD per GPU-hour) prices no shape of "
            "cloud_instances.csv",
            subject=str(item.get("displayName") or ""),
        )
    if usd_per_gpu_hour == 0:
        raise RowRejected("zero price", f"{subject}: the GPU-hour price is 0")
    return [
        PriceRow(
            provider=PROVIDER,
            instance_type=shape.instance_type,
            gpu_slug=shape.gpu_slug,
            gpu_count=shape.gpu_count,
            vcpus=shape.vcpus,
            memory_gib=shape.memory_gib,
            host="",
            region=REGION,
            zone="",
            billing="on_demand",
            usd_per_hour=usd_per_gpu_hour * shape.gpu_count,
            line_no=line_no,
            note=f"{shape.gpu_count} GPUs x {usd_per_gpu_hour} USD per GPU-hour "
            f"(part {item.get('partNumber')}, the same in every region)",
        )
        for shape in shapes
    ]


def _egress_tiers(item: dict, line_no: int, subject: str, source: str) -> list[EgressTierRow]:
    if item.get("metricName") != "Gigabyte Outbound Data Transfer Per Month":
        raise RowRejected("unit", f"{subject}: priced per {item.get('metricName')!r}")
    origin = str(item.get("displayName"))[len(EGRESS_PREFIX) :]
    tiers = []
    previous = Decimal(0)
    for n, price in enumerate(_usd_prices(item, subject)):
        usd_per_gb = json_decimal(price.get("value"), f"prices[{n}].value")
        low = json_decimal(price.get("rangeMin") or 0, f"prices[{n}].rangeMin")
        high = price.get("rangeMax")
        high_gb = None if high is None else json_decimal(high, f"prices[{n}].rangeMax")
        if low != previous or (high_gb is not None and high_gb <= low):
            raise RowRejected(
                "tiers out of order",
                f"{subject}: tier {n} runs {low} .. {high} GB after {previous} GB",
            )
        up_to_tb = None if high_gb is None or high_gb >= NO_LIMIT_GB else high_gb / GB_PER_TB
        tiers.append(EgressTierRow(PROVIDER, up_to_tb, usd_per_gb, origin, source, line_no))
        if up_to_tb is None:
            break
        previous = high_gb if high_gb is not None else previous
    found = tier_order_problem([t.up_to_tb for t in tiers]) if tiers else (0, "no tiers")
    if found:
        raise RowRejected("tiers out of order", f"{subject}: {found[1]}")
    return tiers


def parse_oracle_prices(
    data: bytes | str | Path,
    *,
    instances: InstanceTable,
    file_name: str = "oracle prices",
    egress_origin: str = DEFAULT_EGRESS_ORIGIN,
) -> tuple[list[PriceRow], list[EgressTierRow], ParseReport]:
    """Parse an Oracle price list into GPU shape prices, egress tiers of one origin and a report.

    Raise ``SourceError`` when the document is not a price list (nothing of it is used then).
    """
    document, sha256 = json_document(data, file_name=file_name)
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise SourceError(f"{file_name}: not an Oracle price list (no items list)")
    report = ParseReport(file_name=file_name, sha256=sha256)
    rows: list[PriceRow] = []
    tiers: list[EgressTierRow] = []
    source = f"Oracle Cloud price list ({file_name})"
    for line_no, item in enumerate(document["items"], start=1):
        report.rows_read += 1
        try:
            if not isinstance(item, dict):
                raise RowRejected("bad item", "the item is not an object")
            name = str(item.get("displayName") or "")
            subject = f"{item.get('partNumber')} {name!r}"
            if item.get("serviceCategory") == "Compute - GPU":
                rows.extend(_gpu_rows(item, line_no, subject, instances))
            elif name.startswith(EGRESS_PREFIX):
                found = _egress_tiers(item, line_no, subject, source)
                if found[0].scope != egress_origin:
                    stated = ", ".join(
                        f"{t.usd_per_gb} up to {t.up_to_tb or 'no limit'} TB" for t in found
                    )
                    raise RowRejected("other egress origin", f"{subject}: {stated}")
                if tiers:
                    raise RowRejected("duplicate egress origin", f"{subject}: read already")
                tiers.extend(found)
            else:
                raise RowRejected("not a GPU or egress price", subject)
        except RowRejected as exc:
            report.reject(line_no, exc)
    report.rows_accepted = report.rows_read - len({r.line_no for r in report.rejections})
    return rows, tiers, report
