"""A request's way in, before and around the views: trusted proxies, body and JSON limits, gzip uploads, slow
clients, request IDs, security headers, static files and ``/healthz``."""
