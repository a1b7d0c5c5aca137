"""SkyPilot catalog files (``catalogs/v8/<cloud>/vms.csv``) of any cloud -> plain price rows.

Columns are found by name, in any order; columns this parser does not know are ignored. Only
``InstanceType``, ``AcceleratorName``, ``AcceleratorCount``, ``Region`` and one of ``Price`` /
``SpotPrice`` are required; ``vCPUs``, ``MemoryGiB``, ``GpuInfo`` and ``AvailabilityZone`` are
read when present. One row per instance type and region (AWS: and availability zone), prices in USD per
instance-hour. The traps of these files (hardware/data/README.md) are met here:

- ``GpuInfo`` is a Python literal, not JSON; memory in it is per GPU in MiB (AWS, Lambda), the
  total across the GPUs in MiB (Vast), or per GPU in GB under a MiB name (Shadeform).
- The GPU slug comes from ``AcceleratorName`` (never ``GpuInfo``'s name: AWS p4de) through the
  alias table with the memory per GPU and the instance name.
- Empty ``Price`` means no on-demand price; empty or zero ``SpotPrice`` means no spot price.
- AWS repeats the region's on-demand price in every zone: it is kept once per region; spot is the
  lowest zone's price, with that zone and the spread (lowest, median, highest) across the region's
  zones. A spot price that is exactly a tenth of on-demand is kept and flagged as suspect; so is
  one that is a tenth of the per-GPU on-demand price of a sibling instance (same GPU, same
  region) where the instance itself has no on-demand price (AWS p5e beside p5en).
- The alias table may file a GPU whose variant the name does not settle as unconfirmed: the rows
  carry ``gpu_confirmed`` false and the alias row's evidence.
- Shadeform is a marketplace: the instance name's prefix names the host; so is Primeintellect
  (``lambdalabs__…``, ``datacrunch__…``: the text before ``__``).
- Some files write ``null``, ``true`` or ``false`` inside the ``GpuInfo`` literal (Hyperstack)
  or write it as JSON (Primeintellect): these words read as Python's ``None``, ``True``, ``False``.
- Mithril's prices are auction placeholders (1.0 per GPU, some 0.01–0.08), not list prices:
  every price of ``AUCTION_CLOUDS`` is flagged (``is_suspect``) with ``AUCTION_NOTE``.
"""

import ast
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from pathlib import Path

from hardware.sources.aliases import AliasTable, GpuResolution
from hardware.sources.common import (
    ParseReport,
    PriceRow,
    RowRejected,
    SourceError,
    count_or_none,
    decimal_or_none,
    file_sha256,
    read_csv,
    text,
)

MIB_PER_GIB = Decimal(1024)
BYTES_PER_GIB = Decimal(2**30)
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region")
PRICE_COLUMNS = ("Price", "SpotPrice")  # at least one of them
# How a cloud writes GpuInfo's SizeInMiB when it is not MiB per GPU (the default).
MEMORY_GB_PER_GPU = {"shadeform"}
MEMORY_MIB_TOTAL = {"vast", "primeintellect"}
# Marketplaces whose instance names start with the host: the separator before the rest.
HOST_PREFIX = {"shadeform": "_", "primeintellect": "__"}
AUCTION_CLOUDS = {"mithril"}
NOT_A_LIST_PRICE = "not a list price"
"""How the flag of a price that is no price anyone pays begins: such a price never headlines."""
AUCTION_NOTE = (
    f"{NOT_A_LIST_PRICE}: an auction placeholder (Mithril's catalog writes the same nominal "
    "value as on-demand and spot, 1.0 per GPU, some 0.01-0.08, for an auction market)"
)
JSON_WORDS = {"null": None, "true": True, "false": False}
CLOUD_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
TENTH = Decimal("0.1")
# A spot price within this of on-demand / 10 counts as "a tenth" (the files round to 4 places).
TENTH_TOLERANCE = Decimal("0.0001")
SPREAD_QUANTUM = Decimal("1E-10")


@dataclass(frozen=True)
class _Line:
    """A typed line of the file, before AWS zones are folded."""

    line_no: int
    instance_type: str
    gpu_slug: str
    gpu_count: int
    vcpus: Decimal | None
    memory_gib: Decimal | None
    host: str
    region: str
    zone: str
    on_demand: Decimal | None
    spot: Decimal | None
    gpu: GpuResolution | None = None


