import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeFrame, decodeSharp, decodeSnapshot, decodeStorage, frameBuffers} from "../src/decode.js";
import {synthetic, syntheticFrame, syntheticSnapshot} from "../scripts/synthetic.mjs";
import {sharpSection, storageSection} from "../scripts/sections.mjs";

const fab = synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2});
const L = decodeSnapshot(syntheticSnapshot(fab, 1)).L;

test("frames carry their sharp and storage sections; absent or null sections decode to null", () => {
  const out = frameBuffers(L);
  assert.deepEqual([out.sharp, out.storage], [null, null]);
  decodeFrame({...syntheticFrame(fab, 1), sharp: sharpSection(), storage: storageSection()}, L, out);
  assert.equal(out.sharp.trees_in_use, 2);
  assert.equal(out.storage.servers.length, 3);
  decodeFrame({...syntheticFrame(fab, 2), sharp: null}, L, out);
  assert.deepEqual([out.sharp, out.storage], [null, null]);
});

test("SHARP disabled needs no generation or limits", () => {
  const off = {enabled: false, trees_in_use: 0, switches: [], jobs: [], bytes_aggregated: 0, bytes_kept_off_wire: 0,
    kept_off_wire_gbps: 0, events: []};
  assert.equal(decodeSharp(off), off);
  assert.throws(() => decodeSharp({...off, enabled: true}), /frame\.sharp\.generation: invalid value undefined/);
});

test("a malformed sharp section is rejected naming the field, and the buffers stay as they were", () => {
  const out = decodeFrame({...syntheticFrame(fab, 1), sharp: sharpSection()}, L, frameBuffers(L));
  const bad = (edit, message) => {
    const section = sharpSection();
    edit(section);
    assert.throws(() => decodeFrame({...syntheticFrame(fab, 5), sharp: section}, L, out), {name: "FeedFormatError", message});
    assert.equal(out.seq, 1);
    assert.equal(out.sharp.trees_in_use, 2);
  };
  bad((s) => (s.enabled = "yes"), 'frame.sharp.enabled: invalid value "yes"');
  bad((s) => (s.switches[1].trees = -1), "frame.sharp.switches[1].trees: invalid value -1");
  bad((s) => delete s.switches[0].jobs, "frame.sharp.switches[0].jobs: invalid value undefined");
  bad((s) => (s.jobs[2].on = 1), "frame.sharp.jobs[2].on: invalid value 1");
  bad((s) => (s.jobs[0].bytes_kept_off_wire = "9e13"), 'frame.sharp.jobs[0].bytes_kept_off_wire: invalid value "9e13"');
  bad((s) => (s.jobs[1].reason = 3), "frame.sharp.jobs[1].reason: invalid value 3");
  bad((s) => (s.events = {}), "frame.sharp.events: expected an array");
  bad((s) => (s.events[0].t = null), "frame.sharp.events[0].t: invalid value null");
  assert.throws(() => decodeSharp([]), /frame\.sharp: expected an object, got \[\]/);
});

test("a malformed storage section is rejected naming the field", () => {
  const bad = (edit, message) => {
    const section = storageSection();
    edit(section);
    assert.throws(() => decodeStorage(section), {name: "FeedFormatError", message});
  };
  assert.equal(decodeStorage(storageSection()).jobs.length, 3);
  bad((s) => (s.servers[2].read_bottleneck = "disk"), 'frame.storage.servers[2].read_bottleneck: invalid value "disk"');
  bad((s) => (s.servers[0].read_gbps = NaN), "frame.storage.servers[0].read_gbps: invalid value null");
  bad((s) => delete s.servers[0].network_gbps, "frame.storage.servers[0].network_gbps: invalid value undefined");
  bad((s) => (s.jobs[0].checkpoint.progress = 1.5), "frame.storage.jobs[0].checkpoint.progress: invalid value 1.5");
  bad((s) => (s.jobs[2].checkpoint.state = "done"), 'frame.storage.jobs[2].checkpoint.state: invalid value "done"');
  bad((s) => (s.jobs[1].checkpoint = 7), "frame.storage.jobs[1].checkpoint: invalid value 7");
  bad((s) => (s.tenants[1].tenant = null), "frame.storage.tenants[1].tenant: invalid value null");
  bad((s) => delete s.tenants, "frame.storage.tenants: expected an array");
});
