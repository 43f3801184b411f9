"""Origin check of websocket handshakes."""

from channels.security.websocket import OriginValidator
from django.conf import settings


class BrowserOriginValidator(OriginValidator):
    """Rejects browser handshakes from origins outside ``ALLOWED_HOSTS``.

    A handshake without an ``Origin`` header comes from a non-browser client
    (a script, an exporter); cross-site requests, the risk this check guards
    against, always carry one. Such clients are let through to authentication.
    """

    def valid_origin(self, parsed_origin) -> bool:
        return parsed_origin is None or self.validate_origin(parsed_origin)


def origin_checked(application):
    """Wrap ``application`` with the origin check for the current ``ALLOWED_HOSTS``."""
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = ["localhost", "127.0.0.1", "[::1]"]
    return BrowserOriginValidator(application, allowed)
