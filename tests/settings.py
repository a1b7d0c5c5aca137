"""Settings for the test run: the project's settings with a throwaway key for this process.

The test client and the browser tests talk plain HTTP to 127.0.0.1, so the HTTPS redirect (on by
default outside debug) is turned off here, as it would be behind a TLS-terminating proxy.
"""

import os
import secrets

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
# The tests set their environment themselves: no local .env is read.
os.environ.setdefault("ENV_FILE", "")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")


def _worker_redis_url(url: str, worker: str) -> str:
    """Under pytest-xdist every worker process has a test database of its own (pytest-django
    names it ``test_<name>_gw<n>``); it gets a Redis database of its own too, ``REDIS_URL``'s
    number minus its index (mod 16), so no worker reads another's queue, cache or block results
    (their run ids repeat)."""
    from urllib.parse import urlsplit, urlunsplit

    if not url or not worker.startswith("gw"):
        return url
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(base - int(worker[2:])) % 16}"))


_redis_url = _worker_redis_url(
    os.environ.get("REDIS_URL", ""), os.environ.get("PYTEST_XDIST_WORKER", "")
)
if _redis_url:
    os.environ["REDIS_URL"] = _redis_url

from costapp.settings import *  # noqa: E402,F403

# No cached API pages unless a test turns them on: a test's writes are rolled back, not committed,
# so they never change the catalog version, and a page cached by one test would outlive its data.
API_PAGE_CACHE_SECONDS = 0

# A test's rows are rolled back, never committed: the embedded default's background thread, with a
# database connection of its own, would not see them. The runs a request hands to it run in the
# request instead, unless a test of that thread (on a committed database) turns it back on.
TASKS_IN_BACKGROUND = False

# The tests' window into a merge under way (costapp.runs.merging.merge_pause_point): a worker
# started with RUN_MERGE_PAUSE_FILE pauses the first merge that finds that file.
RUN_MERGE_PAUSE_FILE = os.environ.get("RUN_MERGE_PAUSE_FILE", "")
RUN_MERGE_PAUSE_S = float(os.environ.get("RUN_MERGE_PAUSE_S", "60"))
# ... and RUN_BLOCK_PAUSE_FILE the first block task that finds it, its run's row locked
# (costapp.runs.merging.block_pause_point).
RUN_BLOCK_PAUSE_FILE = os.environ.get("RUN_BLOCK_PAUSE_FILE", "")
RUN_BLOCK_PAUSE_S = float(os.environ.get("RUN_BLOCK_PAUSE_S", "60"))
