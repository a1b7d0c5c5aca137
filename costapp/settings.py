"""Settings for GPU TCO, configured from the environment.

With nothing set the app runs on the embedded default: SQLite in the project folder and Celery
tasks run in-process. ``DATABASE_URL`` switches to PostgreSQL, ``REDIS_URL`` to a real broker and
workers. Every variable is listed in README.md and .env.example.
"""

import ipaddress
import secrets
from datetime import timedelta
from pathlib import Path

import environ

from hardware.refresh.beat import price_source_settings, refresh_beat_schedule

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

# Local settings: a git-ignored `.env` in the project folder (`manage.py demo` writes one with a
# fresh key and debug on). Variables already in the environment win. ENV_FILE names another
# file; empty reads none.
ENV_FILE = env.str("ENV_FILE", default=str(BASE_DIR / ".env"))
if ENV_FILE and Path(ENV_FILE).is_file():
    environ.Env.read_env(ENV_FILE)

DEBUG = env.bool("DEBUG", default=False)

# Required outside debug. A missing key is not an import error, so that commands that need no
# key (simulate, demo, which writes one) run on a fresh checkout; everything that serves or
# changes data stops at start-up with a clear message (costapp.checks, costapp.wsgi).
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY and DEBUG:
    # Local development only: a fresh key for this process (sessions end when it stops).
    SECRET_KEY = secrets.token_urlsafe(50)

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.forms",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "knox",
    "simple_history",
    "accounts",
    "hardware",
    "costapp",
]

MIDDLEWARE = [
    # X-Forwarded-Proto heard from the proxies TRUSTED_PROXIES names only (costapp/proxies.py).
    "costapp.proxies.ForwardedProtoMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A view meeting a database or Redis error answers 503 with Retry-After (costapp/faults.py).
    "costapp.faults.ServiceFaultMiddleware",
    # Under /api/: a body over the limit 413, NUL in the path or the query 400, every 4xx in the
    # API's error format.
    "costapp.api.guards.ApiGuardMiddleware",
    # Scripts from the site alone, no inline script (costapp/csp.py).
    "costapp.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "costapp.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "costapp.context_processors.user_role",
            ],
        },
    },
]

# Widgets render through TEMPLATES, so templates/ may override one (the admin's date and time
# inputs get a label each: templates/admin/widgets/split_datetime.html).
FORM_RENDERER = "django.forms.renderers.TemplatesSetting"

WSGI_APPLICATION = "costapp.wsgi.application"

