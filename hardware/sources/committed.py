"""Published committed prices with their term (``hardware/data/prices/committed/published.csv``)
-> plain price rows.

One row per instance, region and billing, in USD per instance-hour, with the date the publication
stated it. ``billing`` is ``on_demand`` or ``committed`` with ``term_months`` 12, 36 or 60
(``commit_1y``, ``commit_3y``, ``commit_5y``); any other term is rejected with its reason. The
region is written by its display name (``East US``) and stored under the provider's own region
code (``eastus``, ``REGION_CODES``); a name not in that table is rejected, never guessed. The GPU
is written by its name in the GPU table (``H100 SXM5 80GB``): a name the table lacks is rejected.
"""

from datetime import date
from pathlib import Path

from hardware.sources.common import (
    ParseReport,
    RowRejected,
    count_or_none,
    decimal_or_none,
    file_sha256,
    read_csv,
    text,
)
from hardware.sources.skypilot import CLOUD_SLUG, PriceRow

COLUMNS = (
    "provider",
    "instance",
    "gpu",
    "gpus",
    "region",
    "billing",
    "term_months",
    "usd_per_instance_hour",
    "stated_on",
    "source",
)
TERM_BILLINGS = {12: "commit_1y", 36: "commit_3y", 60: "commit_5y"}
# Region display names -> the provider's own region code (Azure: the Retail Prices API's
# armRegionName; AWS and GCP: their region codes as the consoles name them).
REGION_CODES: dict[str, dict[str, str]] = {
    "azure": {"East US": "eastus", "West US 2": "westus2", "Central US": "centralus"},
    "aws": {"US East (Northern Virginia)": "us-east-1", "US East (N. Virginia)": "us-east-1"},
    "gcp": {
        "Iowa (us-central1)": "us-central1",
        "Netherlands (europe-west4)": "europe-west4",
        "Japan (asia-northeast1)": "asia-northeast1",
    },
}


def region_code(provider: str, name: str) -> str:
    """The provider's region code for a region's display name; raise ``RowRejected``."""
    if not name:
        raise RowRejected("region not settled", "no region given")
    if "," in name:
        raise RowRejected("region not settled", f"{name!r} names several regions")
    code = REGION_CODES.get(provider, {}).get(name)
    if code is None:
        raise RowRejected(
            "region not settled", f"{name!r} is not a {provider} region name this table knows"
        )
    return code


def stated_date(cell: str) -> date:
    """A ``YYYY-MM-DD`` cell; raise ``RowRejected`` ("bad date")."""
    try:
        return date.fromisoformat(cell)
    except ValueError:
        raise RowRejected("bad date", f"{cell!r} is not a YYYY-MM-DD date") from None


def parse_committed_prices(
    path: Path, *, gpu_names: dict[str, str], file_name: str | None = None
) -> tuple[list[PriceRow], ParseReport]:
    """Parse the published committed prices; ``gpu_names`` maps GPU table names to slugs.

    Raise ``SourceError`` on a broken table; rows that cannot be used are in the report with
    their line and reason."""
    report = ParseReport(file_name=file_name or path.name, sha256=file_sha256(path))
    _, records = read_csv(path, COLUMNS)
    rows: list[PriceRow] = []
    for line_no, raw in records:
        report.rows_read += 1
        try:
            rows.append(_parse_row(line_no, raw, gpu_names))
        except RowRejected as exc:
            report.reject(line_no, exc)
    report.rows_accepted = len(rows)
    return rows, report


def _parse_row(line_no: int, raw: dict, gpu_names: dict[str, str]) -> PriceRow:
    provider = text(raw, "provider")
    if not CLOUD_SLUG.match(provider):
        raise RowRejected("bad provider", f"{provider!r} is not a provider slug")
    instance = text(raw, "instance")
    if not instance:
        raise RowRejected("no instance type", "instance is empty")
    gpu = text(raw, "gpu")
    slug = gpu_names.get(gpu)
    if slug is None:
        raise RowRejected("unknown GPU name", f"{gpu!r} is not a GPU table name", subject=gpu)
    count = count_or_none(raw, "gpus")
    if not count:
        raise RowRejected("no GPU", f"{instance} has no GPU count")
    billing = text(raw, "billing")
    term = count_or_none(raw, "term_months")
    if billing == "committed":
        if term not in TERM_BILLINGS:
            raise RowRejected(
                "unknown term", f"term_months {text(raw, 'term_months')!r} is not 12, 36 or 60"
            )
        billing = TERM_BILLINGS[term]
    elif billing != "on_demand" or term is not None:
        raise RowRejected("unknown billing", f"billing {billing!r} with term {term!r}")
    usd = decimal_or_none(raw, "usd_per_instance_hour")
    if not usd:
        raise RowRejected("no price", f"{instance}: usd_per_instance_hour is empty or 0")
    source = text(raw, "source")
    return PriceRow(
        provider=provider,
        instance_type=instance,
        gpu_slug=slug,
        gpu_count=count,
        vcpus=None,
        memory_gib=None,
        host="",
        region=region_code(provider, text(raw, "region")),
        zone="",
        billing=billing,
        usd_per_hour=usd,
        line_no=line_no,
        note=source[:300],
        stated_on=stated_date(text(raw, "stated_on")),
        gpu_evidence=f"the source names the GPU {gpu!r}, the GPU table's name of {slug}",
    )
