import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeSnapshot} from "../src/decode.js";
import {layout} from "../src/layout.js";
import {synthetic, syntheticSnapshot} from "../scripts/synthetic.mjs";

const decoded = (options) => decodeSnapshot(syntheticSnapshot(synthetic(options), 1));
const ids = (fabric, test) => [...Array(fabric.n).keys()].filter(test);

function assertNoOverlap(fabric, lay) {
  for (const t of [0, 1, 2, 3]) {
    const xs = ids(fabric, (i) => lay.tierOf[i] === t).map((i) => lay.x[i]).sort((p, q) => p - q);
    for (let j = 1; j < xs.length; ++j) assert.ok(xs[j] - xs[j - 1] >= 1 - 1e-9, `tier ${t}: ${xs[j - 1]} and ${xs[j]} overlap`);
  }
}

test("each host sits under its leaf, each leaf centred over its hosts", () => {
  const fabric = decoded({leavesPerPod: 5, spinesPerPod: 3, hostsPerLeaf: 4});
  const lay = layout(fabric);
  const {a, b} = fabric.links;
  for (let c = 0; c < fabric.L; ++c) {
    const [h, s] = fabric.nodes.isHost[a[c]] ? [a[c], b[c]] : fabric.nodes.isHost[b[c]] ? [b[c], a[c]] : [-1, -1];
    if (h < 0) continue;
    assert.equal(lay.leafOf[h], s);
    assert.equal(lay.cableLeaf[c], s);
    assert.ok(lay.x[h] > lay.spanStart[s] && lay.x[h] < lay.spanEnd[s], `host ${h} outside leaf ${s}`);
  }
  for (const s of lay.leaves) {
    const hosts = ids(fabric, (i) => lay.leafOf[i] === s);
    assert.equal(lay.hostCount[s], 4);
    assert.equal(lay.x[s], hosts.reduce((sum, h) => sum + lay.x[h], 0) / hosts.length);
  }
  assert.equal(lay.cableLeaf.filter((s) => s >= 0).length, 20, "uplinks are not host cables");
});

test("tiers are ordered top to bottom: cores, spines, leaves, hosts", () => {
  const fabric = decoded({pods: 2, leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2, cores: 2});
  const lay = layout(fabric);
  assert.equal(lay.rows, 4);
  for (let i = 0; i < fabric.n; ++i) assert.equal(lay.y[i], 3 - fabric.nodes.tier[i], fabric.nodes.name[i]);
  const twoTier = layout(decoded({}));
  assert.equal(twoTier.rows, 3);
  assert.deepEqual([...new Set(twoTier.y)].sort(), [0, 1, 2]);
});

test("no two nodes of a tier overlap", () => {
  for (const options of [
    {leavesPerPod: 7, spinesPerPod: 20, hostsPerLeaf: 1},
    {pods: 3, leavesPerPod: 4, spinesPerPod: 4, hostsPerLeaf: 8, cores: 16},
    {pods: 4, leavesPerPod: 2, spinesPerPod: 3, hostsPerLeaf: 3, dragonfly: true},
    {leavesPerPod: 3, spinesPerPod: 2, hostsPerLeaf: 0},
  ]) {
    const fabric = decoded(options);
    assertNoOverlap(fabric, layout(fabric));
  }
});

test("spines of a pod sit over that pod's leaves", () => {
  const fabric = decoded({pods: 3, leavesPerPod: 4, spinesPerPod: 2, hostsPerLeaf: 4, cores: 4});
  const lay = layout(fabric);
  const {name} = fabric.nodes;
  for (const pod of [0, 1, 2]) {
    const leaves = ids(fabric, (i) => name[i].startsWith(`leaf${pod}-`)).map((i) => lay.x[i]);
    for (const s of ids(fabric, (i) => name[i].startsWith(`spine${pod}-`))) {
      assert.ok(lay.x[s] >= Math.min(...leaves) && lay.x[s] <= Math.max(...leaves), `${name[s]} at ${lay.x[s]}`);
    }
  }
});