def gpu_memory_gib_per_gpu(cloud: str, gpu_info: dict, gpu_count: int) -> Decimal | None:
    """GPU memory per GPU [GiB] from a ``GpuInfo`` literal, read the way each cloud writes it."""
    gpus = gpu_info.get("Gpus") or [{}]
    size = (gpus[0].get("MemoryInfo") or {}).get("SizeInMiB")
    if size is None:
        return None
    size = Decimal(str(size))
    if cloud in MEMORY_GB_PER_GPU:  # GB per GPU, in a field named MiB
        return size * Decimal(10**9) / BYTES_PER_GIB
    if cloud in MEMORY_MIB_TOTAL:  # MiB across all the instance's GPUs
        return size / gpu_count / MIB_PER_GIB
    return size / MIB_PER_GIB  # aws, lambda and the others: MiB per GPU


def _json_words_as_python(tree: ast.AST) -> ast.AST:
    """``null``, ``true`` and ``false`` (JSON words in a Python literal) as Python constants."""
    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [
                    ast.Constant(JSON_WORDS[v.id])
                    if isinstance(v, ast.Name) and v.id in JSON_WORDS
                    else v
                    for v in value
                ]
            elif isinstance(value, ast.Name) and value.id in JSON_WORDS:
                setattr(node, name, ast.Constant(JSON_WORDS[value.id]))
    return tree


def _parse_gpu_info(cell: str) -> dict:
    try:
        value = ast.literal_eval(_json_words_as_python(ast.parse(cell, mode="eval")))
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        raise RowRejected("bad GpuInfo", f"GpuInfo {cell[:60]!r} is not a Python literal") from None
    if not isinstance(value, dict):
        raise RowRejected("bad GpuInfo", "GpuInfo is not a mapping")
    return value


def _money(value: Decimal | None) -> Decimal | None:
    """``value`` with more than 10 decimal places rounded to 10 (written as stated otherwise)."""
    if value is None or int(value.as_tuple().exponent) >= -10:
        return value
    return value.quantize(SPREAD_QUANTUM)


def _parse_line(cloud: str, line_no: int, raw: dict, aliases: AliasTable) -> _Line:
    instance_type = text(raw, "InstanceType")
    if not instance_type:
        raise RowRejected("no instance type", "InstanceType is empty")
    name = text(raw, "AcceleratorName")
    gpu_count = count_or_none(raw, "AcceleratorCount")
    if not name or not gpu_count:
        raise RowRejected("no GPU", f"{instance_type} has no GPU")
    region = text(raw, "Region")
    if not region:
        raise RowRejected("no region", f"{instance_type} has no region")
    # Float noise (Cudo's 0.36979999999999996) is read at the catalog's precision (1E-10 USD),
    # so a price compares equal to the stored one on the next load.
    on_demand = _money(decimal_or_none(raw, "Price"))
    spot = _money(decimal_or_none(raw, "SpotPrice"))
    if on_demand == 0:  # no source in this format gives GPU time away: an empty price written as 0
        raise RowRejected("zero on-demand price", f"{instance_type} in {region}: Price is 0")
    if spot == 0:  # Vast writes 0.00 for "no spot price"
        spot = None
    gpu_info_cell = text(raw, "GpuInfo")
    memory = None
    if gpu_info_cell:
        try:
            memory = gpu_memory_gib_per_gpu(cloud, _parse_gpu_info(gpu_info_cell), gpu_count)
        except (TypeError, AttributeError, ArithmeticError, ValueError) as exc:
            if isinstance(exc, RowRejected):
                raise
            raise RowRejected("bad GpuInfo", f"GpuInfo has no usable memory: {exc}") from None
    gpu = aliases.resolve_variant(name, memory, instance_type)
    if on_demand is None and spot is None:
        raise RowRejected(
            "no price", f"{instance_type} in {region} has neither Price nor SpotPrice"
        )
    separator = HOST_PREFIX.get(cloud)
    host = instance_type.split(separator, 1)[0] if separator and separator in instance_type else ""
    return _Line(
        line_no=line_no,
        instance_type=instance_type,
        gpu_slug=gpu.slug,
        gpu_count=gpu_count,
        vcpus=decimal_or_none(raw, "vCPUs"),
        memory_gib=decimal_or_none(raw, "MemoryGiB"),
        host=host,
        region=region,
        zone=text(raw, "AvailabilityZone"),
        on_demand=on_demand,
        spot=spot,
        gpu=gpu,
    )


