// Binary (v2) frames, decoded from a fixture the shipped encoder made (tests/ibweb/live/feed/test_feed_encodings.py).
import assert from "node:assert/strict";
import {readFileSync} from "node:fs";
import {test} from "node:test";
import {zlibSync} from "fflate";
import {decodeBinaryFrame, decodeSnapshot, frameBuffers, readBinaryFrame} from "../src/decode.js";
import {FeedFormatError} from "../src/feed-error.js";
import {context} from "../src/context.js";

const fixture = JSON.parse(readFileSync(new URL("./fixtures/feed-v2.json", import.meta.url), "utf8"));
const message = () => Uint8Array.from(Buffer.from(fixture.frame_v2, "base64"));

function close(actual, expected, {rel = 0, abs = 0}, what) {
  for (let d = 0; d < expected.length; ++d) {
    const bound = abs + rel * Math.abs(expected[d]);
    assert.ok(Math.abs(actual[d] - expected[d]) <= bound, `${what}[${d}]: ${actual[d]} vs ${expected[d]}`);
  }
}

test("a binary frame decodes to what v1 sends for the same tick, within the codecs' precision", () => {
  const fabric = decodeSnapshot(fixture.snapshot);
  const out = decodeBinaryFrame(readBinaryFrame(message()), fabric, frameBuffers(fabric.L));
  const v1 = fixture.v1;
  assert.equal(out.seq, v1.seq);
  assert.deepEqual(out.jobs, v1.jobs);
  assert.deepEqual(out.hotspots, v1.hotspots);
  close(out.util, v1.util, {abs: 1e-4 + 1e-5}, "util");
  close(out.rate, v1.rate, {abs: 0.02}, "rate"); // util x the cable's capacity
  close(out.offered, v1.offered, {rel: 2e-4, abs: 0.01}, "offered");
  close(out.xmitWait, v1.xmit_wait, {rel: 4e-4, abs: 1}, "xmitWait");
  assert.ok(out.has.offered && out.has.xmitWait);
  const L = fabric.L;
  for (let c = 0; c < L; ++c) assert.equal(out.cableUtil[c], Math.max(out.util[c], out.util[c + L]));
});

test("the context applies binary frames, in order, and measures their decoding", () => {
  const ctx = context();
  ctx.applySnapshot(fixture.snapshot);
  const bytes = message();
  assert.equal(ctx.applyFrame(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)), true);
  assert.equal(ctx.frame.seq, fixture.v1.seq);
  assert.equal(ctx.applyFrame(bytes), false, "the same seq again is skipped");
  assert.equal(ctx.stats.renderMs.length, 1);
});

// A binary frame of `arrays` [{name, values (Uint16Array or Uint8Array), deflate}] with header fields `extra`.
function build(arrays, extra = {}) {
  const entries = [];
  const chunks = [];
  let offset = 0;
  for (const {name, values, deflate = false, codec = "linear", scale = 1 / 60000} of arrays) {
    const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    const data = deflate ? zlibSync(raw) : raw;
    entries.push({name, length: values.length, dtype: values.BYTES_PER_ELEMENT === 1 ? "uint8" : "uint16", codec,
      scale, offset, nbytes: data.length, deflate});
    const padded = new Uint8Array(Math.ceil(data.length / 8) * 8);
    padded.set(data);
    chunks.push(padded);
    offset += padded.length;
  }
  let text = JSON.stringify({v: 2, type: "frame", seq: 5, t: 1, tick_s: 1, jobs: [], alerts: [], arrays: entries, ...extra});
  text += " ".repeat((8 - ((text.length + 8) % 8)) % 8);
  const head = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + head.length + offset);
  out.set([0x49, 0x42, 0x57, 0x32]);
  new DataView(out.buffer).setUint32(4, head.length, true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const c of chunks) out.set(c, at), (at += c.length);
  return out;
}

test("bad binary frames are one clear error and write nothing", () => {
  const fabric = decodeSnapshot(fixture.snapshot);
  const n = 2 * fabric.L;
  const out = frameBuffers(fabric.L);
  const good = build([{name: "util", values: new Uint16Array(n).fill(30000), deflate: true}]);
  decodeBinaryFrame(readBinaryFrame(good), fabric, out);
  assert.equal(out.util[0], Math.fround(0.5));
  assert.equal(out.has.offered, false);
  const cases = [
    [Uint8Array.from([1, 2, 3, 4, 0, 0, 0, 0]), /does not start with IBW2/],
    [(() => { const m = good.slice(); new DataView(m.buffer).setUint32(4, 1e6, true); return m; })(), /runs past/],
    [build([{name: "util", values: new Uint16Array(n - 2)}]), /expected \d+ values/],
    [build([{name: "util", values: new Uint16Array(n)}], {v: 3}), /unsupported protocol version 3/],
    [build([{name: "offered", values: new Uint16Array(n)}]), /no util array/],
    [build([{name: "util", values: new Uint16Array(n), codec: "cubic"}]), /unsupported codec/],
    [good.slice(0, good.length - 16), /outside the message|bytes for/],
  ];
  for (const [msg, pattern] of cases) {
    const before = out.util[0];
    assert.throws(() => decodeBinaryFrame(readBinaryFrame(msg), fabric, out), (e) => e instanceof FeedFormatError && pattern.test(e.message));
    assert.equal(out.util[0], before, `${pattern}: nothing written`);
  }
});
