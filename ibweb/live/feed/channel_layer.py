"""ibweb's channel layers: Redis pub/sub decoding a group message once per process, and the embedded one.

Both say how many messages wait for a channel (:func:`channel_backlog`, reported per socket in ``/metrics``).

channels-redis's pub/sub layer receives a message published to a group once per process and puts
the same bytes on the queue of every local channel in the group; each channel's ``receive`` then
decodes them again. A frame of a 2048-host fabric is 256 kB of JSON, so 250 sockets of a view in a
web worker meant 250 decodes of it per tick (a tenth of the worker's time in the 500-client bench).
Here the decoded messages of the last few received bytes objects are kept by identity and handed
out read-only (a ``MappingProxyType``), so no socket can change what the others receive.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from channels.layers import InMemoryChannelLayer
from channels_redis.pubsub import RedisPubSubChannelLayer

__all__ = ["EmbeddedChannelLayer", "SharedDecodeChannelLayer", "channel_backlog"]


class SharedDecodeChannelLayer(RedisPubSubChannelLayer):
    """:class:`RedisPubSubChannelLayer` whose ``deserialize`` decodes each received bytes object once."""

    #: Received messages whose decoded form is kept (the same bytes reach a process's sockets within one pass).
    KEEP = 8

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._decoded: list[tuple[bytes, Mapping]] = []

    def deserialize(self, message: bytes) -> Mapping:
        """The decoded ``message``, read-only; the same object for every channel handed the same bytes object."""
        for raw, decoded in self._decoded:
            if raw is message:  # identity: the layer hands one bytes object to all channels of a group
                return decoded
        decoded = MappingProxyType(super().deserialize(message))
        self._decoded = [*self._decoded[1 - self.KEEP:], (message, decoded)]
        return decoded

    def backlog(self, channel: str) -> int:
        """Messages received for ``channel`` in this process that its consumer has not taken yet.

        Callable from any thread (``/metrics`` runs in a worker thread): looks in the layer of every event loop.
        """
        for layer in list(self._layers.values()):
            queue = layer.channels.get(channel)
            if queue is not None:
                return queue.qsize()
        return 0


class EmbeddedChannelLayer(InMemoryChannelLayer):
    """The in-process layer of the embedded default, which can say how many messages wait for a channel."""

    def backlog(self, channel: str) -> int:
        """Messages sent to ``channel`` that its consumer has not taken yet."""
        queue = self.channels.get(channel)
        return 0 if queue is None else queue.qsize()


def channel_backlog(layer, channel: str) -> int:
    """Messages waiting for ``channel`` in ``layer`` (0 for a layer that cannot say)."""
    backlog = getattr(layer, "backlog", None)
    return 0 if backlog is None else backlog(channel)
