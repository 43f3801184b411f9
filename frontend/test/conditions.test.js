import assert from "node:assert/strict";
import {test} from "node:test";
import {timeFormat} from "d3";
import {DEGRADED, DOWN, cableTooltip, conditionCables, conditionsKey, downTooltip, sinceText} from "../src/conditions.js";
import {decodeFrame, decodeSnapshot, frameBuffers} from "../src/decode.js";

// A fabric by hand: spine01 (0), leaf01 (1), leaf02 (2), gpu01 (3) under leaf01, gpu02 (4) under leaf02.
// Cables: 0 leaf01:1-spine01:1, 1 gpu01:1-leaf01:3, 2 gpu02:1-leaf02:3. leaf02 port 1 - spine01 port 2 is down (gone).
const names = ["spine01", "leaf01", "leaf02", "gpu01", "gpu02"];
const cables = [[1, 1, 0, 1], [3, 1, 1, 3], [4, 1, 2, 3]];
const fabric = decodeSnapshot({v: 1, type: "snapshot", fabric: {slug: "hand", tick_s: 1}, topology: {
  nodes: {kind: ["switch", "switch", "switch", "host", "host"], name: names, guid: names.map((_, i) => `0x${i + 1}`),
    lid: [1, 2, 3, 4, 5], nports: [64, 64, 64, 1, 1], role: ["switch", "switch", "switch", "gpu", "gpu"],
    tier: [2, 1, 1, 0, 0], group: [-1, -1, -1, -1, -1]},
  links: {a_node: cables.map((c) => c[0]), a_port: cables.map((c) => c[1]), b_node: cables.map((c) => c[2]),
    b_port: cables.map((c) => c[3]), width: [4, 1, 4], speed: ["NDR", "NDR", "HDR"], capacity_gbps: [400, 100, 200],
    length_m: [30, 3, 3]}}});

const T = 1796212800;
const down = {kind: "link_down", severity: "critical", condition: true, since: T - 125, nodes: [2, 0], ports: [1, 2],
  a: "leaf02 port 1", b: "spine01 port 2", cable: -1, message: "link down: leaf02 port 1 - spine01 port 2"};
const narrower = {kind: "width_degraded", severity: "warning", condition: true, since: T - 30, nodes: [3, 1], ports: [1, 3],
  a: "gpu01 port 1", b: "leaf01 port 3", cable: 1, old: "4x", new: "1x", message: "width 4x -> 1x: gpu01 port 1 - leaf01 port 3"};
const slower = {...narrower, kind: "speed_degraded", old: "NDR", new: "HDR", message: "speed NDR -> HDR: gpu01 port 1 - leaf01 port 3"};

// A v1 frame by hand, decoded as the dashboard decodes it.
function frame(alerts, util = [0.5, 0.25, 0.75]) {
  const L = fabric.L;
  const u = [...util, ...util.map((x) => x / 2)];
  const msg = {v: 1, type: "frame", seq: 7, t: T, tick_s: 1, util: u, rate: u.map((x, d) => x * fabric.links.capacity[d % L]),
    totals: {}, jobs: [], hotspots: [], alerts};
  return decodeFrame(msg, L, frameBuffers(L));
}

test("a down cable is drawn between its two nodes, a degraded one in its place", () => {
  const items = conditionCables(frame([narrower, down]).alerts, fabric);
  assert.deepEqual(items.map(({alerts, ...rest}) => rest), [
    {state: DOWN, a: 2, b: 0, aPort: 1, bPort: 2, cable: -1},
    {state: DEGRADED, a: 3, b: 1, aPort: 1, bPort: 3, cable: 1},
  ]);
  assert.deepEqual(items[0].alerts, [down]);
});

test("only condition alerts about cables of this fabric are drawn", () => {
  const alerts = [
    {...down, nodes: [-1, 0]}, // leaf02 is not in the fabric: nothing to draw
    {...down, nodes: [2, 5]}, // no node 5
    {...down, nodes: [2]},
    {...down, condition: false}, // an event, not a condition
    {...down, condition: undefined},
    {...narrower, cable: 3}, // no cable 3
    {...narrower, cable: -1},
    {kind: "no_route", job: "j1", flows: 3, condition: true},
    {kind: "twin", deviation: "down", key: "0x2/1", message: "below"},
    null,
  ];
  assert.deepEqual(conditionCables(frame(alerts).alerts, fabric), []);
  assert.deepEqual(conditionCables(undefined, fabric), []);
});

test("width and speed alerts on one cable make one entry; the same down cable named twice, one", () => {
  const items = conditionCables([narrower, slower, down, {...down, nodes: [0, 2], ports: [2, 1]}], fabric);
  assert.equal(items.length, 2);
  assert.deepEqual(items[1].alerts, [narrower, slower]);
  assert.equal(items[0].alerts.length, 2);
});

test("what is drawn changes with the newest frame only: a condition that clears is gone", () => {
  const first = conditionsKey(conditionCables(frame([down, narrower]).alerts, fabric));
  const same = conditionsKey(conditionCables(frame([{...down, since: T - 1, message: "other text"}, narrower]).alerts, fabric));
  assert.equal(same, first, "new texts do not change what is drawn");
  assert.equal(conditionCables(frame([narrower]).alerts, fabric).length, 1);
  assert.equal(conditionsKey(conditionCables(frame([]).alerts, fabric)), "");
});