test("Dragonfly+ groups are laid out side by side", () => {
  const fabric = decoded({pods: 3, leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 3, dragonfly: true});
  const lay = layout(fabric);
  const range = (g) => {
    const xs = ids(fabric, (i) => fabric.nodes.group[i] === g).map((i) => lay.x[i]);
    return [Math.min(...xs), Math.max(...xs)];
  };
  for (const g of [0, 1]) assert.ok(range(g)[1] < range(g + 1)[0], `group ${g} overlaps group ${g + 1}`);
});

test("a host cabled to two leaves goes under the first; an unattached host still gets a slot", () => {
  const msg = syntheticSnapshot(synthetic({leavesPerPod: 2, spinesPerPod: 1, hostsPerLeaf: 1}), 1);
  const {nodes, links} = msg.topology;
  const leaves = nodes.tier.flatMap((t, i) => (t === 1 ? [i] : []));
  const host = nodes.kind.indexOf("host");
  Object.entries({a_node: host, a_port: 2, b_node: leaves[1], b_port: 9, width: 4, speed: "NDR", capacity_gbps: 400,
    length_m: 3}).forEach(([k, v]) => links[k].push(v));
  Object.entries({kind: "host", name: "lonely", guid: "0x1", lid: 99, nports: 1, role: "gpu", tier: 0, group: -1})
    .forEach(([k, v]) => nodes[k].push(v));
  delete msg.frame;
  const fabric = decodeSnapshot(msg);
  const lay = layout(fabric);
  assert.equal(lay.leafOf[host], Math.min(...leaves));
  assert.equal(lay.cableLeaf[fabric.L - 1], -1, "the second leaf's cable is not its host cable");
  assert.equal(lay.leafOf[fabric.n - 1], -1);
  assertNoOverlap(fabric, lay);
  assert.ok(lay.x[fabric.n - 1] < lay.width);
});

test("the layout is deterministic", () => {
  const options = {pods: 3, leavesPerPod: 3, spinesPerPod: 2, hostsPerLeaf: 5, cores: 3};
  const first = layout(decoded(options));
  const second = layout(decoded(options));
  for (const key of ["x", "y", "leafOf", "cableLeaf", "leaves", "hostCount"]) assert.deepEqual(second[key], first[key], key);
  assert.equal(second.width, first.width);
});

test("a SHARP Aggregation Node sits on its switch, never in the host row", () => {
  // spine 0, leaves 1 and 2, hosts 3 and 4, Aggregation Nodes 5 (spine), 6 (leaf 1), 7 (leaf 2)
  const kind = ["switch", "switch", "switch", "host", "host", "host", "host", "host"];
  const role = ["switch", "switch", "switch", "gpu", "gpu", "aggregation", "aggregation", "aggregation"];
  const cables = [[1, 0], [2, 0], [3, 1], [4, 2], [5, 0], [6, 1], [7, 2]];
  const fabric = decodeSnapshot({v: 1, type: "snapshot", fabric: {slug: "an", tick_s: 1}, topology: {
    nodes: {kind, role, name: kind.map((k, i) => `n${i}`), guid: kind.map((k, i) => `0x${i + 1}`), lid: kind.map((k, i) => i + 1),
      nports: kind.map(() => 2), tier: [2, 1, 1, 0, 0, 0, 0, 0], group: kind.map(() => -1)},
    links: {a_node: cables.map((c) => c[0]), b_node: cables.map((c) => c[1]), a_port: cables.map(() => 1),
      b_port: cables.map((c, j) => j + 1), width: cables.map(() => 4), speed: cables.map(() => "NDR"),
      capacity_gbps: cables.map(() => 400), length_m: cables.map(() => 3)}}});
  const lay = layout(fabric);
  for (const [an, sw] of [[5, 0], [6, 1], [7, 2]]) {
    assert.equal(lay.x[an], lay.x[sw]);
    assert.equal(lay.y[an], lay.y[sw]);
    assert.equal(lay.leafOf[an], -1);
  }
  assert.equal(lay.hostCount[1], 1, "the leaf's Aggregation Node is not one of its hosts");
  assert.equal(lay.width, 2, "two hosts, two host slots");
});
