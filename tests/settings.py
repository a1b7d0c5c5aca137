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

from costapp.settings import *  # noqa: E402,F403

# No cached API pages unless a test turns them on: a test's writes are rolled back, not committed,
# so they never change the catalog version, and a page cached by one test would outlive its data.
API_PAGE_CACHE_SECONDS = 0
