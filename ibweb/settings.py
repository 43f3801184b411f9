"""Settings of ibweb, all from the environment.

The embedded default (``make run``): SQLite, in-memory channel layer, Celery
eager, the engine inside the web process, anonymous read-only access. Setting
``DATABASE_URL`` and ``REDIS_URL`` switches to PostgreSQL, channels-redis, a
Redis cache and real Celery workers; ``IBWEB_ENV=production`` hardens the rest.
"""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from . import env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env.text("IBWEB_VAR_DIR", str(BASE_DIR / "var")))

IBWEB_ENV = env.text("IBWEB_ENV", "development")
if IBWEB_ENV not in ("development", "production"):
    raise ImproperlyConfigured(f"IBWEB_ENV={IBWEB_ENV!r}: use 'development' or 'production'")
PRODUCTION = IBWEB_ENV == "production"

SECRET_KEY = env.text("SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when IBWEB_ENV=production")
    SECRET_KEY = "development-only-insecure-key-never-use-in-production-0123456789"
DEBUG = env.flag("IBWEB_DEBUG", not PRODUCTION)
ALLOWED_HOSTS = env.listing("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.listing("CSRF_TRUSTED_ORIGINS", [])

#: Anonymous visitors may view dashboards and feeds (read-only).
IBWEB_PUBLIC_READ = env.flag("IBWEB_PUBLIC_READ", not PRODUCTION)
#: Run the engine loop inside the web process (off when ``run_engine`` processes do it).
IBWEB_ENGINE_EMBEDDED = env.flag("IBWEB_ENGINE_EMBEDDED", True)
IBWEB_TICK_MIN_S = 0.05

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "channels",
    "ibweb.fabrics",
    "ibweb.tenancy",
    "ibweb.live",
    "ibweb.dashboard",
    "ibweb.telemetry",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "ibweb.security.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.text("REDIS_URL")
if REDIS_URL:
    # Pub/sub: a frame crosses Redis once per web process, not once per client.
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                                  "CONFIG": {"hosts": [REDIS_URL]}}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 200}}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
#: Run tasks in the calling process (the embedded default); with REDIS_URL, Celery workers run them.
CELERY_TASK_ALWAYS_EAGER = env.flag("IBWEB_CELERY_EAGER", not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["ibweb.permissions.PublicReadOrModelPermissions"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # counter pushes per collector token; a collector sweeping every 2 s stays far below
    "DEFAULT_THROTTLE_RATES": {"push": env.text("IBWEB_PUSH_RATE", "120/min")},
}
# The schema's own lint runs in tests/web/test_api_schema.py, not in `check --deploy` (a security check).
SPECTACULAR_SETTINGS = {"TITLE": "ibweb API", "VERSION": "1", "SERVE_INCLUDE_SCHEMA": False,
                        "ENABLE_DJANGO_DEPLOY_CHECK": False}

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
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"ibweb": {"handlers": ["console"], "level": env.text("IBWEB_LOG_LEVEL", "INFO")}},
}

#: Celery beat: start the telemetry sweeps that are due (each fabric has its own interval).
CELERY_BEAT_SCHEDULE = {
    "telemetry-sweeps": {"task": "ibweb.telemetry.tasks.schedule_sweeps", "schedule": 2.0},
}
