"""AWS price feeds -> plain price rows: the Price List bulk offer file and ``GetProducts`` pages.

Both describe products (a SKU with ``attributes``) and their terms. Kept: instances of the GPU
families below, on Linux without pre-installed software, in shared tenancy and in use (capacity
reservations are priced $0 and dedicated tenancy is another product), with

- ``terms.OnDemand``: the hourly price -> ``on_demand``;
- ``terms.Reserved``: standard, no upfront, 1 or 3 years -> ``commit_1y`` / ``commit_3y``, the
  hourly rate paid over the term (convertible, partial and all upfront terms are left out).

Every other product is rejected with its reason (the first ``KEEP_REJECTIONS`` kept in full, the
rest counted). For JSON feeds ``line_no`` is the product's position in the feed (1 = first).

The bulk file (gigabytes) is streamed with ijson and never loaded whole. It is read as three
sections, each parsed once: ``products``, ``terms.OnDemand`` and ``terms.Reserved``. The sections
are found by searching the bytes for the keys that start them and proven by parsing each section
as a complete JSON document of its own (a wrong guess cannot parse whole); when that fails the
file is read in three full passes instead, which is slower and gives the same rows.
"""

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, BinaryIO

import ijson

from hardware.sources.aliases import AliasTable
from hardware.sources.common import (
    CHUNK_BYTES,
    ParseReport,
    PriceRow,
    RowRejected,
    SourceError,
    file_sha256,
)

KEEP_REJECTIONS = 100
PARSE_BUFFER_BYTES = 64 * 1024  # what ijson reads at a time (faster than larger reads here)
# Instance family -> (accelerator name of the alias table, GPU memory per GPU [GiB]).
GPU_FAMILIES: dict[str, tuple[str, Decimal]] = {
    "p3": ("V100", Decimal(16)),
    "p3dn": ("V100-32GB", Decimal(32)),
    "p4d": ("A100", Decimal(40)),
    "p4de": ("A100-80GB", Decimal(80)),
    "p5": ("H100", Decimal(80)),
    "p5e": ("H200", Decimal(141)),
    "p5en": ("H200", Decimal(141)),
    "p6-b200": ("B200", Decimal(179)),
    "g4dn": ("T4", Decimal(16)),
    "g5": ("A10G", Decimal(24)),
    "g6": ("L4", Decimal(24)),
    "g6e": ("L40S", Decimal(48)),
}
# Location names of the older feeds (newer ones state ``regionCode`` too).
LOCATIONS: dict[str, str] = {
    "US East (N. Virginia)": "us-east-1",
    "US East (Ohio)": "us-east-2",
    "US West (N. California)": "us-west-1",
    "US West (Oregon)": "us-west-2",
    "Canada (Central)": "ca-central-1",
    "Canada West (Calgary)": "ca-west-1",
    "South America (Sao Paulo)": "sa-east-1",
    "EU (Ireland)": "eu-west-1",
    "EU (London)": "eu-west-2",
    "EU (Paris)": "eu-west-3",
    "EU (Frankfurt)": "eu-central-1",
    "EU (Zurich)": "eu-central-2",
    "EU (Stockholm)": "eu-north-1",
    "EU (Milan)": "eu-south-1",
    "EU (Spain)": "eu-south-2",
    "Asia Pacific (Tokyo)": "ap-northeast-1",
    "Asia Pacific (Seoul)": "ap-northeast-2",
    "Asia Pacific (Osaka)": "ap-northeast-3",
    "Asia Pacific (Singapore)": "ap-southeast-1",
    "Asia Pacific (Sydney)": "ap-southeast-2",
    "Asia Pacific (Jakarta)": "ap-southeast-3",
    "Asia Pacific (Melbourne)": "ap-southeast-4",
    "Asia Pacific (Mumbai)": "ap-south-1",
    "Asia Pacific (Hyderabad)": "ap-south-2",
    "Asia Pacific (Hong Kong)": "ap-east-1",
    "Middle East (Bahrain)": "me-south-1",
    "Middle East (UAE)": "me-central-1",
    "Africa (Cape Town)": "af-south-1",
    "Israel (Tel Aviv)": "il-central-1",
    "AWS GovCloud (US-East)": "us-gov-east-1",
    "AWS GovCloud (US-West)": "us-gov-west-1",
}
RESERVED_BILLING = {"1yr": "commit_1y", "3yr": "commit_3y"}


