"""ASGI entry point: HTTP by Django, websockets by Channels, lifespan runs the embedded engine.

Forwarding headers count only from ``IBWEB_TRUSTED_PROXIES`` and are removed before anything reads them
(:mod:`ibweb.http.proxies`). Request bodies and websocket messages are capped before they reach a view
(:mod:`ibweb.http.body_limits`);
``/healthz`` is answered before Django, so that a busy view never holds it (:mod:`ibweb.http.health`).
"""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from ibweb.http.body_limits import BodyLimitMiddleware  # noqa: E402
from ibweb.http.health import HealthFirst  # noqa: E402
from ibweb.http.proxies import ForwardedHeaders  # noqa: E402
from ibweb.live.engine.lifespan import EngineLifespan  # noqa: E402
from ibweb.live.feed.origin import origin_checked  # noqa: E402
from ibweb.live.feed.websocket_urls import websocket_urlpatterns  # noqa: E402

application = ForwardedHeaders(ProtocolTypeRouter(
    {
        "http": HealthFirst(BodyLimitMiddleware(django_asgi_app)),
        "websocket": BodyLimitMiddleware(origin_checked(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))),
        "lifespan": EngineLifespan(),
    }
))

# The loaded application's objects (modules, settings, URL resolvers, models: about 100,000) are left out of the
# collector's full passes from here on: a full pass over them took 50-140 ms while a request allocated heavily
# (a 3,000-partition import), stopping every thread, /healthz with them; frozen, 5-8 ms (issue 26).
gc.collect()
gc.freeze()
