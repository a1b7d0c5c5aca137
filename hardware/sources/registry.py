"""Every price-source format in one table: its parser, label, provider, the billings it states,
how it is fetched and the settings it reads.

One ``PriceSource`` per format, by name in ``PRICE_SOURCES``. What reads it:

- ``hardware.refresh.pipeline`` parses a feed with ``PriceSource.parse`` and makes vanish only prices of
  the billings the format states (``billings``) and, for a format that may cover some regions
  only (``regional``), only in the regions the feed lists;
- ``hardware.refresh.scheduled`` fetches the formats served over HTTP (``HTTP_SOURCES``)
  (``fetch == "http"``) page by page (``paging``, for ``hardware.sources.fetch.feed_fetch``);
- ``costapp/settings.py`` reads each HTTP format's settings (``url_setting``,
  ``interval_minutes_setting``, ``interval_seconds_setting``) into ``PRICE_SOURCES``, from which
  ``hardware.refresh.beat`` builds the beat entries;
- ``refresh_prices`` takes the format by name, with one file or, for ``many_files`` formats,
  several;
- ``hardware.refresh.pipeline`` and ``hardware.refresh.checks`` treat a ``csv_feed`` as one CSV table
  (held when cut short, its rejected rows read again by line).

The AWS bulk offer file (``aws``) is fetched the same way from its URL (``public_url``: the whole
``AmazonEC2`` offer file; a region's own file, ``.../AmazonEC2/current/<region>/index.json``,
refreshes that region only, the format being ``regional``), written to a temporary file as it
arrives (``spooled``) and streamed by its parser. Each SkyPilot cloud is a source of its own, ``skypilot-<cloud>`` (``SKYPILOT_CLOUDS``), fetched
over HTTP from its catalog file (``public_url``, the production default), beside ``skypilot``,
the same format read from any cloud's file by hand.

Every parser gives the same row type (``hardware.sources.common.PriceRow``), a
``hardware.sources.common.ParseReport`` of the rows it left out, and the egress tiers the feed
states (``hardware.sources.egress.EgressTierRow``, Oracle only). No database here: the GPU slugs
the catalog knows are handed in.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from hardware.data_files import ALIASES_PATH, INSTANCES_PATH, SKYPILOT_DIR
from hardware.sources.aliases import read_aliases
from hardware.sources.aws import parse_aws_offer_file, parse_aws_pricing_pages
from hardware.sources.azure import parse_azure_retail_prices
from hardware.sources.common import ParseReport, PriceRow, SourceError
from hardware.sources.egress import EgressTierRow
from hardware.sources.gcp import parse_gcp_skus
from hardware.sources.instances import read_instances
from hardware.sources.oracle import parse_oracle_prices
from hardware.sources.skypilot import parse_skypilot_vms

Pages = Sequence[bytes | str | Path]
FILE = "file"
HTTP = "http"
# Billing names of the API contract (hardware.models.Billing's values).
ON_DEMAND, SPOT, COMMIT_1Y, COMMIT_3Y = "on_demand", "spot", "commit_1y", "commit_3y"
ALL_BILLINGS = frozenset({ON_DEMAND, SPOT, COMMIT_1Y, COMMIT_3Y})


@dataclass(frozen=True)
class FeedParse:
    """What one feed gives: price rows, egress tiers (Oracle only) and the parser's report."""

    rows: list[PriceRow]
    report: ParseReport
    egress_tiers: list[EgressTierRow] = field(default_factory=list)


class Parser(Protocol):
    """The parser of a format: a feed's files or fetched pages into a ``FeedParse``; raise
    ``SourceError`` when the feed cannot be read whole.

    ``provider`` is the provider the rows are of; ``known_slugs`` the catalog's GPU slugs (an
    alias or instance row naming another breaks its table); ``file_name`` names the feed in the
    report (``""``: the parser names it).
    """

    def __call__(
        self, pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str
    ) -> FeedParse: ...


