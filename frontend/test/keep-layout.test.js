import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeSnapshot} from "../src/decode.js";
import {freeSlot, keepLayout, layout} from "../src/layout.js";
import {synthetic} from "../scripts/synthetic.mjs";

// Topology changes of a snapshot's columns, as a rediscovery would bring them.
const NODE_KEYS = ["kind", "name", "guid", "lid", "nports", "role", "tier", "group"];
const LINK_KEYS = ["a_node", "a_port", "b_node", "b_port", "width", "speed", "capacity_gbps", "length_m"];
const message = (fab) => ({v: 1, type: "snapshot", seq: 1, fabric: fab.fabric, topology: fab.topology});
const decoded = (fab) => decodeSnapshot(message(fab));

// The same fabric with node k being node order[k] of `fab` (nodes missing from `order` are gone, with their cables),
// cables in reverse order, minus the cables `cut` (by index in `fab`).
function changed(fab, order, cut = []) {
  const {nodes, links} = fab.topology;
  const at = new Map(order.map((i, k) => [i, k]));
  const out = {fabric: fab.fabric, topology: {...fab.topology, nodes: {}, links: {}}};
  for (const key of NODE_KEYS) out.topology.nodes[key] = order.map((i) => nodes[key][i]);
  for (const key of LINK_KEYS) out.topology.links[key] = [];
  for (let c = links.a_node.length - 1; c >= 0; --c) {
    if (cut.includes(c) || !at.has(links.a_node[c]) || !at.has(links.b_node[c])) continue;
    for (const key of LINK_KEYS) {
      const v = links[key][c];
      out.topology.links[key].push(key === "a_node" || key === "b_node" ? at.get(v) : v);
    }
  }
  return out;
}

// Add a node (and cables to the named nodes) to a changed fabric's columns.
function addNode(fab, {kind = "host", name, guid, tier = 0, group = -1, to = []}) {
  const {nodes, links} = fab.topology;
  const i = nodes.kind.length;
  Object.entries({kind, name, guid, lid: 9000 + i, nports: kind === "host" ? 1 : 64, role: kind === "host" ? "gpu" : "switch",
    tier, group}).forEach(([k, v]) => nodes[k].push(v));
  to.forEach((other, p) => {
    const j = nodes.name.indexOf(other);
    Object.entries({a_node: i, a_port: p + 1, b_node: j, b_port: 60 + p, width: 4, speed: "NDR", capacity_gbps: 400,
      length_m: 3}).forEach(([k, v]) => links[k].push(v));
  });
  return i;
}

const byGuid = (fabric, lay) => new Map(fabric.nodes.guid.map((g, i) => [g, [lay.x[i], lay.y[i]]]));
const keep = (before, lay, after) => keepLayout(after, {guids: before.nodes.guid, layout: lay});

function assertKept(before, lay, after, next, except = new Set()) {
  const was = byGuid(before, lay);
  let kept = 0;
  after.nodes.guid.forEach((g, i) => {
    if (!was.has(g) || except.has(g)) return;
    assert.deepEqual([next.x[i], next.y[i]], was.get(g), `${after.nodes.name[i]} moved`);
    ++kept;
  });
  return kept;
}

function assertNoOverlap(fabric, lay) {
  for (const t of [0, 1, 2, 3]) {
    const xs = [...Array(fabric.n).keys()].filter((i) => lay.tierOf[i] === t && lay.switchOf[i] < 0).map((i) => lay.x[i])
      .sort((p, q) => p - q);
    for (let j = 1; j < xs.length; ++j) assert.ok(xs[j] - xs[j - 1] >= 1 - 1e-9, `tier ${t}: ${xs[j - 1]} and ${xs[j]} overlap`);
    for (const x of xs) assert.ok(x > 0 && x < lay.width, `tier ${t}: ${x} outside 0..${lay.width}`);
  }
}

const reversed = (n) => [...Array(n).keys()].reverse();

test("nodes listed in another order keep their places, where a fresh layout moves them", () => {
  const fab = synthetic({pods: 2, leavesPerPod: 3, spinesPerPod: 2, hostsPerLeaf: 3, cores: 2});
  const before = decoded(fab);
  const lay = layout(before);
  const after = decoded(changed(fab, reversed(before.n)));
  const next = keep(before, lay, after);
  assert.equal(assertKept(before, lay, after, next), before.n);
  assert.equal(next.kept, before.n);
  assert.equal(next.width, lay.width);
  assert.equal(next.rows, lay.rows);
  const fresh = layout(after);
  const moved = after.nodes.guid.filter((g, i) => fresh.x[i] !== byGuid(before, lay).get(g)[0]);
  assert.ok(moved.length > 0, "the fresh layout of the reordered fabric is the same: this test would not fail");
});

