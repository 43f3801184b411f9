"""The Redis pub/sub channel layer decodes a group message once per process (issue 15)."""

import asyncio

import pytest

from ibweb.live.feed.channel_layer import SharedDecodeChannelLayer
from tests.support.services import require_redis


async def _sockets_of_a_group(layer: SharedDecodeChannelLayer, count: int) -> list[str]:
    channels = [await layer.new_channel() for _ in range(count)]
    for channel in channels:
        await layer.group_add("view", channel)
    await asyncio.sleep(0.2)  # the subscription reaches Redis
    return channels


async def test_every_socket_of_a_group_gets_one_read_only_decoded_message():
    layer = SharedDecodeChannelLayer(hosts=[require_redis(db=11)])
    try:
        channels = await _sockets_of_a_group(layer, 3)
        text = '{"seq":7,"util":[' + ",".join(["0.5"] * 20000) + "]}"
        await layer.group_send("view", {"type": "fabric.frame", "seq": 7, "text": text})
        got = [await asyncio.wait_for(layer.receive(c), 5) for c in channels]
        assert all(m is got[0] for m in got) and dict(got[0]) == {"type": "fabric.frame", "seq": 7, "text": text}
        with pytest.raises(TypeError):
            got[0]["text"] = "another view's frame"
        await layer.group_send("view", {"type": "fabric.frame", "seq": 8, "text": text})
        nxt = [await asyncio.wait_for(layer.receive(c), 5) for c in channels]
        assert nxt[0] is not got[0] and nxt[0]["seq"] == 8 and all(m is nxt[0] for m in nxt)
    finally:
        await layer.flush()
