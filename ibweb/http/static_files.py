"""Static files under ASGI without Django's warning about synchronous iterators.

WhiteNoise answers with a :class:`~django.http.FileResponse` that reads its file synchronously;
served by an ASGI server, Django then logs ``StreamingHttpResponse must consume synchronous
iterators in order to serve them asynchronously`` for every static file and buffers the file
through a thread. :class:`StaticFilesMiddleware` gives such responses an asynchronous body
that reads the same file chunk by chunk in a worker thread.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from whitenoise.middleware import WhiteNoiseMiddleware

__all__ = ["StaticFilesMiddleware"]

_END = object()


async def _chunks(iterator):
    """The items of a synchronous ``iterator``, each read in a worker thread."""
    read = sync_to_async(next, thread_sensitive=False)
    while (chunk := await read(iterator, _END)) is not _END:
        yield chunk


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise; under ASGI the file's body is an asynchronous iterator."""

    @staticmethod
    def serve(static_file, request):
        response = WhiteNoiseMiddleware.serve(static_file, request)
        if isinstance(request, ASGIRequest) and not response.is_async:
            response.streaming_content = _chunks(iter(response.streaming_content))
        return response
