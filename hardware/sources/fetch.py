"""Fetching price feeds over HTTP: timeouts, retries with backoff, conditional requests, paging.

No database here: the caller keeps the validators (``ETag``, ``Last-Modified``) of the last
download and passes them back; a feed the server says is unchanged (``304 Not Modified``) is not
downloaded again, and the result says so with the validators it was asked with.

- Timeouts: ``timeout_s`` for connecting and for each read; a feed larger than ``max_bytes`` is
  refused.
- Retries: a connection error, a timeout, a body cut short, ``429`` or a ``5xx`` answer is tried
  again, up to ``retries`` more times, after ``backoff_s``, then twice that, and so on (at most
  ``max_backoff_s``; a ``Retry-After`` in seconds is followed within that bound). Other ``4xx``
  answers fail at once: asking again would not help.
- Spooling: ``feed_fetch(..., into=path)`` writes the body to a file as it arrives instead of
  keeping it in memory (a feed of gigabytes, the AWS bulk offer file), bounded by
  ``max_file_bytes``; the result names the file and has no pages.
- Paging: ``azure`` follows each page's ``NextPageLink`` until it is empty; ``gcp`` asks again
  with ``pageToken`` set to the page's ``nextPageToken``. The validators are the first page's;
  later pages are always downloaded (a feed's pages change together).
"""

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import BinaryIO

import httpx

PAGING = ("", "azure", "gcp")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
USER_AGENT = "gpu-tco price refresh"
# Query parameters that carry credentials (GCP's API key): hidden wherever a URL is shown.
SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "access_token", "signature", "sig"})


class FetchError(Exception):
    """A feed could not be fetched; the message names the URL and what went wrong."""