# Database: SQLite in the project folder unless DATABASE_URL says otherwise.
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
# Connections are kept (a worker's task or a request does not pay for a new PostgreSQL backend),
# and checked before reuse.
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
# The embedded default writes to SQLite from more than one thread (requests, and the background
# thread where a question's run goes on): a transaction takes the write lock when it begins,
# waiting its turn up to the timeout [s], so two never both read and then each wait for the other
# to write ("database is locked").
SQLITE_OPTIONS = {"transaction_mode": "IMMEDIATE", "timeout": 20}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env.bool("STATIC_MANIFEST", default=False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# Without collectstatic (the embedded default), serve straight from the finders.
WHITENOISE_USE_FINDERS = env.bool("WHITENOISE_USE_FINDERS", default=True)
WHITENOISE_AUTOREFRESH = DEBUG

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Password guessing (accounts/guessing.py): past this many failed sign-ins in the window, for one
# account or from one address, every attempt is refused (429, Retry-After) until the window passes.
AUTHENTICATION_BACKENDS = ["accounts.backends.LimitedModelBackend"]
SIGN_IN_FAILURES_PER_ACCOUNT = env.int("SIGN_IN_FAILURES_PER_ACCOUNT", default=10)
SIGN_IN_FAILURES_PER_ADDRESS = env.int("SIGN_IN_FAILURES_PER_ADDRESS", default=50)
SIGN_IN_WINDOW_SECONDS = env.int("SIGN_IN_WINDOW_SECONDS", default=15 * 60)

# Security: production settings pass `manage.py check --deploy`.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The addresses (or networks) of the proxies whose X-Forwarded-Proto is believed; the header is
# dropped from every other client (costapp/proxies.py). Default: a proxy on this host.
TRUSTED_PROXIES = [  # each checked here: a typo stops the start, not a request
    str(ipaddress.ip_network(entry, strict=False))
    for entry in env.list("TRUSTED_PROXIES", default=["127.0.0.1", "::1"])
]
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# Joining the browsers' HSTS preload list is the operator's decision (SECURE_HSTS_PRELOAD), not a
# default: the deployment check's reminder about it is silenced.
SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Celery: a real broker when REDIS_URL is set, otherwise tasks run in-process.
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_BROKER_URL = REDIS_URL or "memory://"
# Task results can travel back through Redis (runs keep theirs in the database); none in-process.
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
# In-process, a run a request does not wait for (a question's) runs in the web process's background
# thread, not in the request (costapp.runs.background). The tests turn it off (tests/settings.py):
# their rows are never committed, so a thread with a connection of its own would not see them.
TASKS_IN_BACKGROUND = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"

# Price refreshes: one entry per source; an empty URL turns the source off (no beat entry).
PRICE_REFRESH_INTERVAL_MINUTES = env.int("PRICE_REFRESH_INTERVAL_MINUTES", default=24 * 60)
PRICE_SOURCES = price_source_settings(env, default_interval_minutes=PRICE_REFRESH_INTERVAL_MINUTES)
PRICE_FETCH_TIMEOUT_SECONDS = env.float("PRICE_FETCH_TIMEOUT_SECONDS", default=30.0)
PRICE_FETCH_RETRIES = env.int("PRICE_FETCH_RETRIES", default=3)
# The lease on a source's refresh lock: its holder renews it while it works, so a dead holder's
# lock lapses after this long (hardware.refresh.lease).
PRICE_REFRESH_LEASE_SECONDS = env.int("PRICE_REFRESH_LEASE_SECONDS", default=120)
# The Celery queue of the scheduled refreshes (empty: the default queue).
PRICE_REFRESH_QUEUE = env.str("PRICE_REFRESH_QUEUE", default="")
try:
    CELERY_BEAT_SCHEDULE: dict = refresh_beat_schedule(PRICE_SOURCES, queue=PRICE_REFRESH_QUEUE)
except ValueError as exc:  # a bad source setting stops start-up, naming the source and field
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(str(exc)) from None

# A message a worker took and did not acknowledge (it died) is handed out again after the
# visibility timeout; every task is stopped well before that (soft, then hard time limit).
CELERY_VISIBILITY_TIMEOUT_S = env.int("CELERY_VISIBILITY_TIMEOUT_S", default=900)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_VISIBILITY_TIMEOUT_S,
    # workers look for such messages every few seconds (kombu's default sweep is ~100 s apart)
    "unacked_restore_interval": max(1, min(10, CELERY_VISIBILITY_TIMEOUT_S // 3)),
    "unacked_restore_throttle": 1,
}
CELERY_TASK_TIME_LIMIT = CELERY_VISIBILITY_TIMEOUT_S * 2 // 3
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_VISIBILITY_TIMEOUT_S // 2
# Workers keep their database connection from task to task (costapp.celery closes it when
# CONN_MAX_AGE says so or when it broke); Celery itself then closes it only every this many tasks.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
# Runs: Monte Carlo blocks (of 1 000 paths) per block task; a run with no sign of life for this
# long is requeued by beat (its worker died or its messages were lost).
RUN_BLOCKS_PER_TASK = env.int("RUN_BLOCKS_PER_TASK", default=25)
# A live run lands a unit every few seconds (each unit's task writes its heartbeat), so a minute
# without one means its worker was lost; a unit slower than that is computed twice at most (the
# second landing changes nothing).
RUN_STALE_AFTER_S = env.int("RUN_STALE_AFTER_S", default=60)
# How often beat looks for such runs [s].
RUN_STALE_CHECK_S = env.int("RUN_STALE_CHECK_S", default=15)
# A worker's database session waits this long for a lock before giving up, the task then tried
# again like one that met a lost broker [s]; and a transaction left open this long by a worker
# that froze (a paused container, a stalled VM) is ended by PostgreSQL, its locks released [s].
WORKER_LOCK_TIMEOUT_S = env.float("WORKER_LOCK_TIMEOUT_S", default=5.0)
WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S = env.float(
    "WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S", default=60.0
)
# How long an Idempotency-Key on the start of a run answers with the run it first started [h].
RUN_IDEMPOTENCY_HOURS = env.int("RUN_IDEMPOTENCY_HOURS", default=24)
# /healthz names the active runs with no sign of life for this long while workers answer [s].
RUN_STALL_REPORT_S = env.int("RUN_STALL_REPORT_S", default=90)
# A task whose pool process died (killed, out of memory) goes back to the queue at once.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# The Celery queue of every task of the run pipeline, beat's requeue included (empty: the default
# queue); the services read it when they publish, so a worker set can be given runs of its own.
RUN_QUEUE = env.str("RUN_QUEUE", default="")
# Beat fails the price refreshes that stopped without finishing once their lease lapsed.
CELERY_BEAT_SCHEDULE["price-refresh-sweep"] = {
    "task": "hardware.refresh_runs_sweep",
    "schedule": 60.0,
    "options": {"expires": 60.0, **({"queue": PRICE_REFRESH_QUEUE} if PRICE_REFRESH_QUEUE else {})},
}
# The budget watch: every watched plan priced again once a day (catalog changes no refresh
# made), and the events of runs that have ended since settled every minute.
CELERY_BEAT_SCHEDULE["watch-reprice"] = {
    "task": "costapp.watch_reprice",
    "schedule": env.float("WATCH_REPRICE_S", default=86_400.0),
}
CELERY_BEAT_SCHEDULE["watch-settle"] = {"task": "costapp.watch_settle", "schedule": 60.0}
# E-mail (the budget watch's events), through Django's mail settings: written to the log by
# default (the console backend); SMTP with EMAIL_HOST and the rest; the file backend writes each
# message into EMAIL_FILE_PATH.
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_FILE_PATH = env.str("EMAIL_FILE_PATH", default=str(BASE_DIR / "sent-mail"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="GPU TCO <gpu-tco@localhost>")
CELERY_BEAT_SCHEDULE["runs-requeue-stale"] = {
    "task": "costapp.runs_requeue_stale",
    "schedule": float(RUN_STALE_CHECK_S),
    "options": {"queue": RUN_QUEUE} if RUN_QUEUE else {},
}

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # An unknown query parameter on a list is a 400 naming it.
    "DEFAULT_FILTER_BACKENDS": ["hardware.filtersets.StrictFilterBackend"],
    # JSON only, read strictly (duplicate keys, NaN, depth, NUL and lone surrogates refused).
    "DEFAULT_PARSER_CLASSES": ["costapp.api.parsers.StrictJSONParser"],
    # Token first: an anonymous request gets 401 with `WWW-Authenticate: Token`.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "costapp.api.pagination.PageSizePagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "costapp.api.errors.exception_handler",
    "DATETIME_FORMAT": "iso-8601",
    "COERCE_DECIMAL_TO_STRING": True,
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttling.TokenRateThrottle"],
}
# Requests allowed per token (per user for a session, per address when anonymous).
API_THROTTLE_RATE = env.str("API_THROTTLE_RATE", default="1200/minute")

# The cache holds the throttles' counters and cached API pages: shared through Redis by every
# process when REDIS_URL is set, per process otherwise.
CACHES = {
    "default": (
        {
            "BACKEND": "costapp.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "gputco-cache",
            # A Redis that hangs costs a request two seconds, not a worker forever.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Seconds a rendered page of `prices/current/` is kept in the cache (0: none). A write to the
# catalog makes every cached page obsolete at once (hardware/catalog_version.py); this only bounds
# the memory. Off without Redis: a per-process cache would not see another process's writes.
API_PAGE_CACHE_SECONDS = env.int("API_PAGE_CACHE_SECONDS", default=300 if REDIS_URL else 0)

SPECTACULAR_SETTINGS = {
    "TITLE": "GPU TCO API",
    "DESCRIPTION": "Catalog, scenarios and runs for GPU cost of ownership.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Requests and responses differ (related objects: a slug in, a brief object out).
    "COMPONENT_SPLIT_REQUEST": True,
    # The error envelope on every operation; the scenario and result documents typed.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "accounts.schema.error_responses_hook",
        "costapp.openapi.documents_hook",
    ],
    # Swagger UI and Redoc from the project's own static files (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a `status`: each choice set gets its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "costapp.models.SimulationRun.Status",
        "QuoteStatusEnum": "hardware.models.QuoteStatus",
        "RefreshStatusEnum": "hardware.models.RefreshStatus",
        "UnmappedNameKindEnum": "hardware.models.NameKind",
        "ProviderKindEnum": "hardware.models.ProviderKind",
    },
}

API_TOKEN_LIFETIME = timedelta(days=env.int("API_TOKEN_DAYS", default=90))
RUN_LINK_LIFETIME = timedelta(days=env.int("RUN_LINK_DAYS", default=30))
"""How long a read-only link to a run (``/shared/<key>/``) works after it was made."""
REST_KNOX = {
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_TTL": API_TOKEN_LIFETIME,
    "AUTO_REFRESH": False,
}

# Price refreshes (hardware/refresh/pipeline.py): a feed is held for review when more than this share of
# the provider's current prices would vanish, or when a price would move by more than this factor
# (up or down); a provider first seen in a feed gets its kind here (slug=kind,...) or gpu-cloud.
PRICE_REFRESH_MAX_VANISHED_SHARE = env.float("PRICE_REFRESH_MAX_VANISHED_SHARE", default=0.2)
PRICE_REFRESH_MAX_PRICE_FACTOR = env.float("PRICE_REFRESH_MAX_PRICE_FACTOR", default=3.0)
# A feed adding more new offers than this share of the provider's current offers, or than this
# many, is held for review.
PRICE_REFRESH_MAX_NEW_SHARE = env.float("PRICE_REFRESH_MAX_NEW_SHARE", default=0.25)
PRICE_REFRESH_MAX_NEW_OFFERS = env.int("PRICE_REFRESH_MAX_NEW_OFFERS", default=500)
PRICE_REFRESH_PROVIDER_KINDS: dict[str, str] = env.dict("PRICE_REFRESH_PROVIDER_KINDS", default={})

# A price whose source stated it more than this many days ago is stale (pages, API, warnings).
PRICE_STALE_DAYS = env.int("PRICE_STALE_DAYS", default=30)
# A sourced assumption (hardware.models.Assumption) stated longer ago than this is stale.
ASSUMPTION_STALE_DAYS = env.int("ASSUMPTION_STALE_DAYS", default=730)
# The discount rate (per year) of every new plan: those /ask/ builds and a new scenario in the
# builder, shown on both forms.
DISCOUNT_RATE = env.float("DISCOUNT_RATE", default=0.08)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # httpx logs every request's URL at INFO, query included (a feed URL may carry an API key).
    "loggers": {"httpx": {"level": "WARNING"}},
}