test("a cable's tooltip names both ends, width and speed, state and utilization", () => {
  const f = frame([]);
  const lines = cableTooltip(fabric, f, 0);
  assert.equal(lines[0], "leaf01 port 1 ⇄ spine01 port 1");
  assert.equal(lines[2], "4x NDR, 400.0 Gb/s, 30 m");
  assert.equal(lines[3], "state up, utilization 50%");
  assert.ok(lines.some((l) => l.startsWith("leaf01:1 → spine01:1  200.0 Gb/s  50%")), lines.join("\n"));
  assert.ok(lines.some((l) => l.startsWith("spine01:1 → leaf01:1  100.0 Gb/s  25%")), lines.join("\n"));
});

test("a degraded cable's tooltip says what changed, the alert and since when", () => {
  const f = frame([narrower, slower]);
  const [item] = conditionCables(f.alerts, fabric);
  const lines = cableTooltip(fabric, f, 1, item);
  assert.equal(lines[0], "gpu01 port 1 ⇄ leaf01 port 3");
  assert.equal(lines[3], "state degraded (width 4x → 1x, speed NDR → HDR), utilization 25%");
  const at = timeFormat("%H:%M:%S")(new Date((T - 30) * 1000));
  assert.ok(lines.includes(`width 4x -> 1x: gpu01 port 1 - leaf01 port 3, since ${at} (30 s ago)`), lines.join("\n"));
  assert.ok(lines.includes(`speed NDR -> HDR: gpu01 port 1 - leaf01 port 3, since ${at} (30 s ago)`), lines.join("\n"));
});

test("a down cable's tooltip names its ends and ports, since when and the alert", () => {
  const f = frame([down]);
  const [item] = conditionCables(f.alerts, fabric);
  const at = timeFormat("%H:%M:%S")(new Date((T - 125) * 1000));
  assert.deepEqual(downTooltip(fabric, item, f.t), [
    "leaf02 port 1 ⇄ spine01 port 2",
    `state down (not cabled in the fabric any more), since ${at} (2 min 05 s ago)`,
    "link down: leaf02 port 1 - spine01 port 2",
  ]);
  const bare = conditionCables([{kind: "link_down", condition: true, nodes: [2, 0], ports: [1, 2]}], fabric)[0];
  const lines = downTooltip(fabric, bare, T); // no names, no since, no message: the nodes' names and the kind
  assert.deepEqual(lines.slice(0, 2), ["leaf02 port 1 ⇄ spine01 port 2", "state down (not cabled in the fabric any more)"]);
  assert.match(lines[2], /^link down: /);
});

test("since: the local time and how long ago; nothing without it", () => {
  assert.equal(sinceText({}, T), "");
  assert.equal(sinceText({since: "yesterday"}, T), "");
  assert.match(sinceText({since: T - 3600}, T), /^since \d\d:\d\d:\d\d \(1 h 00 min ago\)$/);
  assert.match(sinceText({since: T}, NaN), /^since \d\d:\d\d:\d\d$/);
});

test("a cable the snapshot says is trained down is drawn degraded without an alert, and says why", () => {
  const snapshot = (links) => decodeSnapshot({v: 1, type: "snapshot", fabric: {slug: "hand", tick_s: 1}, topology: {
    nodes: {kind: ["switch", "switch", "switch", "host", "host"], name: names, guid: names.map((_, i) => `0x${i + 1}`),
      lid: [1, 2, 3, 4, 5], nports: [64, 64, 64, 1, 1], role: ["switch", "switch", "switch", "gpu", "gpu"],
      tier: [2, 1, 1, 0, 0], group: [-1, -1, -1, -1, -1]},
    links: {a_node: cables.map((c) => c[0]), a_port: cables.map((c) => c[1]), b_node: cables.map((c) => c[2]),
      b_port: cables.map((c) => c[3]), width: [4, 1, 4], speed: ["NDR", "NDR", "HDR"], capacity_gbps: [400, 100, 200],
      length_m: [30, 3, 3], ...links}}});
  const trained = snapshot({trained_down: [false, false, true]});
  assert.deepEqual([...trained.links.trainedDown], [2]);
  assert.deepEqual([...fabric.links.trainedDown], []); // the column is optional
  const f = frame([]);
  const items = conditionCables(f.alerts, trained);
  assert.deepEqual(items.map(({state, cable, trainedDown}) => [state, cable, trainedDown]), [[DEGRADED, 2, true]]);
  assert.equal(cableTooltip(trained, f, 2, items[0])[3],
    "state degraded (trained down: its two ends printed different rates, the lower is shown), utilization 75%");
  // A degraded alert on a trained-down cable: one entry, saying both.
  const both = conditionCables(frame([{...narrower, cable: 2}]).alerts, trained);
  assert.equal(both.length, 1);
  assert.match(cableTooltip(trained, f, 2, both[0])[3], /width 4x → 1x, trained down/);
  assert.throws(() => snapshot({trained_down: [1, 0, 0]}), /trained_down\[0\]/);
});

test("a cable's tooltip says whether it is a congestion root or held back by credits", () => {
  const f = {...frame([]), congestionTree: {model: "credit", roots: Int32Array.of(0), held: Int32Array.of(1)}};
  assert.match(cableTooltip(fabric, f, 0)[4], /^congestion root: saturated/);
  assert.match(cableTooltip(fabric, f, 1)[4], /^held back by credits/);
  assert.equal(cableTooltip(fabric, frame([]), 0).length, cableTooltip(fabric, f, 0).length - 1, "no tree: no line");
});
