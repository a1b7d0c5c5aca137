"""The production shape, checked by reading: docker-compose.yml, Dockerfile, .env.example.

There is no container engine where the tests run, so these tests parse the files and check that
services, images, commands, health checks and variables fit together.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def command_text(service: dict) -> str:
    command = service.get("command", "")
    return " ".join(command) if isinstance(command, list) else command


def test_compose_has_the_five_services_of_the_production_shape(compose):
    assert set(compose["services"]) == {"db", "redis", "web", "worker", "beat"}


def test_web_worker_and_beat_run_one_image_built_from_the_dockerfile(compose):
    services = compose["services"]
    images = {services[name]["image"] for name in ("web", "worker", "beat")}
    assert len(images) == 1
    for name in ("web", "worker", "beat"):
        assert services[name]["build"] == "."
    assert (ROOT / "Dockerfile").is_file()


def test_every_service_has_a_health_check(compose):
    for name, service in compose["services"].items():
        check = service.get("healthcheck", {})
        assert check.get("test"), f"{name} has no health check"
        assert check.get("interval") and check.get("retries"), name


def test_web_migrates_and_loads_the_catalog_but_never_runs_the_demo(compose):
    command = command_text(compose["services"]["web"])
    assert "manage.py migrate" in command and "manage.py load_catalog --if-empty" in command
    assert "gunicorn costapp.wsgi:application" in command
    assert "demo" not in command
    assert command.index("migrate") < command.index("load_catalog") < command.index("gunicorn")


def test_web_health_check_asks_healthz(compose):
    assert "/healthz" in " ".join(compose["services"]["web"]["healthcheck"]["test"])


def test_exactly_one_beat_and_one_worker_service(compose):
    services = compose["services"]
    beats = [n for n, s in services.items() if re.search(r"\bcelery\b.*\bbeat\b", command_text(s))]
    workers = [
        n for n, s in services.items() if re.search(r"\bcelery\b.*\bworker\b", command_text(s))
    ]
    assert beats == ["beat"] and workers == ["worker"]
    assert services["beat"].get("deploy", {}).get("replicas", 1) == 1
    for name in ("worker", "beat"):
        assert "-A costapp" in command_text(services[name]) or "-A, costapp" in ", ".join(
            services[name]["command"]
        )


def test_redis_keeps_an_append_only_log_and_never_evicts(compose):
    command = command_text(compose["services"]["redis"])
    assert "--appendonly yes" in command
    assert "--maxmemory-policy noeviction" in command


def test_data_lives_in_declared_volumes(compose):
    declared = set(compose["volumes"])
    used = {
        volume.split(":")[0]
        for service in compose["services"].values()
        for volume in service.get("volumes", [])
    }
    assert {"pgdata", "redisdata"} <= used <= declared


def test_app_services_wait_for_healthy_database_and_broker_and_point_at_them(compose):
    services = compose["services"]
    for name in ("web", "worker", "beat"):
        service = services[name]
        assert service["depends_on"] == {
            "db": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }
        environment = service["environment"]
        assert re.match(r"postgres://\w+:.+@db:5432/\w+$", environment["DATABASE_URL"])
        assert environment["REDIS_URL"].startswith("redis://redis:6379/")
    db = services["db"]["environment"]
    assert db["POSTGRES_DB"] in services["web"]["environment"]["DATABASE_URL"]


def test_every_variable_the_compose_file_reads_is_documented(compose):
    text = (ROOT / "docker-compose.yml").read_text()
    example = (ROOT / ".env.example").read_text()
    for name in set(re.findall(r"\$\{(\w+)", text)):
        assert re.search(rf"^#?\s*{name}=", example, re.M), name


def test_every_setting_read_from_the_environment_is_in_env_example_and_readme():
    settings = (ROOT / "costapp" / "settings.py").read_text()
    names = set(re.findall(r"env(?:\.\w+)?\(\s*\"([A-Z_]+)\"", settings))
    assert {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL"} <= names
    example = (ROOT / ".env.example").read_text()
    readme = (ROOT / "README.md").read_text()
    for name in names:
        assert re.search(rf"^#?\s*{name}=", example, re.M), f"{name} missing from .env.example"
        assert f"`{name}`" in readme, f"{name} missing from README.md"


def test_dockerfile_installs_from_the_lock_and_serves_with_gunicorn():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "uv sync --frozen --no-dev" in dockerfile
    assert "collectstatic" in dockerfile
    cmd = re.search(r"^CMD (.+)$", dockerfile, re.M).group(1)
    assert "gunicorn" in cmd and "costapp.wsgi:application" in cmd
    assert re.search(r"^USER (?!root)\w+", dockerfile, re.M)


def test_the_commands_the_containers_run_exist():
    # The WSGI application and the Celery app named in the compose file import.
    code = "import costapp.wsgi, costapp.celery; print(costapp.celery.app.main)"
    env = production_env()
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "costapp"
    for name in ("migrate", "load_catalog"):
        result = subprocess.run(
            [sys.executable, "manage.py", "help", name], cwd=ROOT, env=env, capture_output=True
        )
        assert result.returncode == 0, shlex.join(["manage.py", "help", name])


def production_env(**extra: str) -> dict[str, str]:
    local_only = {"DEBUG", "SECURE_SSL_REDIRECT", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in local_only}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "costapp.settings",
            "SECRET_KEY": "p" + "k3Y-" * 20,
            "DEBUG": "false",
            "ALLOWED_HOSTS": "tco.example.com",
            "ENV_FILE": "",
        }
    )
    env.update(extra)
    return env


def test_production_settings_pass_the_deployment_check():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_missing_secret_key_outside_debug_is_a_clear_start_up_error():
    env = production_env()
    env.pop("SECRET_KEY")
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


APP_REQUESTS = """
from django.test import Client
import costapp.wsgi  # the application gunicorn serves, with its start-up checks
client = Client(HTTP_HOST="tco.example.com")
health = client.get("/healthz")
plain = client.get("/prices/")
secure = client.get("/prices/", secure=True)
print(health.status_code, health.json()["status"])
print(plain.status_code, plain["Location"])
print(secure.status_code, secure["Location"], secure["Strict-Transport-Security"])
print(secure["X-Frame-Options"], secure["X-Content-Type-Options"])
"""


def test_the_configured_production_app_serves_health_over_http_and_everything_else_over_https(
    tmp_path,
):
    env = production_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", REDIS_URL="")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    out = subprocess.run(
        [sys.executable, "-c", APP_REQUESTS], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    health, plain, secure, headers = out.stdout.splitlines()
    assert health == "200 ok"
    assert plain == "301 https://tco.example.com/prices/"
    status, location, hsts = secure.split(" ", 2)
    assert (status, location) == ("302", "/login/?next=/prices/")
    assert hsts == "max-age=31536000; includeSubDomains"
    assert headers == "DENY nosniff"


def test_the_wsgi_application_refuses_to_start_without_a_secret_key(tmp_path):
    env = production_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    env.pop("SECRET_KEY")
    out = subprocess.run(
        [sys.executable, "-c", "import costapp.wsgi"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "SECRET_KEY is not set" in out.stderr


@pytest.mark.long
def test_after_the_quick_start_every_command_runs_with_nothing_exported(tmp_path):
    # `demo` on a fresh checkout writes the local .env (here in a temporary folder, not the
    # source tree), then the other commands read it: nothing else is exported.
    local = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    local["ENV_FILE"] = str(tmp_path / ".env")
    local["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"

    def manage(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=local,
            capture_output=True,
            text=True,
        )

    first = manage("demo", "--no-serve")
    assert first.returncode == 0, first.stderr
    assert "wrote" in first.stdout and "demo user: demo" in first.stdout
    written = dict(
        line.split("=", 1)
        for line in (tmp_path / ".env").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert written["DEBUG"] == "true" and len(written["SECRET_KEY"]) >= 50
    for args in (
        ("load_catalog",),
        ("check",),
        ("simulate", "tests/tco/scenarios/h100-fleet-buy-vs-rent.json"),
    ):
        result = manage(*args)
        assert result.returncode == 0, (args, result.stderr)
    # A second demo keeps the key it wrote.
    assert manage("demo", "--no-serve").returncode == 0
    assert f"SECRET_KEY={written['SECRET_KEY']}" in (tmp_path / ".env").read_text()
