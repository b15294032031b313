"""Castellan settings, read from the environment.

Every value a deployment changes comes from an environment variable; the defaults give a newcomer a
working app on an embedded SQLite file with nothing else installed.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
import sentry_sdk
from django.core.exceptions import ImproperlyConfigured

from config.environment import env_bool, env_int, env_near_threshold, env_positive_int, env_rate

BASE_DIR = Path(__file__).resolve().parent.parent


# A fixed key for a laptop (`make run` sets DEBUG=true); with DEBUG off it stops the app.
DEVELOPMENT_SECRET_KEY = "django-insecure-castellan-development-key-change-me"

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "").strip()
if not DEBUG and SECRET_KEY in {"", DEVELOPMENT_SECRET_KEY}:
    # Signed sessions, CSRF tokens and password-reset links all rest on this key: running on a
    # public one would let anyone forge them, so refuse to start rather than warn.
    raise ImproperlyConfigured(
        "SECRET_KEY is missing or is the public development key, and DEBUG is off. Set SECRET_KEY "
        "to a long random value, e.g. the output of: python -c 'import secrets; "
        "print(secrets.token_urlsafe(50))' (or set DEBUG=true on a development machine)."
    )
SECRET_KEY = SECRET_KEY or DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()]
if DEBUG and not ALLOWED_HOSTS:
    ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    # First, so its `createsuperuser` (Django's, a new name held to every login's rule:
    # dedup.user_names) is the one manage.py finds, not django.contrib.auth's.
    "dedup",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "rest_framework_api_key",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "django_tasks",
    "django_tasks_db",
    "axes",
    "palace",
    "review",
    "api",
]

MIDDLEWARE = [
    # First, so every request (redirects and static files too) gets an id, a log line and metrics.
    "config.observability.RequestMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files are answered here, before sessions and the database are touched.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Bad input is refused before sessions or CSRF read the request.
    "config.middleware.EdgeMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A changelist's lookup or selection that fails in its query is a message, not a 500.
    "config.admin_errors.AdminChangelistErrors",
    # An htmx request whose session ended is sent to the login page as a whole (HX-Redirect).
    "review.middleware.SessionEndedMiddleware",
    # Last, as django-axes requires: answers a locked-out login with 429.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
                "review.context_processors.console",
            ],
        },
    },
]

# Seconds a request waits for another's lock (a room's writes, a row; SQLite: the write lock),
# then 503 `database_busy` (config.middleware): unbounded, a burst of slow writes into one room
# held every web thread for minutes (the concurrency trial). Lock waits only, not work.
LOCK_TIMEOUT = env_positive_int("CASTELLAN_LOCK_TIMEOUT", 20)

# Seconds the MCP process (`manage.py mcp_server --transport http`, api/mcp_server/protocol.py)
# gives a request's head to arrive whole, from its first bytes, and its body, from its head: as
# gunicorn's GUNICORN_HEAD_TIMEOUT and GUNICORN_BODY_TIMEOUT for `web` (config/http_deadlines.py),
# with the same defaults; its own names, as its address is (MCP_HOST, MCP_PORT): it is started,
# and tuned, apart from `web`.
MCP_HEAD_TIMEOUT = env_positive_int("MCP_HEAD_TIMEOUT", 10)
MCP_BODY_TIMEOUT = env_positive_int("MCP_BODY_TIMEOUT", 30)

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
        # A connection the database dropped is replaced at the next request, not used and failed.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's SQLite backend, with the writers of one process queued fairly (config/sqlite3).
    DATABASES["default"]["ENGINE"] = "config.sqlite3"
    DATABASES["default"]["OPTIONS"] = {
        # IMMEDIATE takes the write lock when a transaction starts, so two writers of the same
        # text are serialised instead of both reading "no copy yet". It applies to every atomic
        # block, so reads open none (a test holds it); a lock held past `timeout` answers 503
        # `database_busy` (config.middleware), never 500.
        "transaction_mode": "IMMEDIATE",
        "timeout": LOCK_TIMEOUT,
        # Memory-mapped reads: a page the OS already caches is read in place, not copied in by a
        # read() call per page. An entity lookup's hundred-odd index searches land on leaf pages
        # SQLite's own small cache does not hold: 0.74 ms instead of 1.28 at 1,000,000 entities
        # (README, Entities). It maps address space, not memory (the pages are the OS cache's);
        # SQLite caps it at 2 GiB and reads the rest of a bigger file as before. 0 turns it off.
        "init_command": (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            f"PRAGMA mmap_size={env_int('SQLITE_MMAP_SIZE', 2**31, minimum=0)};"
        ),
    }

elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    options = DATABASES["default"].setdefault("OPTIONS", {})  # a URL's own `options` win
    options["options"] = f"-c lock_timeout={LOCK_TIMEOUT}s {options.get('options', '')}".strip()

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The cache holds the login failures (django-axes) and the API's write throttles, so it must be
# shared by every web process: Redis when REDIS_URL is set, else each process's own memory.
REDIS_URL = os.environ.get("REDIS_URL", "").strip()
CACHES: dict[str, dict[str, Any]] = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Login throttling for the console and the admin (django-axes): after
# CASTELLAN_LOGIN_FAILURE_LIMIT wrong passwords for one username from one address, that pair is
# refused (429) for CASTELLAN_LOGIN_COOLOFF_MINUTES, even with the right password.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# In Redis when there is one; otherwise in the database, since a per-process memory cache would
# let each web process count its own failures (django-axes refuses it: check axes.W001).
AXES_HANDLER = (
    "axes.handlers.cache.AxesCacheHandler"
    if REDIS_URL
    else "axes.handlers.database.AxesDatabaseHandler"
)
AXES_FAILURE_LIMIT = env_positive_int("CASTELLAN_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_positive_int("CASTELLAN_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

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
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # In production `collectstatic` writes hashed, compressed copies that WhiteNoise serves with
    # a far-future Cache-Control; in development the files are served as they are from the apps.
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

LOGIN_URL = "review:login"
# An htmx POST with a stale token (a login in another tab) reloads its page (review.middleware).
CSRF_FAILURE_VIEW = "review.middleware.csrf_failure"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "review:login"

# A checkpoint carries several items, each up to CASTELLAN_MAX_CONTENT_BYTES.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_positive_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 16 * 1024 * 1024)

# Production hardening, on whenever DEBUG is off; `manage.py check --deploy` stays clean.
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    # A load balancer probes the health checks over plain HTTP, behind the TLS proxy.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True

REST_FRAMEWORK: dict[str, Any] = {
    # Keys first: an anonymous request is answered 401 with a WWW-Authenticate header. Agent keys
    # (Token or Bearer), then people's DRF tokens, then sessions.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.AgentKeyAuthentication",
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.ScopedAccess"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.JsonOnlyNegotiation",
    "DEFAULT_SCHEMA_CLASS": "api.schema.CastellanAutoSchema",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Writes (every method but GET, HEAD, OPTIONS) per authenticated identity, in the cache: over
    # the rate, 429 `throttled` with Retry-After. A view may name its own `throttle_scope`.
    "DEFAULT_THROTTLE_CLASSES": ["api.throttles.WriteRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"writes": env_rate("CASTELLAN_WRITE_THROTTLE_RATE", "1200/min")},
}
# JSON only, with DEBUG on too (no browsable API): the API answers a developer as it will answer
# in production (406 `not_acceptable` for HTML); /api/docs/ is the page to explore it in.

SPECTACULAR_SETTINGS = {
    "TITLE": "Castellan API",
    "DESCRIPTION": "Write memories into a palace and name the entities they mention. Exact copies "
    "are not stored twice, variants are stored and linked with their evidence, and names converge "
    "only on safe evidence.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # One enum each: the error body's `code` (api/error_codes.py), a run's status (list, detail).
    "ENUM_NAME_OVERRIDES": {
        "ErrorCodeEnum": "api.error_codes.ERROR_CODE_CHOICES",
        "SweepStatusEnum": "review.models.SweepRun.Status",
    },
}

TASKS: dict[str, dict[str, Any]] = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

CASTELLAN_LOG_FORMAT = os.environ.get("CASTELLAN_LOG_FORMAT", "plain").strip().lower() or "plain"
if CASTELLAN_LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(
        f"CASTELLAN_LOG_FORMAT must be plain or json, not {CASTELLAN_LOG_FORMAT!r}."
    )
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "config.observability.RequestIdFilter"},
        "refusals": {"()": "config.observability.RefusalFilter"},
        "expected_refusals": {"()": "config.observability.ExpectedRefusalFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        # One JSON object per line: the record's fields and whatever it was given as `extra`.
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": CASTELLAN_LOG_FORMAT,
            "filters": ["request_id", "refusals"],
        }
    },
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "castellan": {"level": os.environ.get("CASTELLAN_LOG_LEVEL", "INFO"), "propagate": True},
        # Also on the logger itself, so a disallowed host is a warning before any handler sees
        # it: Sentry's logging integration (which ignores django.request, not django.security)
        # would report it as an error, and a request to a wrong host is a client's mistake.
        "django.security.DisallowedHost": {"filters": ["refusals"]},
        # Not Django's own console handler too (DEBUG only): the records reach ours at the root,
        # and each INFO line (`runserver`'s "Watching for file changes") was written twice.
        "django": {"handlers": []},
        # The API's expected refusals (409 `nothing_to_apply`...) are the request's INFO line.
        "django.request": {"filters": ["expected_refusals"]},
    },
}

# Deduplication. Read at each write (not cached at import), so tests and operators can change them.
CASTELLAN_DEDUP_ENABLED = env_bool("CASTELLAN_DEDUP_ENABLED", True)
CASTELLAN_DEDUP_NEAR_THRESHOLD = env_near_threshold("CASTELLAN_DEDUP_NEAR_THRESHOLD", 0.9)
CASTELLAN_DEDUP_ENTITY_FUZZY = env_bool("CASTELLAN_DEDUP_ENTITY_FUZZY", True)
CASTELLAN_MAX_CONTENT_BYTES = env_positive_int("CASTELLAN_MAX_CONTENT_BYTES", 1024 * 1024)

# Who may read /metrics (config/metrics.py): `Authorization: Bearer <token>`; unset, nobody
# unless DEBUG is on.
CASTELLAN_METRICS_TOKEN = os.environ.get("CASTELLAN_METRICS_TOKEN", "").strip()

# Error reporting, only when a DSN is given (sentry-sdk finds the Django integration itself).
# No personal data is sent: no user names, cookies or request bodies.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "").strip()
if SENTRY_DSN:
    sentry_sdk.init(
        dsn=SENTRY_DSN,
        environment=os.environ.get("SENTRY_ENVIRONMENT", "").strip() or None,
        traces_sample_rate=float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "") or 0),
        send_default_pii=False,
    )
