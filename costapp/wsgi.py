"""WSGI entry point (gunicorn costapp.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "costapp.settings")

application = get_wsgi_application()

from costapp.checks import require_secret_key  # noqa: E402 (needs the app registry)

require_secret_key()