def parse_skypilot_vms(
    path: Path | bytes,
    *,
    cloud: str,
    aliases: AliasTable,
    file_name: str | None = None,
    stated_on: date | None = None,
) -> tuple[list[PriceRow], ParseReport]:
    """Parse one SkyPilot ``vms.csv`` of ``cloud`` (any cloud: its slug names the provider), a
    file or a fetched feed's bytes; raise ``SourceError`` on a broken table.

    Returns the price rows (on-demand once per instance type and region; spot as the lowest
    zone's), each with ``stated_on`` when given, and the report of rows read, accepted and
    rejected with file, line and reason.
    """
    name = file_name or (path.name if isinstance(path, Path) else f"{cloud} vms.csv")
    if not CLOUD_SLUG.match(cloud):
        raise SourceError(
            f"{name}: {cloud!r} is not a provider slug (lower-case letters, digits, -)"
        )
    report = ParseReport(file_name=name, sha256=file_sha256(path))
    columns, records = read_csv(path, REQUIRED_COLUMNS, name=name)
    if not any(c in columns for c in PRICE_COLUMNS):
        raise SourceError(f"{report.file_name}: missing column(s) Price or SpotPrice")
    groups: dict[tuple[str, str], list[_Line]] = defaultdict(list)
    for line_no, raw in records:
        report.rows_read += 1
        try:
            line = _parse_line(cloud, line_no, raw, aliases)
        except RowRejected as exc:
            report.reject(line_no, exc)
            continue
        groups[(line.instance_type, line.region)].append(line)

    rows: list[PriceRow] = []
    offers: dict[str, _Line] = {}
    for (instance_type, region), lines in groups.items():
        first = offers.setdefault(instance_type, lines[0])
        kept = []
        for line in lines:
            if (line.gpu_slug, line.gpu_count) != (first.gpu_slug, first.gpu_count):
                report.reject(
                    line.line_no,
                    RowRejected(
                        "conflicting offer",
                        f"{instance_type} is {line.gpu_count}x {line.gpu_slug} here but "
                        f"{first.gpu_count}x {first.gpu_slug} on line {first.line_no}",
                    ),
                )
            else:
                kept.append(line)
        if not kept:
            continue
        rows.extend(_fold(cloud, first, region, kept, report, stated_on))
    rows = _flag_against_siblings(rows)
    if cloud in AUCTION_CLOUDS:
        rows = [replace(row, is_suspect=True, note=AUCTION_NOTE) for row in rows]
    report.rows_accepted = report.rows_read - len({r.line_no for r in report.rejections})
    rejected = {r.line_no for r in report.rejections}
    report.unconfirmed = sorted(
        {
            (line.instance_type, line.gpu_slug, line.gpu.evidence)
            for lines in groups.values()
            for line in lines
            if line.gpu is not None and not line.gpu.confirmed and line.line_no not in rejected
        }
    )
    report.rows_unconfirmed = sum(
        1
        for lines in groups.values()
        for line in lines
        if line.gpu is not None and not line.gpu.confirmed and line.line_no not in rejected
    )
    return rows, report


