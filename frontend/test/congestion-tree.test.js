import assert from "node:assert/strict";
import {test} from "node:test";
import {HELD_COLOR, ROOT_COLOR, TREE_KEYS, decodeCongestionTree, treeLine, treeSummary} from "../src/congestion-tree.js";
import {decodeFrame, decodeSnapshot, frameBuffers} from "../src/decode.js";
import {FeedFormatError} from "../src/feed-error.js";
import {synthetic, syntheticFrame, syntheticSnapshot} from "../scripts/synthetic.mjs";

const fab = synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2});

test("the tree's directed links become cables, a root's cable drawn as a root", () => {
  const L = 8;
  const tree = decodeCongestionTree({model: "credit", roots: [3], held: [1, 9, 11, 5]}, L);
  assert.equal(tree.model, "credit");
  assert.deepEqual([...tree.roots], [3]);
  assert.deepEqual([...tree.held], [1, 5], "9 is cable 1 the other way; 11 is root 3's cable");
  assert.equal(decodeCongestionTree(null, L), null);
  assert.equal(decodeCongestionTree(undefined, L), null);
  assert.equal(treeSummary(tree), " Credit flow control: 1 congestion root, 2 cables held back.");
  assert.equal(treeSummary(null), "");
});

test("a tree that does not fit the fabric is a format error naming the field", () => {
  assert.throws(() => decodeCongestionTree({model: "credit", roots: [16], held: []}, 8),
    (e) => e instanceof FeedFormatError && /congestion_tree\.roots/.test(e.message));
  assert.throws(() => decodeCongestionTree({model: "credit", roots: [], held: [1.5]}, 8),
    (e) => e instanceof FeedFormatError && /congestion_tree\.held/.test(e.message));
  assert.throws(() => decodeCongestionTree([], 8), FeedFormatError);
  assert.throws(() => decodeCongestionTree({roots: [], held: []}, 8), /congestion_tree\.model/);
});

test("a frame carries its congestion tree to the map, none under max-min", () => {
  const fabric = decodeSnapshot(structuredClone(syntheticSnapshot(fab, 7)));
  const L = fabric.L;
  const out = frameBuffers(L);
  assert.equal(out.congestionTree, null);
  const msg = syntheticFrame(fab, 8);
  msg.congestion_tree = {model: "credit", roots: [0], held: [L + 2]};
  decodeFrame(msg, L, out);
  assert.deepEqual([...out.congestionTree.roots], [0]);
  assert.deepEqual([...out.congestionTree.held], [2]);
  decodeFrame(syntheticFrame(fab, 9), L, out);
  assert.equal(out.congestionTree, null, "the next frame without a tree clears it");
  const bad = syntheticFrame(fab, 10);
  bad.congestion_tree = {model: "credit", roots: [2 * L], held: []};
  assert.throws(() => decodeFrame(bad, L, out), FeedFormatError);
  assert.equal(out.seq, 9, "nothing written from an invalid frame");
});

test("the legend's keys draw the tree as the map does", () => {
  assert.deepEqual(TREE_KEYS.map(([label]) => label), ["congestion root", "held back (victim)"]);
  assert.deepEqual(TREE_KEYS.map(([, color]) => color), [ROOT_COLOR, HELD_COLOR]);
  assert.notEqual(ROOT_COLOR, HELD_COLOR);
});

test("congestion control's marking ports and a tick the model did not settle are said", () => {
  const L = 8;
  const tree = decodeCongestionTree({model: "credit", roots: [3], held: [1], marking: [11, 6], converged: false,
    iterations: 400}, L);
  assert.deepEqual([...tree.marking], [3, 6]);
  assert.equal(treeSummary(tree), " Credit flow control: 1 congestion root, 1 cable held back. Congestion control: " +
    "2 cables marking FECN. The model did not settle this tick (400 iterations): its rates are its last iterate.");
  assert.match(treeLine(tree, 3), /^congestion root: .*; its port marks FECN/);
  assert.equal(treeLine(tree, 6), "its port marks FECN (congestion control)");
  assert.equal(treeLine(tree, 2), "");
  const averaged = decodeCongestionTree({model: "credit", roots: [], held: [], converged: false, iterations: 400,
    averaged: 200}, L);
  assert.equal(averaged.averaged, 200);
  assert.match(treeSummary(averaged), /\(400 iterations\): its rates are the mean of its last 200 iterates\.$/);
  assert.throws(() => decodeCongestionTree({model: "credit", roots: [], held: [], averaged: -1}, L),
    /congestion_tree\.averaged/);
  const old = decodeCongestionTree({model: "credit", roots: [], held: []}, L);
  assert.equal(old.converged, true, "an engine that does not say is taken as settled");
  assert.deepEqual([...old.marking], []);
  assert.throws(() => decodeCongestionTree({model: "credit", roots: [], held: [], marking: [16]}, L),
    /congestion_tree\.marking/);
  assert.throws(() => decodeCongestionTree({model: "credit", roots: [], held: [], converged: "no"}, L),
    /congestion_tree\.converged/);
  assert.throws(() => decodeCongestionTree({model: "credit", roots: [], held: [], iterations: -1}, L),
    /congestion_tree\.iterations/);
});
