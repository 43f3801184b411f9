import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeSnapshot} from "../src/decode.js";
import {LABEL_PAD, labelIndex, labelWidths, visibleLabels} from "../src/labels.js";
import {layout} from "../src/layout.js";
import {synthetic} from "../scripts/synthetic.mjs";

const decoded = (options) => {
  const fab = synthetic(options);
  return decodeSnapshot({v: 1, type: "snapshot", seq: 1, fabric: fab.fabric, topology: fab.topology});
};
const CHAR = 6.5; // px per character, for these tests
const widths = (fabric) => labelWidths(fabric.nodes.name, () => CHAR);
const MAP = 1100; // map width in px (a 1400 px wide dashboard), with topology.js' 24 px margins
const view = (lay, k = 1, tx = 0, hosts = true) => {
  const unit = (MAP - 48) / lay.width;
  return {scale: k * unit, x0: (-tx / k - 24) / unit, x1: ((MAP - tx) / k - 24) / unit, hosts};
};

test("label widths sum each character's width, measured once per character", () => {
  const measured = [];
  const w = labelWidths(["leaf01", "leaf10", "é"], (ch) => (measured.push(ch), ch === "1" ? 4 : 6));
  assert.deepEqual([...w], [6 * 4 + 6 + 4, 6 * 4 + 4 + 6, 6]);
  assert.deepEqual(measured.sort(), ["0", "1", "a", "e", "f", "l", "é"].sort());
});

test("every node of a 24-node fabric is labelled at zoom 1", () => {
  const fabric = decoded({leavesPerPod: 4, spinesPerPod: 4, hostsPerLeaf: 4});
  assert.equal(fabric.n, 24);
  const lay = layout(fabric);
  const shown = visibleLabels(labelIndex(lay, widths(fabric)), view(lay), 240);
  assert.deepEqual([...shown].sort((p, q) => p - q), [...Array(24).keys()]);
  // top tier first, each row in x order
  const tiers = [...shown].map((i) => lay.tierOf[i]);
  assert.deepEqual(tiers, [...tiers].sort((p, q) => q - p));
});

test("hosts are labelled once zoomed in far enough, and only those on screen", () => {
  const fabric = decoded({pods: 2, leavesPerPod: 8, spinesPerPod: 4, hostsPerLeaf: 16, cores: 4});
  const lay = layout(fabric);
  const index = labelIndex(lay, widths(fabric));
  const zoomedOut = visibleLabels(index, view(lay), 240);
  assert.ok(zoomedOut.length > 0, "switches with room are labelled");
  assert.ok([...zoomedOut].every((i) => !fabric.nodes.isHost[i]), "256 hosts in 1052 px: no host label fits");
  const hostLabel = Math.max(...fabric.nodes.name.filter((_, i) => fabric.nodes.isHost[i]).map((s) => s.length)) * CHAR;
  const k = (hostLabel + LABEL_PAD) / view(lay).scale + 0.01; // a host slot is just wide enough
  const tx = -k * 300; // panned right
  const v = view(lay, k, tx);
  const zoomedIn = visibleLabels(index, v, 240);
  const hostsShown = [...zoomedIn].filter((i) => fabric.nodes.isHost[i]);
  assert.ok(hostsShown.length > 5, `${hostsShown.length} host labels`);
  for (const i of zoomedIn) assert.ok(lay.x[i] >= v.x0 - 1e-9 && lay.x[i] <= v.x1 + 1e-9, `${fabric.nodes.name[i]} off screen`);
  const onScreen = [...Array(fabric.n).keys()].filter((i) => fabric.nodes.isHost[i] && lay.x[i] >= v.x0 && lay.x[i] <= v.x1);
  assert.deepEqual(hostsShown, onScreen, "every host on screen is labelled");
  assert.equal(visibleLabels(index, {...v, hosts: false}, 240).filter((i) => fabric.nodes.isHost[i]).length, 0,
    "no host labels while hosts are aggregated");
});

test("a label shows only where it fits between its neighbours", () => {
  // three nodes in a row at x 0.5, 1.5 and 10.5: the first two need 2x the zoom of the third
  const lay = {x: Float64Array.of(0.5, 1.5, 10.5), tierOf: Int8Array.of(1, 1, 1), switchOf: Int32Array.of(-1, -1, -1)};
  const index = labelIndex(lay, [20, 20, 20]);
  const fits = (scale) => [...visibleLabels(index, {scale, x0: 0, x1: 11}, 10)];
  assert.deepEqual(fits(2), []);
  assert.deepEqual(fits((20 + LABEL_PAD) / 9), [2]);
  assert.deepEqual(fits(20 + LABEL_PAD), [0, 1, 2]);
  assert.deepEqual([index.rows[0].least, index.rows[0].most], [(20 + LABEL_PAD) / 9, 20 + LABEL_PAD]);
  const alone = labelIndex({x: Float64Array.of(3), tierOf: Int8Array.of(2), switchOf: Int32Array.of(-1)}, [500]);
  assert.deepEqual([...visibleLabels(alone, {scale: 0.001, x0: 0, x1: 5}, 10)], [0], "alone in its row: always fits");
});

test("the number of labels is capped, top tiers kept first", () => {
  const fabric = decoded({pods: 2, leavesPerPod: 8, spinesPerPod: 8, hostsPerLeaf: 8, cores: 8});
  const lay = layout(fabric);
  const index = labelIndex(lay, widths(fabric));
  const all = visibleLabels(index, {scale: 1e6, x0: -1, x1: lay.width + 1}, 1e9);
  assert.equal(all.length, fabric.n);
  const capped = visibleLabels(index, {scale: 1e6, x0: -1, x1: lay.width + 1}, 20);
  assert.equal(capped.length, 20);
  const cores = [...Array(fabric.n).keys()].filter((i) => lay.tierOf[i] === 3);
  const spines = [...Array(fabric.n).keys()].filter((i) => lay.tierOf[i] === 2);
  assert.deepEqual(new Set(capped), new Set([...cores, ...spines].slice(0, 20)));
});

test("an Aggregation Node, drawn on its switch, gets no label and leaves its switch's labelled", () => {
  const lay = {x: Float64Array.of(1, 5, 5), tierOf: Int8Array.of(1, 1, 1), switchOf: Int32Array.of(-1, -1, 1)};
  const index = labelIndex(lay, [10, 10, 10]);
  assert.deepEqual([...visibleLabels(index, {scale: 10, x0: 0, x1: 6}, 10)], [0, 1]);
});
