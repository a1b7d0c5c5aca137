from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "accounts and roles"

    def ready(self) -> None:
        from . import (
            schema,  # noqa: F401  (registers the token scheme with drf-spectacular)
            signals,
        )

        signals.connect()