def _flag_against_siblings(rows: list[PriceRow]) -> list[PriceRow]:
    """Flag a spot price with no on-demand price of its own that is a tenth of the per-GPU
    on-demand price of another instance with the same GPU in the same region."""
    on_demand: dict[tuple[str, str], list[PriceRow]] = defaultdict(list)
    has_on_demand = set()
    for row in rows:
        if row.billing == "on_demand":
            on_demand[(row.gpu_slug, row.region)].append(row)
            has_on_demand.add((row.instance_type, row.region))
    out = []
    for row in rows:
        if (
            row.billing == "spot"
            and not row.is_suspect
            and (row.instance_type, row.region) not in has_on_demand
        ):
            for sibling in on_demand.get((row.gpu_slug, row.region), []):
                per_gpu = sibling.usd_per_hour / sibling.gpu_count
                if abs(row.usd_per_hour - per_gpu * row.gpu_count * TENTH) <= TENTH_TOLERANCE:
                    note = (
                        f"spot is a tenth of the on-demand price of {sibling.instance_type} "
                        f"({sibling.usd_per_hour} for {sibling.gpu_count} GPUs) in {row.region}, "
                        "and this instance has no on-demand price: suspect"
                    )
                    row = replace(row, is_suspect=True, note=note)
                    break
        out.append(row)
    return out


def _fold(
    cloud: str,
    offer: _Line,
    region: str,
    lines: list[_Line],
    report: ParseReport,
    stated_on: date | None,
) -> list[PriceRow]:
    """The prices of one instance type in one region, from its line (or its zones' lines)."""

    def row(
        billing: str,
        usd: Decimal,
        line_no: int,
        zone: str = "",
        note: str = "",
        suspect: bool = False,
        spread: tuple[int, Decimal, Decimal, Decimal] | None = None,
    ) -> PriceRow:
        count, low, median, high = spread or (None, None, None, None)
        return PriceRow(
            provider=cloud,
            instance_type=offer.instance_type,
            gpu_slug=offer.gpu_slug,
            gpu_count=offer.gpu_count,
            vcpus=offer.vcpus,
            memory_gib=offer.memory_gib,
            host=offer.host,
            region=region,
            zone=zone,
            billing=billing,
            usd_per_hour=usd,
            line_no=line_no,
            is_suspect=suspect,
            note=note,
            stated_on=stated_on,
            gpu_confirmed=offer.gpu.confirmed if offer.gpu else True,
            gpu_evidence=offer.gpu.evidence if offer.gpu else "",
            zone_count=count,
            zone_min_usd_per_hour=low,
            zone_median_usd_per_hour=median,
            zone_max_usd_per_hour=high,
        )

    out: list[PriceRow] = []
    if len(lines) > 1 and not all(line.zone for line in lines):
        stated = {(line.on_demand, line.spot) for line in lines}
        if len(stated) > 1:
            for line in lines:
                report.reject(
                    line.line_no,
                    RowRejected(
                        "conflicting duplicate rows",
                        f"{offer.instance_type} in {region} appears {len(lines)} times "
                        "with different prices",
                    ),
                )
            return out
        lines = lines[:1]
    # (line, its price) pairs, so that the price is known to be stated.
    on_demand_lines = [(line, line.on_demand) for line in lines if line.on_demand is not None]
    on_demand: Decimal | None = None
    if on_demand_lines:
        stated_on_demand = {price for _, price in on_demand_lines}
        if len(stated_on_demand) > 1:
            for line, _ in on_demand_lines:
                report.reject(
                    line.line_no,
                    RowRejected(
                        "conflicting on-demand price",
                        f"{offer.instance_type} in {region}: on-demand "
                        f"{', '.join(sorted(map(str, stated_on_demand)))} in one region",
                    ),
                )
        else:
            first, on_demand = on_demand_lines[0]
            out.append(row("on_demand", on_demand, first.line_no))
    spot_lines = [(line, line.spot) for line in lines if line.spot is not None]
    if spot_lines:
        lowest, lowest_spot = min(spot_lines, key=lambda pair: (pair[1], pair[0].zone))
        note, suspect = "", False
        if on_demand is not None and abs(lowest_spot - on_demand * TENTH) <= TENTH_TOLERANCE:
            note, suspect = f"spot is a tenth of on-demand {on_demand}: suspect", True
        elif on_demand is not None and lowest_spot > on_demand:
            note = f"spot above on-demand {on_demand} through the source's rounding"
        spread = None
        if all(line.zone for line, _ in spot_lines):
            prices = sorted(spot for _, spot in spot_lines)
            median = Decimal(statistics.median(prices)).quantize(SPREAD_QUANTUM)
            spread = (len(prices), prices[0], median, prices[-1])
        out.append(row("spot", lowest_spot, lowest.line_no, lowest.zone, note, suspect, spread))
    return out