@dataclass(frozen=True)
class Validators:
    """What the server said identifies the version of a feed it sent (empty: not said)."""

    etag: str = ""
    last_modified: str = ""

    def request_headers(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers

    @classmethod
    def of(cls, response: httpx.Response) -> "Validators":
        return cls(
            etag=response.headers.get("ETag", ""),
            last_modified=response.headers.get("Last-Modified", ""),
        )


@dataclass(frozen=True)
class FetchPolicy:
    """How hard to try: timeouts [s], retries, backoff [s], the largest page [bytes]."""

    timeout_s: float = 30.0
    retries: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    max_bytes: int = 512 * 1024 * 1024
    max_pages: int = 10_000
    max_file_bytes: int = 64 * 1024**3
    """The largest feed written to a file (``into``)."""


@dataclass(frozen=True)
class FetchResult:
    """What a fetch brought: the pages' bytes in order, or ``not_modified`` and no pages.

    ``url`` is as shown (credentials hidden); ``requests`` counts every HTTP request made;
    ``path`` the file the feed was written to (``into``; then no pages).
    """

    url: str
    not_modified: bool
    validators: Validators
    pages: tuple[bytes, ...] = ()
    requests: int = 0
    sha256: str = field(default="")
    path: Path | None = None

    @property
    def size_bytes(self) -> int:
        if self.path is not None:
            return self.path.stat().st_size
        return sum(len(page) for page in self.pages)


def url_shown(url: str) -> str:
    """The URL as it may be logged or stored: credentials in its query replaced by ``***``."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return "(an unreadable URL)"
    hidden = [
        (k, "***" if k.lower() in SECRET_PARAMS else v) for k, v in parsed.params.multi_items()
    ]
    if not any(k.lower() in SECRET_PARAMS for k, _ in hidden):
        return url
    return str(parsed.copy_with(params=httpx.QueryParams(tuple(hidden))))


def _retry_after_s(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def _get(
    client: httpx.Client,
    url: str,
    *,
    headers: dict[str, str],
    policy: FetchPolicy,
    sleep: Callable[[float], None],
    into: BinaryIO | None = None,
) -> tuple[httpx.Response, bytes, int]:
    """One GET with retries: ``(response, body, requests made)``; raise ``FetchError``. With
    ``into`` the body is written to that file (emptied at each attempt) and ``body`` is empty."""
    problem = ""
    limit = policy.max_file_bytes if into is not None else policy.max_bytes
    for attempt in range(policy.retries + 1):
        wait = min(policy.backoff_s * 2**attempt, policy.max_backoff_s)
        if into is not None:
            into.seek(0)
            into.truncate()
        try:
            with client.stream("GET", url, headers=headers) as response:
                if response.status_code in RETRY_STATUSES:
                    problem = f"HTTP {response.status_code}"
                    asked = _retry_after_s(response)
                    if asked is not None:
                        wait = min(asked, policy.max_backoff_s)
                else:
                    if response.status_code >= 400:
                        raise FetchError(f"{url_shown(url)}: HTTP {response.status_code}")
                    body = bytearray()
                    size = 0
                    for chunk in response.iter_bytes():
                        size += len(chunk)
                        if size > limit:
                            raise FetchError(f"{url_shown(url)}: larger than {limit} bytes")
                        if into is None:
                            body += chunk
                        else:
                            into.write(chunk)
                    if into is not None:
                        into.flush()
                    return response, bytes(body), attempt + 1
        except httpx.TimeoutException as exc:
            problem = f"timed out ({type(exc).__name__})"
        except httpx.TransportError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if attempt < policy.retries:
            sleep(wait)
    raise FetchError(f"{url_shown(url)}: {problem} after {policy.retries + 1} attempts")


def _next_url(paging: str, url: str, first_url: str, body: bytes) -> str:
    if not paging:
        return ""
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FetchError(f"{url_shown(url)}: a page is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise FetchError(f"{url_shown(url)}: a page is not a JSON object")
    if paging == "azure":
        link = document.get("NextPageLink") or ""
        if not isinstance(link, str):
            raise FetchError(f"{url_shown(url)}: NextPageLink is not a link")
        return link
    token = document.get("nextPageToken") or ""
    if not token:
        return ""
    return str(httpx.URL(first_url).copy_merge_params({"pageToken": str(token)}))


def feed_fetch(
    *,
    url: str,
    validators: Validators | None = None,
    paging: str = "",
    policy: FetchPolicy | None = None,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
    into: Path | None = None,
) -> FetchResult:
    """Download a feed (all its pages) unless the server says it has not changed.

    ``validators`` are those of the last download: with them the first request is conditional,
    and a ``304`` answer gives ``not_modified`` with the same validators and no pages. Raise
    ``FetchError`` naming the URL when the feed cannot be fetched whole. A ``client`` passed in
    is used as it is (its own timeouts); otherwise one is made with ``policy.timeout_s``. With
    ``into`` (one page only) the feed is written to that file, not kept in memory.
    """
    if paging not in PAGING:
        raise ValueError(f"unknown paging {paging!r}; one of {PAGING}")
    if into is not None and paging:
        raise ValueError("a feed written to a file has one page")
    if not url:
        raise FetchError("no URL: the source is off")
    policy = policy or FetchPolicy()
    validators = validators or Validators()
    own_client = client is None
    if client is None:
        client = httpx.Client(
            timeout=httpx.Timeout(policy.timeout_s),
            follow_redirects=True,
            headers={"User-Agent": USER_AGENT},
        )
    try:
        if into is not None:
            return _fetch_into(client, url, validators, policy, sleep, into)
        response, body, requests = _get(
            client, url, headers=validators.request_headers(), policy=policy, sleep=sleep
        )
        if response.status_code == 304:
            return FetchResult(url_shown(url), True, validators, requests=requests)
        if response.status_code != 200:
            raise FetchError(f"{url_shown(url)}: HTTP {response.status_code}, not a feed")
        got = Validators.of(response)
        pages = [body]
        digest = hashlib.sha256(body)
        seen = {url}
        next_url = _next_url(paging, url, url, body)
        while next_url:
            if next_url in seen:
                raise FetchError(
                    f"{url_shown(url)}: page link {url_shown(next_url)} repeats an earlier page"
                )
            if len(pages) >= policy.max_pages:
                raise FetchError(f"{url_shown(url)}: more than {policy.max_pages} pages")
            seen.add(next_url)
            response, body, made = _get(client, next_url, headers={}, policy=policy, sleep=sleep)
            requests += made
            if response.status_code != 200:
                raise FetchError(
                    f"{url_shown(next_url)}: HTTP {response.status_code} for a later page"
                )
            pages.append(body)
            digest.update(body)
            next_url = _next_url(paging, next_url, url, body)
        return FetchResult(url_shown(url), False, got, tuple(pages), requests, digest.hexdigest())
    finally:
        if own_client:
            client.close()


def _fetch_into(
    client: httpx.Client,
    url: str,
    validators: Validators,
    policy: FetchPolicy,
    sleep: Callable[[float], None],
    into: Path,
) -> FetchResult:
    """``feed_fetch`` of one page written to the file ``into`` (removed when nothing is kept)."""
    kept = False
    try:
        with open(into, "wb") as handle:
            response, _, requests = _get(
                client,
                url,
                headers=validators.request_headers(),
                policy=policy,
                sleep=sleep,
                into=handle,
            )
        if response.status_code == 304:
            return FetchResult(url_shown(url), True, validators, requests=requests)
        if response.status_code != 200:
            raise FetchError(f"{url_shown(url)}: HTTP {response.status_code}, not a feed")
        digest = hashlib.sha256()
        with open(into, "rb") as handle:
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
        kept = True
        return FetchResult(
            url_shown(url),
            False,
            Validators.of(response),
            requests=requests,
            sha256=digest.hexdigest(),
            path=into,
        )
    finally:
        if not kept:
            into.unlink(missing_ok=True)
