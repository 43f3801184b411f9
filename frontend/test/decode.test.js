import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeFrame, decodeSnapshot, frameBuffers} from "../src/decode.js";
import {FeedFormatError} from "../src/feed-error.js";
import {synthetic, syntheticFrame, syntheticSnapshot} from "../scripts/synthetic.mjs";

const fab = synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2});
const snapshot = () => structuredClone(syntheticSnapshot(fab, 7));

test("a snapshot decodes to typed columns", () => {
  const fabric = decodeSnapshot(snapshot());
  assert.equal(fabric.n, 2 + 2 + 4);
  assert.equal(fabric.L, 4 + 4);
  assert.equal(fabric.name, "Demo");
  assert.equal(fabric.tickS, 1);
  assert.ok(fabric.links.a instanceof Int32Array);
  assert.ok(fabric.links.capacity instanceof Float32Array);
  assert.equal(fabric.nodes.isHost.reduce((s, h) => s + h, 0), 4);
  assert.deepEqual([...fabric.links.a], fab.topology.links.a_node);
  assert.equal(fabric.nodes.name[fabric.links.b[0]], fab.topology.nodes.name[fab.topology.links.b_node[0]]);
});

test("cable utilization is the larger of both directions", () => {
  const fabric = decodeSnapshot(snapshot());
  const L = fabric.L;
  const msg = syntheticFrame(fab, 8);
  msg.util = Array.from({length: 2 * L}, (_, d) => (d < L ? d / 10 : (2 * L - d) / 10));
  const frame = decodeFrame(msg, L, frameBuffers(L));
  assert.equal(frame.seq, 8);
  assert.equal(frame.util.length, 2 * L);
  assert.equal(frame.cableUtil.length, L);
  for (let c = 0; c < L; ++c) {
    assert.equal(frame.cableUtil[c], Math.fround(Math.max(c / 10, (L - c) / 10)), `cable ${c}`);
  }
  assert.equal(frame.cableUtil[0], Math.fround(0.8), "reverse direction wins on cable 0");
  assert.equal(frame.cableUtil[L - 1], Math.fround((L - 1) / 10), "forward direction wins on the last cable");
});

test("frames decode into the same preallocated buffers", () => {
  const L = decodeSnapshot(snapshot()).L;
  const out = frameBuffers(L);
  const {rate, util, cableUtil} = out;
  decodeFrame(syntheticFrame(fab, 1), L, out);
  decodeFrame(syntheticFrame(fab, 2), L, out);
  assert.equal(out.rate, rate);
  assert.equal(out.util, util);
  assert.equal(out.cableUtil, cableUtil);
  assert.equal(out.seq, 2);
});

test("a frame with a wrong array length is rejected, buffers untouched", () => {
  const L = decodeSnapshot(snapshot()).L;
  const out = decodeFrame(syntheticFrame(fab, 1), L, frameBuffers(L));
  const before = Float32Array.from(out.util);
  const msg = syntheticFrame(fab, 2);
  msg.util.pop();
  assert.throws(() => decodeFrame(msg, L, out), {name: "FeedFormatError", message: `frame.util: expected ${2 * L} values, got ${2 * L - 1}`});
  assert.deepEqual(out.util, before);
  assert.equal(out.seq, 1);
});

test("a frame of another protocol version or type is rejected", () => {
  const L = decodeSnapshot(snapshot()).L;
  const wrongVersion = {...syntheticFrame(fab, 1), v: 2};
  assert.throws(() => decodeFrame(wrongVersion, L, frameBuffers(L)), /frame: unsupported protocol version 2, expected 1/);
  const wrongType = {...syntheticFrame(fab, 1), type: "snapshot"};
  assert.throws(() => decodeFrame(wrongType, L, frameBuffers(L)), /frame: wrong message type "snapshot"/);
  assert.throws(() => decodeFrame(null, L, frameBuffers(L)), FeedFormatError);
});

test("a frame with a non-numeric value or a missing seq is rejected", () => {
  const L = decodeSnapshot(snapshot()).L;
  const msg = syntheticFrame(fab, 1);
  msg.rate[3] = "12";
  assert.throws(() => decodeFrame(msg, L, frameBuffers(L)), /frame\.rate\[3\]: invalid value "12"/);
  const noSeq = syntheticFrame(fab, 1);
  delete noSeq.seq;
  assert.throws(() => decodeFrame(noSeq, L, frameBuffers(L)), /seq must be an integer/);
});

test("a snapshot with inconsistent columns is rejected", () => {
  const short = snapshot();
  short.topology.nodes.guid.pop();
  assert.throws(() => decodeSnapshot(short), /snapshot\.topology\.nodes\.guid: expected 8 values, got 7/);
  const dangling = snapshot();
  dangling.topology.links.b_node[2] = 99;
  assert.throws(() => decodeSnapshot(dangling), /snapshot\.topology\.links\.b_node\[2\]: invalid value 99/);
  assert.throws(() => decodeSnapshot({...snapshot(), v: 0}), FeedFormatError);
});

test("a snapshot may leave out seq, as long as a present seq is an integer", () => {
  const {seq, ...withoutSeq} = snapshot();
  assert.equal(seq, 7);
  assert.equal(decodeSnapshot(withoutSeq).seq, -1);
  assert.throws(() => decodeSnapshot({...snapshot(), seq: "7"}), /snapshot: seq must be an integer, got "7"/);
});

test("optional per-link arrays and hotspots decode when present, and reset when absent", () => {
  const L = decodeSnapshot(snapshot()).L;
  const out = frameBuffers(L);
  const msg = syntheticFrame(fab, 8);
  msg.xmit_wait = Array.from({length: 2 * L}, (_, d) => d * 10);
  msg.offered = msg.rate.map((r) => r * 2);
  msg.hotspots = [{link: 3, congestion: 1.2}];
  decodeFrame(msg, L, out);
  assert.equal(out.xmitWait[5], 50);
  assert.equal(out.offered[1], Math.fround(msg.rate[1] * 2));
  assert.deepEqual(out.has, {offered: true, xmitWait: true});
  assert.equal(out.hotspots[0].link, 3);
  const bad = {...syntheticFrame(fab, 9), offered: msg.offered, xmit_wait: [...msg.xmit_wait.slice(1), "x"]};
  assert.throws(() => decodeFrame(bad, L, out), /frame.xmit_wait\[\d+\]: invalid value "x"/);
  assert.equal(out.seq, 8, "nothing written from an invalid frame");
  decodeFrame(syntheticFrame(fab, 10), L, out);
  assert.deepEqual(out.has, {offered: false, xmitWait: false});
  assert.equal(out.xmitWait[5], 0);
  assert.deepEqual(out.hotspots, []);
});