@dataclass(frozen=True)
class AwsProduct:
    """A product kept for its prices: a GPU instance type in a region."""

    sku: str
    position: int
    instance_type: str
    region: str
    gpu_slug: str
    gpu_count: int
    vcpus: Decimal | None
    memory_gib: Decimal | None


@dataclass(frozen=True)
class AwsTermPrice:
    """The hourly price a term states for a SKU [USD/instance-hour], before any filter on it."""

    sku: str
    billing: str  # on_demand, commit_1y, commit_3y
    usd_per_hour: Decimal
    effective: str


def _number(attributes: dict, name: str) -> Decimal | None:
    """``"8"``, ``"61 GiB"``, ``"1,152 GiB"`` -> Decimal; anything else -> None."""
    cell = str(attributes.get(name, "")).split(" ")[0].replace(",", "")
    try:
        value = Decimal(cell)
    except InvalidOperation:
        return None
    return value if value.is_finite() and value >= 0 else None


def product_read(sku: str, position: int, product: dict, aliases: AliasTable) -> AwsProduct:
    """The product as a GPU instance in a region, or ``RowRejected`` saying why it is not kept."""
    attributes = product.get("attributes")
    if not isinstance(attributes, dict):
        raise RowRejected("not an instance", f"{sku} has no attributes", sku)
    instance_type = str(attributes.get("instanceType", ""))
    if not instance_type:
        family = product.get("productFamily", "?")
        raise RowRejected("not an instance", f"{sku} is a {family!r} product", sku)
    where = f"{sku} {instance_type} in {attributes.get('location', '?')}"
    capacity = attributes.get("capacitystatus", "Used")
    if capacity != "Used":
        raise RowRejected("capacity reservation", f"{where}: capacitystatus {capacity}", sku)
    tenancy = attributes.get("tenancy", "")
    if tenancy != "Shared":
        raise RowRejected(f"{tenancy.lower() or 'unknown'} tenancy", f"{where}: {tenancy}", sku)
    system = attributes.get("operatingSystem", "")
    if system != "Linux":
        raise RowRejected("not Linux", f"{where}: operatingSystem {system!r}", sku)
    software = attributes.get("preInstalledSw", "NA")
    if software != "NA":
        raise RowRejected("pre-installed software", f"{where}: {software}", sku)
    gpu_count = _number(attributes, "gpu")
    family = instance_type.split(".")[0]
    if not gpu_count:
        raise RowRejected("not a GPU instance", f"{where} has no GPU", sku)
    if family not in GPU_FAMILIES:
        raise RowRejected("unknown GPU family", f"{where}: family {family!r} is not known", sku)
    if gpu_count != gpu_count.to_integral_value():
        raise RowRejected("bad number", f"{where}: gpu {attributes.get('gpu')!r}", sku)
    region = attributes.get("regionCode") or LOCATIONS.get(attributes.get("location", ""))
    if not region:
        location = attributes.get("location", "")
        raise RowRejected("unknown location", f"{where}: location {location!r}", sku)
    name, memory_gib = GPU_FAMILIES[family]
    try:
        slug = aliases.resolve(name, memory_gib, instance_type)
    except RowRejected as exc:
        raise RowRejected(exc.reason, f"{sku}: {exc.detail}", exc.subject) from None
    return AwsProduct(
        sku=sku,
        position=position,
        instance_type=instance_type,
        region=str(region),
        gpu_slug=slug,
        gpu_count=int(gpu_count),
        vcpus=_number(attributes, "vcpu"),
        memory_gib=_number(attributes, "memory"),
    )


