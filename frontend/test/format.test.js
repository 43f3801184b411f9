import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeFrame, decodeSnapshot, frameBuffers} from "../src/decode.js";
import {cableLines, directedEnds, directedLabel, formatRate, formatUtil} from "../src/format.js";
import {synthetic, syntheticFrame, syntheticSnapshot} from "../scripts/synthetic.mjs";

const fab = synthetic({leavesPerPod: 2, spinesPerPod: 1, hostsPerLeaf: 1});
const fabric = decodeSnapshot(syntheticSnapshot(fab, 1));

test("rates switch to Tb/s at 1000 Gb/s; utilization keeps values above 100%", () => {
  assert.equal(formatRate(812.46), "812.5 Gb/s");
  assert.equal(formatRate(81234.5), "81.23 Tb/s");
  assert.equal(formatUtil(0.984), "98%");
  assert.equal(formatUtil(1.15), "115%");
});

test("directed link d >= L is the reverse of cable d - L", () => {
  const {a, b, aPort, bPort} = fabric.links;
  const L = fabric.L;
  assert.deepEqual(directedEnds(fabric, 1), {cable: 1, from: a[1], fromPort: aPort[1], to: b[1], toPort: bPort[1]});
  assert.deepEqual(directedEnds(fabric, L + 1), {cable: 1, from: b[1], fromPort: bPort[1], to: a[1], toPort: aPort[1]});
  assert.equal(directedLabel(fabric, 0), "gpu-00001:1 → leaf0-001:1");
  assert.equal(directedLabel(fabric, L), "leaf0-001:1 → gpu-00001:1");
});

test("a cable's tooltip names both ends with GUIDs and ports, and both directions", () => {
  const msg = syntheticFrame(fab, 2);
  msg.util[0] = 1.2;
  msg.rate[0] = 480;
  const frame = decodeFrame(msg, fabric.L, frameBuffers(fabric.L));
  const lines = cableLines(fabric, frame, 0);
  assert.equal(lines[0], "gpu-00001 port 1 ⇄ leaf0-001 port 1");
  assert.match(lines[1], /^GUID 0x[0-9a-f]{16} ⇄ 0x[0-9a-f]{16}$/);
  assert.equal(lines[2], "4x NDR, 400.0 Gb/s, 3 m");
  assert.equal(lines[3], "gpu-00001:1 → leaf0-001:1  480.0 Gb/s  120%");
  assert.match(lines[4], /^leaf0-001:1 → gpu-00001:1 /);
  assert.equal(lines[5], "congested: offered load above capacity");
});
