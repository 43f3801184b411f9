import assert from "node:assert/strict";
import {mock, test} from "node:test";
import {context} from "../src/context.js";
import {backoffDelay, feed, feedURL} from "../src/feed.js";
import {synthetic, syntheticFrame, syntheticSnapshot} from "../scripts/synthetic.mjs";

const fab = synthetic({leavesPerPod: 2, spinesPerPod: 1, hostsPerLeaf: 2});

test("the feed URL follows the page's scheme and host", () => {
  assert.equal(feedURL("/ws/fabrics/demo/live/", {href: "http://ib.example:8000/fabrics/demo/"}), "ws://ib.example:8000/ws/fabrics/demo/live/");
  assert.equal(feedURL("/ws/fabrics/demo/live/", {href: "https://ib.example/x"}), "wss://ib.example/ws/fabrics/demo/live/");
  assert.equal(feedURL("wss://other.example/ws/", {href: "http://ib.example/"}), "wss://other.example/ws/");
});

test("backoff doubles up to its cap, with jitter in [0.5, 1]", () => {
  const top = () => 1 - Number.EPSILON;
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => Math.round(backoffDelay(n, 500, 4000, top))), [500, 1000, 2000, 4000, 4000]);
  assert.equal(backoffDelay(2, 500, 4000, () => 0), 1000);
});

class FakeSocket {
  static all = [];
  constructor(url) {
    this.url = url;
    FakeSocket.all.push(this);
  }
  send(msg) {
    this.onmessage({data: JSON.stringify(msg)});
  }
  close(code = 1006) {
    this.onclose?.({code});
  }
}

test("statuses: connecting, live, stale, reconnecting after a drop, closed on 4404", (t) => {
  t.mock.timers.enable({apis: ["setTimeout"]});
  mock.method(Math, "random", () => 0.999);
  t.after(() => mock.restoreAll());
  FakeSocket.all = [];
  const ctx = context();
  const source = feed().url("ws://h/ws/").context(ctx).socket(FakeSocket).backoff(100, 1000).start();
  assert.equal(ctx.status, "connecting");
  const [first] = FakeSocket.all;
  first.send(syntheticSnapshot(fab, 3));
  assert.equal(ctx.status, "live");
  first.send(syntheticFrame(fab, 4));
  assert.equal(ctx.frame.seq, 4);

  const clock = ctx.on("clock.feed");
  clock(ctx.receivedAt + 2900);
  assert.equal(ctx.status, "live");
  clock(ctx.receivedAt + 3100);
  assert.equal(ctx.status, "stale");
  first.send(syntheticFrame(fab, 5));
  assert.equal(ctx.status, "live");

  first.close(1006);
  assert.equal(ctx.status, "reconnecting");
  t.mock.timers.tick(99);
  assert.equal(FakeSocket.all.length, 1, "waits for the backoff");
  t.mock.timers.tick(1);
  assert.equal(FakeSocket.all.length, 2);
  FakeSocket.all[1].close(1006);
  t.mock.timers.tick(199);
  assert.equal(FakeSocket.all.length, 2, "the second wait is twice as long");
  t.mock.timers.tick(1);
  assert.equal(FakeSocket.all.length, 3);

  FakeSocket.all[2].close(4404);
  assert.equal(ctx.status, "closed");
  assert.equal(ctx.detail, "unknown fabric");
  t.mock.timers.tick(60000);
  assert.equal(FakeSocket.all.length, 3, "no retry after 4404");
  source.stop();
});

test("a malformed frame is dropped with a warning and the feed stays live", (t) => {
  const warn = t.mock.method(console, "warn", () => {});
  FakeSocket.all = [];
  const ctx = context();
  const source = feed().url("ws://h/ws/").context(ctx).socket(FakeSocket).start();
  const [socket] = FakeSocket.all;
  socket.send(syntheticSnapshot(fab, 1));
  socket.send({...syntheticFrame(fab, 2), util: [1, 2]});
  socket.onmessage({data: "{not json"});
  assert.equal(ctx.frame.seq, 1);
  assert.equal(ctx.status, "live");
  assert.equal(warn.mock.callCount(), 2);
  assert.match(warn.mock.calls[0].arguments[0], /frame\.util: expected \d+ values, got 2/);
  source.stop();
});

test("the dashboard asks for binary frames (v2) and applies them as they come", async () => {
  assert.equal(feedURL("/ws/fabrics/demo/live/", {href: "https://ib.example/x"}, 2), "wss://ib.example/ws/fabrics/demo/live/?v=2");
  const {readFileSync} = await import("node:fs");
  const fixture = JSON.parse(readFileSync(new URL("./fixtures/feed-v2.json", import.meta.url), "utf8"));
  FakeSocket.all = [];
  const ctx = context();
  const source = feed().url("ws://h/ws/?v=2").context(ctx).socket(FakeSocket).start();
  const [socket] = FakeSocket.all;
  assert.equal(socket.binaryType, "arraybuffer");
  socket.send(fixture.snapshot);
  const bytes = Buffer.from(fixture.frame_v2, "base64");
  socket.onmessage({data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)});
  assert.equal(ctx.frame.seq, fixture.v1.seq);
  assert.equal(ctx.status, "live");
  source.stop();
});