def term_price(term: dict, billing_kind: str) -> AwsTermPrice | None:
    """The hourly price of one term, or ``None`` for a reserved term that is not standard
    no-upfront 1- or 3-year; ``RowRejected`` when its price cannot be read.
    """
    sku = str(term.get("sku", ""))
    if billing_kind == "Reserved":
        attributes = term.get("termAttributes") or {}
        if attributes.get("OfferingClass") != "standard":
            return None
        if attributes.get("PurchaseOption") != "No Upfront":
            return None
        billing = RESERVED_BILLING.get(attributes.get("LeaseContractLength", ""))
        if billing is None:
            return None
    else:
        billing = "on_demand"
    hourly = [
        d for d in (term.get("priceDimensions") or {}).values() if d.get("unit") in ("Hrs", "Hours")
    ]
    if len(hourly) != 1:
        raise RowRejected("no hourly price", f"{sku}: {len(hourly)} hourly price dimensions", sku)
    cell = str((hourly[0].get("pricePerUnit") or {}).get("USD", ""))
    try:
        usd = Decimal(cell)
    except InvalidOperation:
        raise RowRejected("bad number", f"{sku}: USD {cell!r} is not a number", sku) from None
    if not usd.is_finite() or usd < 0:
        raise RowRejected("bad number", f"{sku}: USD {cell!r} is not a non-negative number", sku)
    return AwsTermPrice(sku, billing, usd, str(term.get("effectiveDate", "")))


def _price_row(
    product: AwsProduct, price: AwsTermPrice, provider: str, stated_on: date | None
) -> PriceRow:
    return PriceRow(
        provider=provider,
        instance_type=product.instance_type,
        gpu_slug=product.gpu_slug,
        gpu_count=product.gpu_count,
        vcpus=product.vcpus,
        memory_gib=product.memory_gib,
        host="",
        region=product.region,
        zone="",
        billing=price.billing,
        usd_per_hour=price.usd_per_hour,
        line_no=product.position,
        stated_on=stated_on,
    )


def _day(text: Any) -> date | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).date()
    except ValueError:
        return None


class _Rows:
    """Collects the rows of one feed: one price per (SKU, billing), zero prices refused."""

    def __init__(self, report: ParseReport, provider: str):
        self.report = report
        self.provider = provider
        self.products: dict[str, AwsProduct] = {}
        self.rows: list[PriceRow] = []
        self.priced: set[tuple[str, str]] = set()

    def product(self, sku: str, product: Any, aliases: AliasTable) -> None:
        self.report.rows_read += 1
        position = self.report.rows_read
        try:
            if sku in self.products:
                raise RowRejected("duplicate SKU", f"{sku} is stated twice", sku)
            if not isinstance(product, dict):
                raise RowRejected("not an instance", f"{sku} is not an object", sku)
            self.products[sku] = product_read(sku, position, product, aliases)
        except RowRejected as exc:
            self.report.reject(position, exc)
            return
        self.report.rows_accepted += 1

    def terms(self, sku: str, terms: Any, kind: str) -> None:
        product = self.products.get(sku)
        if product is None or not isinstance(terms, dict):
            return
        for term in terms.values():
            try:
                price = term_price(term, kind)
                if price is None:
                    continue
                if price.usd_per_hour == 0:
                    raise RowRejected(
                        "zero price",
                        f"{sku} {product.instance_type} {price.billing} is $0 an hour",
                        sku,
                    )
                if (sku, price.billing) in self.priced:
                    raise RowRejected(
                        "duplicate term", f"{sku} has two {price.billing} prices", sku
                    )
            except RowRejected as exc:
                self.report.reject(product.position, exc)
                continue
            self.priced.add((sku, price.billing))
            self.rows.append(_price_row(product, price, self.provider, self.report.stated_on))


# --- the bulk offer file ----------------------------------------------------------------------


