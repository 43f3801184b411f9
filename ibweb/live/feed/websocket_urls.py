from django.urls import path

from ibweb.live.feed.consumers import LiveConsumer

websocket_urlpatterns = [
    path("ws/fabrics/<slug:slug>/live/", LiveConsumer.as_asgi()),
]
