"""``python manage.py demo``: set up the embedded default and serve it on 127.0.0.1:8000."""

import os
import secrets
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.services import demo_role_users_create
from costapp.checks import SECRET_KEY_MESSAGE
from hardware.catalog_load import catalog_load

DEMO_USERNAME = "demo"


class Command(BaseCommand):
    help = (
        "Migrate, load the catalog, create the demo user and one user per role with fresh random "
        "passwords (printed once), then serve on http://127.0.0.1:8000."
    )

    # Runs before a SECRET_KEY exists: it writes the local .env that provides one.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-serve", action="store_true", help="do everything but serve")
        parser.add_argument("--addrport", default="127.0.0.1:8000", help="where to serve")

    def handle(self, *args: Any, **options: Any) -> None:
        if not os.environ.get("SECRET_KEY") and not Path(settings.ENV_FILE or "").is_file():
            if not settings.ENV_FILE:
                raise CommandError(SECRET_KEY_MESSAGE)
            self._write_local_env(Path(settings.ENV_FILE))
            # Start again so that the settings are read with the new .env.
            os.execv(sys.executable, [sys.executable, *sys.argv])
        if not options["no_serve"] and not settings.DEBUG:
            raise CommandError(
                "demo serves the local embedded default and needs DEBUG=true (in .env or the "
                "environment); production runs under gunicorn (README, Production shape)."
            )
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("database migrated")
        self.stdout.write("\n".join(catalog_load().lines()))
        password = self._demo_user()
        self._demo_scenarios()
        self.stdout.write(
            self.style.SUCCESS(
                f"demo user: {DEMO_USERNAME}  password: {password}  (shown once; run demo again for a new one)"
            )
        )
        role_passwords = demo_role_users_create(password_factory=lambda: secrets.token_urlsafe(12))
        for username, role_password in role_passwords.items():
            self.stdout.write(f"role user: {username}  password: {role_password}  (shown once)")
        if options["no_serve"]:
            return
        self.stdout.write(f"serving on http://{options['addrport']}/ (Ctrl-C stops)")
        call_command("runserver", options["addrport"], use_reloader=False)

    def _write_local_env(self, path: Path) -> None:
        """A git-ignored .env for the embedded default: a fresh random key and debug on."""
        path.write_text(
            "# Local settings of the embedded default, written by `manage.py demo`.\n"
            "# Never used in production (the image does not contain it).\n"
            f"SECRET_KEY={secrets.token_urlsafe(50)}\n"
            "DEBUG=true\n"
        )
        self.stdout.write(f"wrote {path} (a fresh SECRET_KEY, DEBUG=true)")

    def _demo_scenarios(self) -> None:
        """The example scenarios, shared by the demo user and run once (costapp.demo_scenarios)."""
        from costapp.demo_scenarios import demo_scenarios_load

        user = get_user_model().objects.get(username=DEMO_USERNAME)
        created, started = demo_scenarios_load(user=user)
        self.stdout.write(f"example scenarios: {created} added, {started} run")

    def _demo_user(self) -> str:
        """Create or refresh the demo user; return its new random password."""
        password = secrets.token_urlsafe(12)
        user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        user.is_staff = True
        user.is_superuser = True
        user.set_password(password)
        user.save()
        return password
