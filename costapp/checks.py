"""Start-up checks: a missing SECRET_KEY stops every command that runs the system checks
(runserver, migrate, load_catalog, check) and the WSGI application, with one clear message."""

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

SECRET_KEY_MESSAGE = (
    "SECRET_KEY is not set. Set SECRET_KEY in the environment (see .env.example), or run "
    "`uv run manage.py demo` once: it writes a local .env with a fresh key and debug on."
)


def secret_key_is_set() -> bool:
    if not settings.configured:
        return False
    try:
        return bool(settings.SECRET_KEY)
    except ImproperlyConfigured:  # what reading an empty SECRET_KEY raises
        return False


@checks.register(checks.Tags.security)
def check_secret_key(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """An error when SECRET_KEY is empty."""
    if secret_key_is_set():
        return []
    return [checks.Error(SECRET_KEY_MESSAGE, id="costapp.E001")]


def require_secret_key() -> None:
    """Raise ImproperlyConfigured with the clear message when SECRET_KEY is empty."""
    if not secret_key_is_set():
        raise ImproperlyConfigured(SECRET_KEY_MESSAGE)