@dataclass(frozen=True)
class PriceSource:
    """One price-source format."""

    name: str
    label: str
    parse: Parser
    billings: frozenset[str]
    fetch: str = FILE
    """``file``: read from files given to ``refresh_prices``; ``http``: also fetched by the
    scheduled refresh from the URL its settings give."""
    provider: str = ""
    """The provider a feed prices when none is named (``""``: named each time, SkyPilot)."""
    provider_fixed: bool = False
    """Whether the feed can only be the ``provider``'s (a public cloud's own price list)."""
    regional: bool = False
    """Whether a feed may cover some regions only (then it makes prices vanish only in those)."""
    many_files: bool = False
    """Whether a feed may come in several files or pages, read in order."""
    paging: str = ""
    """How the pages of an HTTP feed link (``hardware.sources.fetch.feed_fetch``)."""
    csv_feed: bool = False
    """Whether a feed is one CSV table: held when it does not end with a line break (cut short),
    and its rejected rows read again by line for the offer they were about."""
    public_url: str = ""
    """The public feed the production configuration fetches (``docker-compose.yml`` and
    ``.env.example`` set the URL setting to it); never fetched unless the setting names it."""
    spooled: bool = False
    """Whether a fetched feed is written to a temporary file, not held in memory (a feed of
    gigabytes that its parser streams from a file)."""
    provider_files: Path | None = None
    """The shipped feeds of this format, one ``<provider>.csv`` each: a hand refresh without a
    file reads the named provider's, and one without a provider takes it from the file's name."""
    per_provider_lease: bool = False
    """Whether a refresh of a provider takes the lock of that provider's own source
    (``<name>-<provider>``, where the registry has one), so it meets the scheduled refresh of
    that provider and no other."""

    @property
    def setting_prefix(self) -> str:
        return "PRICE_SOURCE_" + self.name.upper().replace("-", "_")

    @property
    def url_setting(self) -> str:
        """The setting (environment variable) with the feed's URL; empty turns it off."""
        return f"{self.setting_prefix}_URL"

    @property
    def interval_minutes_setting(self) -> str:
        return f"{self.setting_prefix}_INTERVAL_MINUTES"

    @property
    def interval_seconds_setting(self) -> str:
        return f"{self.setting_prefix}_INTERVAL_SECONDS"

    @property
    def settings(self) -> tuple[str, ...]:
        """The settings the format reads (none for a format read from files only)."""
        if self.fetch != HTTP:
            return ()
        return (self.url_setting, self.interval_minutes_setting, self.interval_seconds_setting)


def _one_file(pages: Pages, name: str) -> Path:
    if len(pages) != 1 or not isinstance(pages[0], Path):
        raise SourceError(f"{name}: one file expected, {len(pages)} given")
    return pages[0]


def _files(pages: Pages, name: str) -> list[Path]:
    paths = [p for p in pages if isinstance(p, Path)]
    if not paths or len(paths) != len(pages):
        raise SourceError(f"{name}: files expected")
    return paths


def _skypilot(
    pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str
) -> FeedParse:
    path = _one_file(pages, file_name or "skypilot")
    aliases = read_aliases(ALIASES_PATH, known_slugs=known_slugs)
    rows, report = parse_skypilot_vms(
        path, cloud=provider, aliases=aliases, file_name=file_name or None
    )
    report.bytes_read = path.stat().st_size
    return FeedParse(rows, report)


def _skypilot_of(cloud: str) -> Parser:
    """The parser of one cloud's SkyPilot catalog, a file or the fetched file's bytes."""

    def parse(
        pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str
    ) -> FeedParse:
        name = file_name or f"skypilot-{cloud}"
        if len(pages) != 1 or isinstance(pages[0], str):
            raise SourceError(f"{name}: one vms.csv expected, {len(pages)} given")
        page = pages[0]
        aliases = read_aliases(ALIASES_PATH, known_slugs=known_slugs)
        rows, report = parse_skypilot_vms(
            page, cloud=provider or cloud, aliases=aliases, file_name=file_name or None
        )
        report.bytes_read = page.stat().st_size if isinstance(page, Path) else len(page)
        return FeedParse(rows, report)

    return parse


AWS_OFFER_FILE_URL = (
    "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/index.json"
)
SKYPILOT_CATALOG_URL = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/"
    "{cloud}/vms.csv"
)
SKYPILOT_CLOUDS = (
    "aws",
    "cudo",
    "daytona",
    "hyperstack",
    "jarvislabs",
    "lambda",
    "lium",
    "mithril",
    "primeintellect",
    "seeweb",
    "shadeform",
    "vast",
    "yotta",
)
"""The clouds whose SkyPilot catalog (``catalogs/v8/<cloud>/vms.csv``) is a scheduled source of
its own, ``skypilot-<cloud>`` (the files ``hardware/data/prices/skypilot-v8/`` ships)."""


def _aws(pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str) -> FeedParse:
    path = _one_file(pages, file_name or "aws")
    aliases = read_aliases(ALIASES_PATH, known_slugs=known_slugs)
    rows, report = parse_aws_offer_file(
        path, aliases=aliases, provider=provider, file_name=file_name or None
    )
    return FeedParse(rows, report)


