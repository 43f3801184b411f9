"""Settings of ibweb, all from the environment.

The embedded default (``make run``): SQLite, in-memory channel layer, Celery
eager, the engine inside the web process, anonymous read-only access. Setting
``DATABASE_URL`` and ``REDIS_URL`` switches to PostgreSQL, channels-redis, a
Redis cache and real Celery workers; ``IBWEB_ENV=production`` hardens the rest.
"""

import os
import re
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from . import env
from .http.proxies import trusted_proxies

BASE_DIR = Path(__file__).resolve().parent.parent
#: Created at start when missing (issue 35: ``make run`` stopped with "unable to open database file").
VAR_DIR = env.directory("IBWEB_VAR_DIR", BASE_DIR / "var")

IBWEB_ENV = env.text("IBWEB_ENV", "development")
if IBWEB_ENV not in ("development", "production"):
    raise ImproperlyConfigured(f"IBWEB_ENV={IBWEB_ENV!r}: use 'development' or 'production'")
PRODUCTION = IBWEB_ENV == "production"

SECRET_KEY = env.text("SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when IBWEB_ENV=production")
    SECRET_KEY = "development-only-insecure-key-never-use-in-production-0123456789"
#: Only when asked for (IBWEB_DEBUG=1): debug pages show settings and code to whoever triggers an error.
DEBUG = env.flag("IBWEB_DEBUG", False)
ALLOWED_HOSTS = env.listing("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.listing("CSRF_TRUSTED_ORIGINS", [])

#: Anonymous visitors may view dashboards and feeds (read-only).
IBWEB_PUBLIC_READ = env.flag("IBWEB_PUBLIC_READ", not PRODUCTION)
#: Run the engine loop inside the web process (off when ``run_engine`` processes do it).
IBWEB_ENGINE_EMBEDDED = env.flag("IBWEB_ENGINE_EMBEDDED", True)
#: Engine processes on one Redis beat this often; one silent for three beats is gone (ibweb.live.engine.share).
IBWEB_ENGINE_BEAT_S = env.integer("IBWEB_ENGINE_BEAT_MS", 1000, minimum=100) / 1000
IBWEB_TICK_MIN_S = 0.05
#: Recent ticks each fabric's link history ring keeps (10 minutes at a 1 s tick), at least 120.
IBWEB_HISTORY_TICKS = env.integer("IBWEB_HISTORY_TICKS", 600, minimum=120)
#: Seconds between two gradings of a fabric's link health readings (ibweb.live.engine.health_publisher).
IBWEB_HEALTH_INTERVAL_S = env.integer("IBWEB_HEALTH_INTERVAL_S", 10, minimum=0)
#: A site's BER and module thresholds (TOML, the form of fabric_engine/health/thresholds.toml), tried before the
#: repository's table; checked at start.
IBWEB_HEALTH_THRESHOLDS = env.text("IBWEB_HEALTH_THRESHOLDS") or None
#: Seconds a fabric's validation report (ibweb.live.validation) is answered before it is computed again (beat's
#: ``validation`` asks every minute which are due; a new record version, or new device readings after the debounce,
#: make it due sooner).
IBWEB_VALIDATION_INTERVAL_S = env.integer("IBWEB_VALIDATION_INTERVAL_S", 300, minimum=10)
#: After new device readings, seconds before the report is computed again (at most the interval; reads meanwhile
#: get the kept report marked ``stale``).
IBWEB_VALIDATION_DEBOUNCE_S = env.integer("IBWEB_VALIDATION_DEBOUNCE_S", 60, minimum=0)
#: A link down longer than this kills a job (NCCL's InfiniBand timeout is about 7 s): a critical link_down_long.
IBWEB_HEALTH_JOB_KILLING_S = env.integer("IBWEB_HEALTH_JOB_KILLING_S", 7, minimum=1)
#: Ports per /metrics scrape target of a large fabric (?fabric=<slug>&part=<k>, listed by /metrics/targets for
#: Prometheus' http_sd_configs): about 3.4 KB of exposition a port, so 2,048 keep a target near 7 MB
#: (tests/bench/bench_metrics_targets.py).
IBWEB_METRICS_TARGET_PORTS = env.integer("IBWEB_METRICS_TARGET_PORTS", 2048, minimum=64)
#: Where the embedded default (no Redis) keeps each fabric's history ring on disk, read back at a restart.
IBWEB_HISTORY_DIR = Path(env.text("IBWEB_HISTORY_DIR") or VAR_DIR / "history")
#: Per-port history for 90 days (ibweb.tsdb): empty, the embedded SQLite store at IBWEB_TSDB_PATH; else the
#: VictoriaMetrics URL (http://host:8428) it writes with remote write and reads with MetricsQL.
IBWEB_TSDB_URL = env.text("IBWEB_TSDB_URL", "") or ""
IBWEB_TSDB_PATH = VAR_DIR / "tsdb.sqlite3"
#: Days of per-port history kept (the embedded store's coarse tiers; VictoriaMetrics' -retentionPeriod).
IBWEB_TSDB_RETENTION_DAYS = env.integer("IBWEB_TSDB_RETENTION_DAYS", 90, minimum=1)
#: Seconds per bucket the embedded store keeps for the retention after its 2 days at full resolution (a multiple of
#: 10 that divides an hour; a file keeps the step it was made with).
IBWEB_TSDB_STEP_S = env.integer("IBWEB_TSDB_STEP_S", 60, minimum=10)
if IBWEB_TSDB_STEP_S % 10 or 3600 % IBWEB_TSDB_STEP_S:
    raise ImproperlyConfigured(f"IBWEB_TSDB_STEP_S={IBWEB_TSDB_STEP_S}: expected a multiple of 10 s that divides "
                               "3600 s")
#: Bound of the embedded store's file, MiB: past it the oldest spans go, finest first.
IBWEB_TSDB_MAX_MB = env.integer("IBWEB_TSDB_MAX_MB", 20480, minimum=16)
#: Seconds between two writes of a fabric's per-port series by its leader (telemetry-fed: at most once per sweep).
IBWEB_TSDB_INTERVAL_S = env.integer("IBWEB_TSDB_INTERVAL_S", 10, minimum=1)
#: Sweeps a fabric's writer queues while the store is busy (past it the oldest are dropped, counted, logged).
IBWEB_TSDB_QUEUE = env.integer("IBWEB_TSDB_QUEUE", 6, minimum=1)
#: Sweeps sent to VictoriaMetrics in one remote-write request (each port's labels once for all: 6 costs a third of
#: the ingest CPU of 1; the newest sweeps are readable there up to that many sweeps later).
IBWEB_TSDB_SWEEPS_PER_REQUEST = env.integer("IBWEB_TSDB_SWEEPS_PER_REQUEST", 6, minimum=1)
#: Bound of the remote-write backlog kept in memory while VictoriaMetrics is unreachable, MiB (oldest dropped past it).
IBWEB_TSDB_BACKLOG_MB = env.integer("IBWEB_TSDB_BACKLOG_MB", 1024, minimum=1)

INSTALLED_APPS = [
    "ibweb.dashboard",  # first: its templates theme Django's admin (admin/base_site.html)
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "ibweb.accounts",  # API tokens, stored hashed (it replaced rest_framework.authtoken)
    "drf_spectacular",
    "django_filters",  # FilterSets of the REST lists (ibweb/api/filtersets.py)
    "channels",
    "ibweb.fabrics",
    "ibweb.tenancy",
    "ibweb.live",
    "ibweb.telemetry",
    "ibweb.twin",
    "ibweb.events",
    "ibweb.notify",  # notifications of stored events (issue 39): above events
]

MIDDLEWARE = [
    "ibweb.http.request_id.RequestIdMiddleware",  # first: every response (a 500 too) and log line carries the ID
    "django.middleware.security.SecurityMiddleware",
    "ibweb.http.security_headers.SecurityHeadersMiddleware",
    "ibweb.http.static_files.StaticFilesMiddleware",  # WhiteNoise, with file bodies read asynchronously under ASGI
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

ROOT_URLCONF = "ibweb.urls"
ASGI_APPLICATION = "ibweb.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env.text("DATABASE_URL", f"sqlite:///{VAR_DIR / 'ibweb.sqlite3'}"), conn_max_age=60, conn_health_checks=True
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded engine writes from worker threads (events, twin reports, rollups) while requests write too:
    # a writer waits for the lock (timeout, seconds) and readers never wait for a writer (write-ahead log).
    # Transactions take the write lock when they begin (IMMEDIATE): a deferred one that reads, then writes,
    # would get "database is locked" at once instead of waiting. Background writers also retry (ibweb.db.retry).
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL",
                                       "transaction_mode": "IMMEDIATE"}
    # Tests use a file as well: an in-memory database's shared cache fails at once on a lock instead of waiting.
    DATABASES["default"]["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"ibweb-test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.text("REDIS_URL")
#: Every key, channel and queue of this deployment on its Redis starts with this: deployments (and tests'
#: servers) sharing one Redis never see each other's engines, records or groups.
REDIS_NAMESPACE = env.text("IBWEB_REDIS_NAMESPACE") or "ibweb"
if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", REDIS_NAMESPACE):
    raise ImproperlyConfigured(f"IBWEB_REDIS_NAMESPACE {REDIS_NAMESPACE!r}: 1 to 64 letters, digits, '_', '.', '-'")
if REDIS_URL:
    # Pub/sub: a frame crosses Redis once per web process, not once per client.
    CHANNEL_LAYERS = {"default": {"BACKEND": "ibweb.live.feed.channel_layer.SharedDecodeChannelLayer",
                                  "CONFIG": {"hosts": [REDIS_URL], "prefix": f"{REDIS_NAMESPACE}:asgi"}}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "KEY_PREFIX": REDIS_NAMESPACE}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "ibweb.live.feed.channel_layer.EmbeddedChannelLayer",
                                  "CONFIG": {"capacity": 200}}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_DEFAULT_QUEUE = REDIS_NAMESPACE
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
#: Run tasks in the calling process (the embedded default); with REDIS_URL, Celery workers run them.
CELERY_TASK_ALWAYS_EAGER = env.flag("IBWEB_CELERY_EAGER", not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["ibweb.auth.permissions.ViewerReadOrModelPermissions"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "ibweb.accounts.authentication.ApiTokenAuthentication",  # Authorization: Token <key>
        # Authorization: Bearer <key> of a push or job token, only on its view's route (ibweb.auth.bearer.BearerRoute)
        "ibweb.auth.bearer.RouteBearerAuthentication",
        "ibweb.auth.unknown_schemes.RefuseUnknownSchemes",  # curl -u (Basic) is a 401, not an anonymous visitor
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # a list's query parameters: its view's filterset_class (the <app>/filtersets.py modules), after its scoping
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # a unique or protecting constraint another writer won is a 409, never a 500
    "EXCEPTION_HANDLER": "ibweb.api.errors.exception_handler",
    # counter pushes per collector token; a collector sweeping every 2 s stays far below
    "DEFAULT_THROTTLE_RATES": {"push": env.text("IBWEB_PUSH_RATE", "120/min")},
    # JSON, form and multipart parsers that refuse a body above its path's cap (413), see ibweb/http/body_limits.py
    "DEFAULT_PARSER_CLASSES": ["ibweb.http.body_limits.JSONParser", "ibweb.http.body_limits.FormParser",
                               "ibweb.http.body_limits.MultiPartParser"],
}
# The schema's own lint runs in tests/ibweb/api/test_api_schema.py, not in `check --deploy` (a security check).
# The schema is served under the API's own access (issue 26): anonymous visitors only where public read is on.
SPECTACULAR_SETTINGS = {"TITLE": "ibweb API", "VERSION": "1", "SERVE_INCLUDE_SCHEMA": False,
                        "ENABLE_DJANGO_DEPLOY_CHECK": False, "SERVE_PERMISSIONS": ["ibweb.auth.permissions.ViewerRead"],
                        # one name per choice set shared by several fields (issue 35: a schema with no warning)
                        "ENUM_NAME_OVERRIDES": {"MembershipEnum": "ibweb.tenancy.choices.Membership",
                                                "MtuEnum": "ibweb.tenancy.choices.Mtu",
                                                "RateEnum": "ibweb.tenancy.choices.Rate"}}

# Request sizes (issue 14; the reasons for each figure are in ibweb/http/body_limits.py). The ASGI middleware
# answers 413 above these before a view runs; Django's own limits bound what its parsers keep in memory.
IBWEB_MAX_BODY_BYTES = env.integer("IBWEB_MAX_BODY_BYTES", 8 << 20, minimum=1 << 16)
IBWEB_MAX_UPLOAD_BYTES = env.integer("IBWEB_MAX_UPLOAD_BYTES", 65 << 20, minimum=1 << 16)
IBWEB_MAX_PUSH_BYTES = env.integer("IBWEB_MAX_PUSH_BYTES", 256 << 20, minimum=1 << 16)
IBWEB_MAX_DEVICE_PUSH_BYTES = env.integer("IBWEB_MAX_DEVICE_PUSH_BYTES", 512 << 20, minimum=1 << 16)
IBWEB_MAX_WS_MESSAGE_BYTES = env.integer("IBWEB_MAX_WS_MESSAGE_BYTES", 64 << 10, minimum=1 << 10)
#: Most values in a JSON body or websocket message (issue 26; ibweb/http/json_input.py); an upload or push route
#: allows one per 8 bytes of its cap if that is more (ibweb.http.body_limits.max_json_values). Nesting: 64 levels.
IBWEB_MAX_JSON_VALUES = env.integer("IBWEB_MAX_JSON_VALUES", 1_000_000, minimum=1000)
# Slow clients (issue 26; ibweb/http/timeouts.py): seconds to send a request's head; a body's grace in seconds,
# then its least average rate in bytes/s. A client that falls behind gets 408 and is disconnected.
IBWEB_HEADER_TIMEOUT_S = env.integer("IBWEB_HEADER_TIMEOUT_S", 10, minimum=1)
IBWEB_BODY_TIMEOUT_S = env.integer("IBWEB_BODY_TIMEOUT_S", 10, minimum=1)
IBWEB_BODY_MIN_RATE = env.integer("IBWEB_BODY_MIN_RATE", 16 << 10, minimum=1)
#: Seconds a websocket may keep its write buffer above the high-water mark before it is closed (ibweb.websocket.flow).
IBWEB_FEED_STALL_S = env.integer("IBWEB_FEED_STALL_S", 30, minimum=1)
#: Seconds between an open feed socket's checks that its sign-in still holds (ibweb/live/feed/session_check.py).
IBWEB_SESSION_RECHECK_S = env.integer("IBWEB_SESSION_RECHECK_S", 5, minimum=1)
# SMTP of the e-mail notification channels (issue 39; ibweb/notify/senders/email.py), Django's mail settings:
# STARTTLS or implicit TLS (not both), the server's certificate checked against the system's CAs (SSL_CERT_FILE).
EMAIL_HOST = env.text("IBWEB_SMTP_HOST", "localhost")
EMAIL_PORT = env.integer("IBWEB_SMTP_PORT", 25, minimum=1)
EMAIL_HOST_USER = env.text("IBWEB_SMTP_USER", "")
EMAIL_HOST_PASSWORD = env.text("IBWEB_SMTP_PASSWORD", "")
EMAIL_USE_TLS = env.flag("IBWEB_SMTP_STARTTLS", False)
EMAIL_USE_SSL = env.flag("IBWEB_SMTP_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("IBWEB_SMTP_STARTTLS and IBWEB_SMTP_SSL are both on: set one")
EMAIL_TIMEOUT = env.integer("IBWEB_SMTP_TIMEOUT_S", 10, minimum=1)
DEFAULT_FROM_EMAIL = env.text("IBWEB_SMTP_FROM", "ibweb@localhost")
#: Addresses or CIDRs of the reverse proxies whose X-Forwarded-For/-Proto/-Host the server believes
#: (ibweb/http/proxies.py); none by default: the peer's address, scheme and Host are the request's, whatever
#: headers it sends.
IBWEB_TRUSTED_PROXIES = trusted_proxies(env.listing("IBWEB_TRUSTED_PROXIES", []))
DATA_UPLOAD_MAX_MEMORY_SIZE = 4 << 20  # form fields and request.body, files excluded
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 << 20  # larger uploaded files spool to a temporary file
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
DATA_UPLOAD_MAX_NUMBER_FILES = 10

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# collectstatic's target, for production (development serves straight from the finders)
STATIC_ROOT = VAR_DIR / "static" if PRODUCTION else None
STATICFILES_DIRS = [("ibweb", BASE_DIR / "frontend" / "dist")]
WHITENOISE_USE_FINDERS = not PRODUCTION
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env.flag("IBWEB_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = 31536000
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    # No SECURE_PROXY_SSL_HEADER: HTTPS is the scheme of the connection, or X-Forwarded-Proto of a trusted
    # proxy only, applied by ibweb.http.proxies.ForwardedHeaders (which drops everyone else's).

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "ibweb.http.request_id.RequestIdFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["request_id"]}},
    "loggers": {"ibweb": {"handlers": ["console"], "level": env.text("IBWEB_LOG_LEVEL", "INFO")},
                # every 5xx, raised (with its traceback) or returned, once, with its request ID (ibweb.http.request_id)
                "django.request": {"handlers": ["console"], "level": "ERROR", "filters": ["request_id"],
                                   "propagate": False}},
}

#: Celery beat: start the telemetry sweeps and the job source polls that are due (each has its own interval).
CELERY_BEAT_SCHEDULE = {
    "telemetry-sweeps": {"task": "ibweb.telemetry.tasks.schedule_sweeps", "schedule": 2.0},
    "twin-job-polls": {"task": "ibweb.twin.tasks.schedule_job_polls", "schedule": 5.0},
    "events-retention": {"task": "ibweb.events.tasks.prune_events", "schedule": 3600.0},
    # notifications: due messages, repeats, Alertmanager re-posts, failing channels (ibweb.notify.queue.pump)
    "notify-pump": {"task": "ibweb.notify.tasks.pump", "schedule": 5.0},
    # each fabric's validation report computed again when due (ibweb.live.validation.tasks)
    "validation": {"task": "ibweb.live.validation.tasks.validate_due", "schedule": 60.0},
}
#: Task modules besides the apps' ``tasks.py`` (autodiscovered).
CELERY_IMPORTS = ("ibweb.live.validation.tasks",)