test("a cut cable moves nothing, though the fresh layout reorders the spines", () => {
  const fab = synthetic({leavesPerPod: 4, spinesPerPod: 4, hostsPerLeaf: 2});
  const before = decoded(fab);
  const lay = layout(before);
  const {links, nodes} = fab.topology;
  // the first leaf's cables to the first two spines: spine 1 now sits over leaves 2..4 only
  const spine = (c) => nodes.name[links.b_node[c]];
  const cut = links.a_node.flatMap((a, c) => (nodes.name[a] === "leaf0-001" && ["spine0-01"].includes(spine(c)) ? [c] : []));
  const after = decoded(changed(fab, [...Array(before.n).keys()], cut));
  assert.equal(after.L, before.L - 1);
  const next = keep(before, lay, after);
  assert.equal(assertKept(before, lay, after, next), before.n);
  const fresh = layout(after);
  assert.ok(after.nodes.guid.some((g, i) => fresh.x[i] !== byGuid(before, lay).get(g)[0]),
    "the fresh layout did not move a spine");
});

test("a host replaced on its leaf takes the slot of the host that went", () => {
  const fab = synthetic({leavesPerPod: 3, spinesPerPod: 2, hostsPerLeaf: 4});
  const before = decoded(fab);
  const lay = layout(before);
  const gone = before.nodes.name.indexOf("gpu-00006");
  const order = reversed(before.n).filter((i) => i !== gone);
  const next0 = changed(fab, order);
  const leaf = before.nodes.name[lay.leafOf[gone]];
  const added = addNode(next0, {name: "gpu-new", guid: "0xfeed", to: [leaf]});
  const after = decoded(next0);
  const next = keep(before, lay, after);
  assert.equal(assertKept(before, lay, after, next), before.n - 1);
  assert.equal(next.x[added], lay.x[gone]);
  assert.equal(next.y[added], lay.y[gone]);
  assert.equal(next.leafOf[added], after.nodes.name.indexOf(leaf));
  assert.equal(next.hostCount[next.leafOf[added]], 4);
  assertNoOverlap(after, next);
});

test("a new leaf with hosts is placed in free slots near its spines, everything else stays", () => {
  const fab = synthetic({pods: 2, leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 3, dragonfly: true});
  const before = decoded(fab);
  const lay = layout(before);
  const next0 = changed(fab, [...Array(before.n).keys()]);
  const leaf = addNode(next0, {kind: "switch", name: "leaf1-new", guid: "0xbeef", tier: 1, group: 1,
    to: ["spine1-01", "spine1-02"]});
  const hosts = ["a", "b"].map((s, j) => addNode(next0, {name: `gpu-new-${s}`, guid: `0xcafe${j}`, group: 1,
    to: ["leaf1-new"]}));
  const after = decoded(next0);
  const next = keep(before, lay, after);
  assert.equal(assertKept(before, lay, after, next), before.n);
  assertNoOverlap(after, next);
  for (const h of hosts) assert.equal(next.leafOf[h], leaf);
  assert.equal(next.hostCount[leaf], 2);
  assert.ok(next.spanStart[leaf] <= Math.min(...hosts.map((h) => next.x[h])) - 0.5);
  assert.ok(next.spanEnd[leaf] >= Math.max(...hosts.map((h) => next.x[h])) + 0.5);
  assert.deepEqual([...next.leaves], [...next.leaves].sort((p, q) => next.x[p] - next.x[q]), "leaves in x order");
  assert.ok(next.leaves.includes(leaf));
  // the new leaf is nearer its own group's spines than the other group's
  const spines = (g) => after.nodes.name.flatMap((name, i) => (name.startsWith(`spine${g}-`) ? [next.x[i]] : []));
  const distance = (xs) => Math.min(...xs.map((x) => Math.abs(x - next.x[leaf])));
  assert.ok(distance(spines(1)) < distance(spines(0)), `leaf at ${next.x[leaf]}`);
  for (const h of hosts) assert.ok(Math.abs(next.x[h] - next.x[leaf]) <= lay.width / 2, "hosts far from their leaf");
  assert.ok(next.width >= lay.width);
});

test("a host with no room near its leaf goes to the nearest free slot, the width grows only if it must", () => {
  const fab = synthetic({leavesPerPod: 2, spinesPerPod: 1, hostsPerLeaf: 2});
  const before = decoded(fab);
  const lay = layout(before);
  const next0 = changed(fab, [...Array(before.n).keys()]);
  const added = addNode(next0, {name: "gpu-more", guid: "0xabc", to: ["leaf0-001"]});
  const after = decoded(next0);
  const next = keep(before, lay, after);
  assert.equal(assertKept(before, lay, after, next), before.n);
  assertNoOverlap(after, next);
  assert.equal(next.x[added], lay.width + 0.5, "the host row is full: the first slot past it");
  assert.equal(next.width, lay.width + 1);
});

test("another fabric (GUIDs mostly new) is laid out afresh", () => {
  const before = decoded(synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2}));
  const other = synthetic({leavesPerPod: 3, spinesPerPod: 2, hostsPerLeaf: 3});
  other.topology.nodes.guid = other.topology.nodes.guid.map((g) => `${g}ff`);
  const after = decoded(other);
  const next = keep(before, layout(before), after);
  const fresh = layout(after);
  assert.equal(next.kept, 0);
  for (const key of ["x", "y", "leaves", "hostCount"]) assert.deepEqual(next[key], fresh[key], key);
  assert.deepEqual(keepLayout(after, null).x, fresh.x);
});

