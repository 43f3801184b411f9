import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeFrame, decodeSnapshot, frameBuffers} from "../src/decode.js";
import {cableLines, directedEnds, directedLabel, formatBytes, formatDuration, formatGpuTime, formatRate, formatSpeedup,
  formatUtil} from "../src/format.js";
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

test("bytes use decimal units with three significant digits", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1048576), "1.05 MB");
  assert.equal(formatBytes(9.8e11), "980 GB");
  assert.equal(formatBytes(4.158e12), "4.16 TB");
  assert.equal(formatBytes(999.7e9), "1 TB", "rounding up moves to the next unit");
  assert.equal(formatBytes(3.2e21), "3200 EB", "the largest unit keeps growing");
  assert.equal(formatBytes(NaN), "–");
});

test("durations go from milliseconds to hours; unknown is a dash", () => {
  assert.equal(formatDuration(0.3368), "337 ms");
  assert.equal(formatDuration(0.0421), "42.1 ms");
  assert.equal(formatDuration(3.125), "3.1 s");
  assert.equal(formatDuration(42.4), "42 s");
  assert.equal(formatDuration(125), "2 min 05 s");
  assert.equal(formatDuration(3725), "1 h 02 min");
  assert.equal(formatDuration(null), "–");
  assert.equal(formatDuration(-1), "–");
});

test("GPU time in GPU-seconds, GPU-hours from an hour on; speed-ups with two decimals", () => {
  assert.equal(formatGpuTime(784), "784 GPU·s");
  assert.equal(formatGpuTime(9000), "2.5 GPU·h");
  assert.equal(formatGpuTime(null), "–");
  assert.equal(formatSpeedup(0.635 / 0.3368), "×1.89");
  assert.equal(formatSpeedup(null), "–");
  assert.equal(formatSpeedup(Infinity), "–");
});
