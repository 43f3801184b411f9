import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeSnapshot} from "../src/decode.js";
import {layout} from "../src/layout.js";
import {cellCables, matrixValues, tierMatrix} from "../src/tier-matrix.js";
import {synthetic, syntheticSnapshot} from "../scripts/synthetic.mjs";

const decoded = (options) => decodeSnapshot(syntheticSnapshot(synthetic(options), 1));

test("a leaf x spine matrix has a cell per leaf and spine, one cable each", () => {
  const fabric = decoded({leavesPerPod: 16, spinesPerPod: 32, hostsPerLeaf: 2});
  const m = tierMatrix(fabric, 1, 2, layout(fabric).x);
  assert.equal(m.R, 16);
  assert.equal(m.C, 32);
  assert.equal(m.cables.reduce((s, x) => s + x, 0), 16 * 32);
  assert.ok(m.cables.every((x) => x === 1));
  const {name} = fabric.nodes;
  assert.deepEqual([...m.rows].map((i) => name[i]), [...m.rows].map((i) => name[i]).sort(), "rows in layout order");
  const [c] = cellCables(m, 3, 5);
  assert.deepEqual(new Set([fabric.links.a[c], fabric.links.b[c]]), new Set([m.rows[3], m.cols[5]]));
});

test("cell values take the chosen direction, the highest of parallel cables; empty cells are NaN", () => {
  const fabric = decoded({pods: 2, leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 1, cores: 2});
  const {L} = fabric;
  const m = tierMatrix(fabric, 1, 2);
  const util = new Float32Array(2 * L);
  const [c] = cellCables(m, 0, 0);
  util[m.up[c]] = 0.5;
  util[m.up[c] < L ? m.up[c] + L : m.up[c] - L] = 0.25;
  assert.equal(matrixValues(m, util, "max")[0], 0.5);
  assert.equal(matrixValues(m, util, "up")[0], 0.5);
  assert.equal(matrixValues(m, util, "down")[0], 0.25);
  const values = matrixValues(m, util, "max");
  // leaves of pod 0 do not reach the spines of pod 1
  const pod1spine = [...m.cols].findIndex((i) => fabric.nodes.name[i].startsWith("spine1"));
  assert.ok(Number.isNaN(values[0 * m.C + pod1spine]));
  assert.equal(values[1], 0, "a cabled idle cell is 0");
  const spineCore = tierMatrix(fabric, 2, 3);
  assert.equal(spineCore.R, 4);
  assert.equal(spineCore.C, 2);
  assert.equal(spineCore.cables.reduce((s, x) => s + x, 0), 4);
});

test("tiers wider than maxSide are binned: fewer rows and columns, every cable still in one cell (issue 15)", () => {
  const big = decodeSnapshot(syntheticSnapshot(synthetic({pods: 4, leavesPerPod: 4, spinesPerPod: 4, hostsPerLeaf: 1}), 1));
  const full = tierMatrix(big, 1, 2);
  const binned = tierMatrix(big, 1, 2, null, 4);
  assert.ok(full.R > 4 && binned.R === 4 && binned.C <= 4);
  assert.equal(binned.cables.reduce((s, x) => s + x, 0), full.cables.reduce((s, x) => s + x, 0));
  for (let c = 0; c < big.L; ++c) assert.equal(binned.cell[c] >= 0, full.cell[c] >= 0);
  assert.ok(binned.rowsLast.every((last, r) => last >= binned.rows[r]));
});