test("hidden hosts (GUID \"hidden\") are not matched by GUID: each is placed under its leaf", () => {
  const fab = synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 3});
  const before = decoded(fab);
  const lay = layout(before);
  const next0 = changed(fab, reversed(before.n));
  const hidden = [];
  next0.topology.nodes.guid = next0.topology.nodes.guid.map((g, i) => {
    if (next0.topology.nodes.kind[i] !== "host" || hidden.length >= 2) return g;
    hidden.push(i);
    return "hidden";
  });
  const after = decoded(next0);
  const next = keep(before, lay, after);
  assert.equal(next.kept, before.n - 2);
  assertNoOverlap(after, next);
  for (const h of hidden) {
    const s = next.leafOf[h];
    assert.ok(next.x[h] > next.spanStart[s] && next.x[h] < next.spanEnd[s], "a hidden host left its leaf");
  }
  assert.equal(next.width, lay.width, "the hidden hosts took the two free slots");
});

test("a hidden host is known by its name under the same leaf (a view that hides hosts), not under another", () => {
  const fab = synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 3});
  const hide = (f, which) => {
    const {nodes} = f.topology;
    which.forEach((name, k) => {
      const i = nodes.name.indexOf(name);
      nodes.name[i] = `host-${k}`;
      nodes.guid[i] = "hidden";
    });
    return f;
  };
  const first = hide(structuredClone(fab), ["gpu-00002", "gpu-00005"]);
  const before = decoded(first);
  const lay = layout(before);
  const previous = {guids: before.nodes.guid, names: before.nodes.name, layout: lay};
  // the same hosts hidden under the same names, listed in another order: both keep their places
  const again = decoded(changed(first, reversed(before.n)));
  const kept = keepLayout(again, previous);
  assert.equal(kept.kept, before.n);
  for (const name of ["host-0", "host-1"]) {
    assert.equal(kept.x[again.nodes.name.indexOf(name)], lay.x[before.nodes.name.indexOf(name)], name);
  }
  // host-0 now names a host of the other leaf: it is placed under that leaf, not at host-0's old place
  const other = hide(structuredClone(fab), ["gpu-00005", "gpu-00002"]);
  const after = decoded(other);
  const next = keepLayout(after, previous);
  assert.equal(next.kept, before.n - 2);
  assertNoOverlap(after, next);
  for (const name of ["host-0", "host-1"]) {
    const h = after.nodes.name.indexOf(name);
    const s = next.leafOf[h];
    assert.ok(next.x[h] > next.spanStart[s] && next.x[h] < next.spanEnd[s], `${name} left its leaf`);
  }
});

test("kept layouts chain: a change after a change keeps what stayed", () => {
  const fab = synthetic({pods: 2, leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2, cores: 2});
  const first = decoded(fab);
  const lay1 = layout(first);
  const second = decoded(changed(fab, reversed(first.n), [0]));
  const lay2 = keep(first, lay1, second);
  const third0 = changed(changed(fab, reversed(first.n), [0]), [...Array(second.n).keys()].filter((i) => i % 5 !== 1));
  const third = decoded(third0);
  const lay3 = keep(second, lay2, third);
  assert.equal(assertKept(first, lay1, third, lay3), third.n);
  assert.equal(lay3.width, lay1.width);
});

test("an Aggregation Node follows its switch and does not count against keeping", () => {
  const fab = synthetic({leavesPerPod: 2, spinesPerPod: 1, hostsPerLeaf: 2});
  const next0 = changed(fab, [...Array(fab.topology.nodes.kind.length).keys()]);
  const an = addNode(next0, {name: "leaf0-001 SHARP", guid: "0xa9", to: ["leaf0-001"]});
  next0.topology.nodes.role[an] = "aggregation";
  const before = decoded(next0);
  const lay = layout(before);
  const after = decoded(changed(next0, reversed(before.n)));
  const next = keep(before, lay, after);
  assert.equal(next.kept, before.n - 1);
  const i = after.nodes.name.indexOf("leaf0-001 SHARP");
  const s = after.nodes.name.indexOf("leaf0-001");
  assert.equal(next.switchOf[i], s);
  assert.equal(next.x[i], next.x[s]);
  assert.equal(next.hostCount[s], 2);
});

test("freeSlot: the nearest place at least one unit from every taken one", () => {
  assert.equal(freeSlot([], 3.2), 3.2);
  assert.equal(freeSlot([1, 2, 3], -4), 4, "not below 0.5; nothing free on the left");
  assert.equal(freeSlot([0.5, 1.5, 2.5, 5.5], 2), 3.5);
  assert.equal(freeSlot([0.5, 3.5, 4.5], 3.9), 2.5);
  assert.equal(freeSlot([0.5, 3.5, 4.5], 4), 5.5, "a tie goes right");
  assert.equal(freeSlot([0.5, 1.5, 2.5], 1.6), 3.5);
  assert.equal(freeSlot([1.5, 2.5], 1.6), 0.5);
  assert.equal(freeSlot([2, 2.5, 6], 4), 4, "free already");
  assert.equal(freeSlot([2, 4.5], 4), 3.5);
});