class _View:
    """A read-only file over pieces: ``bytes`` given as they are, ``("file", start, end)`` ranges
    of a file, and ``("gap", start, end)`` ranges read into the digest but not given. With a
    digest, a file's ranges read in order through its views hash the whole file once.
    """

    def __init__(self, handle: BinaryIO, pieces: list[Any], digest: Any = None):
        self.handle = handle
        self.pieces = list(pieces)
        self.digest = digest
        self.bytes_read = 0

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        while self.pieces:
            piece = self.pieces[0]
            if isinstance(piece, bytes):
                self.pieces.pop(0)
                if piece:
                    return piece
                continue
            kind, start, end = piece
            want = CHUNK_BYTES if size is None or size < 0 or kind == "gap" else size
            if end is not None:
                want = min(want, end - start)
            chunk = b""
            if want > 0:
                self.handle.seek(start)
                chunk = self.handle.read(want)
            if not chunk:
                self.pieces.pop(0)
                continue
            self.pieces[0] = (kind, start + len(chunk), end)
            self.bytes_read += len(chunk)
            if self.digest is not None:
                self.digest.update(chunk)
            if kind == "file":
                return chunk
        return b""


def _find_member(handle: BinaryIO, key: bytes, start: int) -> Iterator[tuple[int, int]]:
    """Offsets ``(close, comma)`` of each ``}`` ``,`` ``"key" :`` sequence from ``start``: the
    end of the previous member and the comma before ``key``. Candidates only: proven later.
    """
    pattern = re.compile(rb'\}(\s*),\s*"' + re.escape(key) + rb'"\s*:')
    overlap = 256
    offset = start
    while True:
        handle.seek(offset)
        chunk = handle.read(CHUNK_BYTES)
        if not chunk:
            return
        for match in pattern.finditer(chunk):  # one in the overlap is found twice: harmless
            yield offset + match.start(), offset + match.start() + 1 + len(match.group(1))
        if len(chunk) < CHUNK_BYTES:
            return
        offset += len(chunk) - overlap


def _sections(handle: BinaryIO) -> tuple[list, list, list] | None:
    """The three sections as views ``products``, ``terms.OnDemand``, ``terms.Reserved``, when
    the file is laid out in that order; ``None`` otherwise. Each view is a whole JSON document.
    """
    products_end = next(_find_member(handle, b"terms", 0), None)
    if products_end is None:
        return None
    close, comma = products_end
    on_demand_end = next(_find_member(handle, b"Reserved", comma), None)
    if on_demand_end is None:
        return None
    close2, comma2 = on_demand_end
    products = [("file", 0, close + 1), b"}"]
    on_demand = [b"{", ("gap", close + 1, comma + 1), ("file", comma + 1, close2 + 1), b"}}"]
    reserved = [b'{"terms":{', ("gap", close2 + 1, comma2 + 1), ("file", comma2 + 1, None)]
    return products, on_demand, reserved


def parse_aws_offer_file(
    path: Path,
    *,
    aliases: AliasTable,
    provider: str = "aws",
    file_name: str | None = None,
) -> tuple[list[PriceRow], ParseReport]:
    """Parse an AWS Price List bulk offer file (``AmazonEC2``) into GPU price rows, streaming.

    Raise ``SourceError`` naming the file when it is not a whole, readable offer file (a
    truncated or corrupted file gives no rows at all). The feed's date is its
    ``publicationDate`` (``report.stated_on``).
    """
    name = file_name or path.name
    try:
        with open(path, "rb") as handle:
            stated_on = _publication_date(handle)
            sections = _sections(handle)
            if sections is not None:
                report = ParseReport(name, "", keep_at_most=KEEP_REJECTIONS, stated_on=stated_on)
                try:
                    collected = _read_sections(handle, sections, report, provider, aliases)
                except (ijson.JSONError, SourceError):
                    collected = None  # the guess was wrong: read the whole file instead
                if collected is not None:
                    return collected.rows, collected.report
            report = ParseReport(name, "", keep_at_most=KEEP_REJECTIONS, stated_on=stated_on)
            whole = [("file", 0, None)]
            collected = _read_sections(handle, [whole, whole, whole], report, provider, aliases)
            return collected.rows, collected.report
    except OSError as exc:
        raise SourceError(f"{name}: cannot read the file: {exc.strerror or exc}") from None
    except ijson.JSONError as exc:
        raise SourceError(f"{name}: not a whole JSON offer file: {exc}") from None


