"""permessage-deflate for text only: JSON compressed, binary v2 frames sent as they are (issue 15)."""

from __future__ import annotations

import asyncio
import json
import zlib

import websockets
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame, Opcode

from ibweb.websocket.deflate import DeflatedCache, TextDeflate
from tests.support.server import running_server


def test_text_is_compressed_binary_is_not_and_a_peer_decodes_both_in_turn():
    server = TextDeflate(False, False, 15, 15, {"level": 1})
    client = PerMessageDeflate(False, False, 15, 15)  # the peer's side of the same negotiation
    text = json.dumps({"util": [0.5] * 5000}).encode()
    binary = zlib.compress(bytes(range(256)) * 40)
    for opcode, data in ((Opcode.TEXT, text), (Opcode.BINARY, binary), (Opcode.TEXT, text), (Opcode.BINARY, binary)):
        sent = server.encode(Frame(opcode, data))
        assert sent.rsv1 is (opcode is Opcode.TEXT)
        assert (len(sent.data) < len(data) / 10) if opcode is Opcode.TEXT else sent.data == data
        assert client.decode(sent).data == data
    # a binary message in several frames stays raw to its last frame
    assert not server.encode(Frame(Opcode.BINARY, b"ab", fin=False)).rsv1
    assert server.encode(Frame(Opcode.CONT, b"cd")).data == b"cd"


def test_a_text_message_is_deflated_once_per_process_and_only_equal_bytes_share_it(monkeypatch):
    cache = DeflatedCache(size=2)
    monkeypatch.setattr("ibweb.websocket.deflate.DEFLATED", cache)
    sockets = [TextDeflate(False, True, 12, 12, {"level": 1}) for _ in range(3)]
    peer = PerMessageDeflate(True, False, 12, 12)  # a client told the server takes no context over
    frame = json.dumps({"seq": 7, "util": [0.25] * 4000}).encode()
    other = frame.replace(b"0.25", b"0.75")  # same length, other bytes: deflated on its own
    sent = [s.encode(Frame(Opcode.TEXT, frame)) for s in sockets]
    assert (cache.misses, cache.hits) == (1, 2)
    assert all(m.data == sent[0].data and m.rsv1 for m in sent)
    assert peer.decode(sent[0]).data == frame
    sent_other = sockets[0].encode(Frame(Opcode.TEXT, other))
    assert cache.misses == 2 and peer.decode(sent_other).data == other
    # equal length, first and last bytes, another middle (another view's jobs): told apart, each kept
    middle = frame[:300] + frame[300:-300].replace(b"0.25", b"0.50") + frame[-300:]
    assert len(middle) == len(frame) and middle != frame
    sent_middle = [s.encode(Frame(Opcode.TEXT, middle)) for s in sockets]
    assert peer.decode(sent_middle[0]).data == middle and all(m.data == sent_middle[0].data for m in sent_middle)
    assert (cache.misses, cache.hits) == (3, 4)
    assert sockets[1].encode(Frame(Opcode.TEXT, other)).data == sent_other.data  # still cached beside it
    assert (cache.misses, cache.hits) == (3, 5)
    # a socket with context takeover keeps its own history: never the shared frames
    own = TextDeflate(False, False, 12, 12, {"level": 1})
    own.encode(Frame(Opcode.TEXT, frame))
    assert (cache.misses, cache.hits) == (3, 5)


def test_the_server_negotiates_it_and_sends_v2_frames_raw(tmp_path, monkeypatch):
    seen = []
    decode = PerMessageDeflate.decode

    def spy(self, frame, *, max_size=None):
        seen.append((frame.opcode, frame.rsv1))
        return decode(self, frame, max_size=max_size)

    # spied from the handshake on: the client reads (and decodes) the snapshot in the background, maybe before
    # the test's first recv() (a busy machine)
    monkeypatch.setattr(PerMessageDeflate, "decode", spy)

    async def client(server):
        async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/?v=2", max_size=None,
                                      origin=server.url) as ws:
            [ext] = ws.protocol.extensions
            assert ext.remote_no_context_takeover  # so the server deflates a message once for all its sockets
            messages = [await asyncio.wait_for(ws.recv(), 30) for _ in range(3)]
        return ext.name, seen, messages

    with running_server(tmp_path) as server:
        name, seen, messages = asyncio.run(client(server))
    assert name == "permessage-deflate"
    assert isinstance(messages[0], str) and all(isinstance(m, bytes) for m in messages[1:])
    assert (Opcode.TEXT, True) in seen  # the snapshot, compressed
    binary = [rsv1 for opcode, rsv1 in seen if opcode is Opcode.BINARY]
    assert len(binary) >= 2 and not any(binary), seen  # v2 frames as they are
