"""The Azure, GCP and Oracle feeds by source name: how each is paged and parsed.

What a refresh of one of these sources needs from ``hardware/sources``: ``FEEDS[source].paging``
for :func:`hardware.sources.fetch.feed_fetch`, then :func:`feed_parse` on the fetched pages for
the price rows, the egress tiers (Oracle only) and the report of what was left out and why.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .azure import parse_azure_retail_prices
from .common import ParseReport, SourceError
from .egress import EgressTierRow
from .gcp import parse_gcp_skus
from .instances import INSTANCES_PATH, InstanceTable, read_instances
from .oracle import parse_oracle_prices
from .skypilot import PriceRow

Pages = Sequence[bytes | str | Path]


@dataclass(frozen=True)
class FeedParse:
    """What one fetched feed gives: price rows, egress tiers and the parser's report."""

    rows: list[PriceRow]
    report: ParseReport
    egress_tiers: list[EgressTierRow] = field(default_factory=list)


def _azure(pages: Pages, instances: InstanceTable, file_name: str) -> FeedParse:
    rows, report = parse_azure_retail_prices(pages, instances=instances, file_name=file_name)
    return FeedParse(rows, report)


def _gcp(pages: Pages, instances: InstanceTable, file_name: str) -> FeedParse:
    rows, report = parse_gcp_skus(pages, instances=instances, file_name=file_name)
    return FeedParse(rows, report)


def _oracle(pages: Pages, instances: InstanceTable, file_name: str) -> FeedParse:
    if len(pages) != 1:
        raise SourceError(f"{file_name}: one price list document expected, {len(pages)} given")
    rows, tiers, report = parse_oracle_prices(pages[0], instances=instances, file_name=file_name)
    return FeedParse(rows, report, tiers)


@dataclass(frozen=True)
class Feed:
    """One source's format: its provider, how its pages link, and its parser."""

    provider: str
    paging: str
    parse: Callable[[Pages, InstanceTable, str], FeedParse]


FEEDS: dict[str, Feed] = {
    "azure": Feed("azure", "azure", _azure),
    "gcp": Feed("gcp", "gcp", _gcp),
    "oracle": Feed("oracle", "", _oracle),
}


def feed_parse(
    *,
    source: str,
    pages: Pages,
    known_slugs: set[str] | None = None,
    instances_path: Path = INSTANCES_PATH,
    file_name: str = "",
) -> FeedParse:
    """Parse the fetched pages of ``source``; raise ``SourceError`` when the feed is unusable.

    With ``known_slugs``, an instance table row naming a GPU outside the GPU table breaks the table.
    """
    if source not in FEEDS:
        raise ValueError(f"unknown feed source {source!r}; one of {', '.join(FEEDS)}")
    if not pages:
        raise SourceError(f"{file_name or source}: no pages to parse")
    feed = FEEDS[source]
    instances = read_instances(instances_path, provider=feed.provider, known_slugs=known_slugs)
    return feed.parse(pages, instances, file_name or f"{source} feed")