def _publication_date(handle: BinaryIO) -> date | None:
    handle.seek(0)
    head = handle.read(4096)
    match = re.search(rb'"publicationDate"\s*:\s*"([^"]+)"', head)
    return _day(match.group(1).decode()) if match else None


def _read_sections(
    handle: BinaryIO,
    sections: Any,
    report: ParseReport,
    provider: str,
    aliases: AliasTable,
) -> _Rows:
    products, on_demand, reserved = sections
    collected = _Rows(report, provider)
    digest = hashlib.sha256()
    views = [_View(handle, pieces, digest) for pieces in (products, on_demand, reserved)]
    if products is on_demand:  # three passes over the whole file: hash and count the first
        views[1].digest = views[2].digest = None
    seen_products = False
    for sku, product in ijson.kvitems(views[0], "products", buf_size=PARSE_BUFFER_BYTES):
        seen_products = True
        collected.product(sku, product, aliases)
    if not seen_products:
        raise SourceError(f"{report.file_name}: no products: not an offer file")
    for kind, view in (("OnDemand", views[1]), ("Reserved", views[2])):
        for sku, terms in ijson.kvitems(view, f"terms.{kind}", buf_size=PARSE_BUFFER_BYTES):
            collected.terms(sku, terms, kind)
    counted = views[:1] if products is on_demand else views
    report.bytes_read = sum(view.bytes_read for view in counted)
    report.sha256 = digest.hexdigest()
    return collected


# --- GetProducts pages ------------------------------------------------------------------------


def parse_aws_pricing_pages(
    paths: list[Path],
    *,
    aliases: AliasTable,
    provider: str = "aws",
) -> tuple[list[PriceRow], ParseReport]:
    """Parse saved AWS Pricing API ``GetProducts`` responses (``PriceList`` items as objects or
    as JSON strings; a page is small) into GPU price rows; raise ``SourceError`` naming the file.
    """
    name = ", ".join(p.name for p in paths)
    sha = file_sha256(paths[0]) if len(paths) == 1 else ""
    report = ParseReport(file_name=name, sha256=sha, keep_at_most=KEEP_REJECTIONS)
    collected = _Rows(report, provider)
    terms_of: list[tuple[str, dict]] = []
    for path in paths:
        try:
            page = json.loads(path.read_bytes())
        except OSError as exc:
            raise SourceError(f"{path.name}: cannot read the file: {exc.strerror or exc}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise SourceError(f"{path.name}: not a JSON GetProducts page: {exc}") from None
        items = page.get("PriceList") if isinstance(page, dict) else None
        if not isinstance(items, list):
            raise SourceError(f"{path.name}: no PriceList: not a GetProducts page")
        report.bytes_read += path.stat().st_size
        for item in items:
            if isinstance(item, str):
                try:
                    item = json.loads(item)
                except ValueError as exc:
                    raise SourceError(f"{path.name}: a PriceList item is not JSON: {exc}") from None
            product = item.get("product") if isinstance(item, dict) else None
            sku = str((product or {}).get("sku", "")) if isinstance(product, dict) else ""
            collected.product(sku, product, aliases)
            day = _day(item.get("publicationDate", "")) if isinstance(item, dict) else None
            if day and (report.stated_on is None or day > report.stated_on):
                report.stated_on = day
            terms_of.append((sku, (item.get("terms") or {}) if isinstance(item, dict) else {}))
    for sku, terms in terms_of:
        for kind in ("OnDemand", "Reserved"):
            collected.terms(sku, terms.get(kind) or {}, kind)
    return collected.rows, report