def _aws_pricing_api(
    pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str
) -> FeedParse:
    paths = _files(pages, file_name or "aws-pricing-api")
    aliases = read_aliases(ALIASES_PATH, known_slugs=known_slugs)
    rows, report = parse_aws_pricing_pages(paths, aliases=aliases, provider=provider)
    return FeedParse(rows, report)


def _azure(
    pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str
) -> FeedParse:
    instances = read_instances(INSTANCES_PATH, provider="azure", known_slugs=known_slugs)
    rows, report = parse_azure_retail_prices(
        pages, instances=instances, file_name=file_name or "azure feed"
    )
    return FeedParse(rows, report)


def _gcp(pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str) -> FeedParse:
    instances = read_instances(INSTANCES_PATH, provider="gcp", known_slugs=known_slugs)
    rows, report = parse_gcp_skus(pages, instances=instances, file_name=file_name or "gcp feed")
    return FeedParse(rows, report)


def _oracle(
    pages: Pages, *, provider: str, known_slugs: set[str] | None, file_name: str
) -> FeedParse:
    name = file_name or "oracle feed"
    if len(pages) != 1:
        raise SourceError(f"{name}: one price list document expected, {len(pages)} given")
    instances = read_instances(INSTANCES_PATH, provider="oracle", known_slugs=known_slugs)
    rows, tiers, report = parse_oracle_prices(pages[0], instances=instances, file_name=name)
    return FeedParse(rows, report, tiers)


PRICE_SOURCES: dict[str, PriceSource] = {
    source.name: source
    for source in (
        PriceSource(
            name="skypilot",
            label="SkyPilot catalog (vms.csv) of any cloud",
            parse=_skypilot,
            billings=frozenset({ON_DEMAND, SPOT}),
            csv_feed=True,
            provider_files=SKYPILOT_DIR,
            per_provider_lease=True,
        ),
        PriceSource(
            name="aws",
            label="AWS Price List bulk offer file (AmazonEC2)",
            parse=_aws,
            billings=frozenset({ON_DEMAND, COMMIT_1Y, COMMIT_3Y}),
            fetch=HTTP,
            provider="aws",
            provider_fixed=True,
            regional=True,
            public_url=AWS_OFFER_FILE_URL,
            spooled=True,
        ),
        PriceSource(
            name="aws-pricing-api",
            label="AWS Price List Query API (GetProducts pages)",
            parse=_aws_pricing_api,
            billings=frozenset({ON_DEMAND, COMMIT_1Y, COMMIT_3Y}),
            provider="aws",
            regional=True,
            many_files=True,
        ),
        PriceSource(
            name="azure",
            label="Azure Retail Prices API",
            parse=_azure,
            billings=ALL_BILLINGS,
            fetch=HTTP,
            provider="azure",
            provider_fixed=True,
            regional=True,
            many_files=True,
            paging="azure",
        ),
        PriceSource(
            name="gcp",
            label="Google Cloud Billing Catalog API (SKUs)",
            parse=_gcp,
            billings=ALL_BILLINGS,
            fetch=HTTP,
            provider="gcp",
            provider_fixed=True,
            many_files=True,
            paging="gcp",
        ),
        PriceSource(
            name="oracle",
            label="Oracle Cloud price list (GPU shapes and egress tiers)",
            parse=_oracle,
            billings=frozenset({ON_DEMAND}),
            fetch=HTTP,
            provider="oracle",
            provider_fixed=True,
        ),
        *(
            PriceSource(
                name=f"skypilot-{cloud}",
                label=f"SkyPilot catalog of {cloud} (catalogs/v8/{cloud}/vms.csv)",
                parse=_skypilot_of(cloud),
                billings=frozenset({ON_DEMAND, SPOT}),
                fetch=HTTP,
                provider=cloud,
                provider_fixed=True,
                csv_feed=True,
                public_url=SKYPILOT_CATALOG_URL.format(cloud=cloud),
            )
            for cloud in SKYPILOT_CLOUDS
        ),
    )
}
"""Every format by name."""

HTTP_SOURCES: dict[str, PriceSource] = {
    name: source for name, source in PRICE_SOURCES.items() if source.fetch == HTTP
}
"""The formats the scheduled refresh fetches over HTTP (``aws``'s bulk offer file, ``azure``,
``gcp``, ``oracle`` and one ``skypilot-<cloud>`` per cloud of ``SKYPILOT_CLOUDS``)."""
