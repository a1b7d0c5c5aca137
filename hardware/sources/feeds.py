"""The price feeds fetched over HTTP (Azure, GCP, Oracle) by source name: how each is paged and
parsed, read from ``hardware.sources.registry``.

What a scheduled refresh of one of these sources needs from ``hardware/sources``:
``FEEDS[source].paging`` for :func:`hardware.sources.fetch.feed_fetch`, then :func:`feed_parse`
on the fetched pages for the price rows, the egress tiers (Oracle only) and the report of what
was left out and why.
"""

from .common import SourceError
from .registry import HTTP_SOURCES, FeedParse, Pages, PriceSource

FEEDS: dict[str, PriceSource] = HTTP_SOURCES


def feed_parse(
    *,
    source: str,
    pages: Pages,
    known_slugs: set[str] | None = None,
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
    return feed.parse(pages, provider=feed.provider, known_slugs=known_slugs, file_name=file_name)
