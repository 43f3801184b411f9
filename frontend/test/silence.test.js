import assert from "node:assert/strict";
import {test} from "node:test";
import {describe, mapTargets, silenceBody} from "../src/silence.js";

// two switches and a host: cable 0 leaf01:3 - gpu01:1, cable 1 leaf01:40 - spine01:2
const fabric = {nodes: {name: ["leaf01", "gpu01", "spine01"], kind: ["switch", "host", "switch"]},
  links: {a: [0, 0], b: [1, 2], aPort: [3, 40], bPort: [1, 2]}};

test("a cable to a host: its switch port and the switch", () => {
  assert.deepEqual(mapTargets(fabric, "demo", {kind: "link", index: 0}), [
    {label: "port leaf01 port 3", matchers: {fabrics: ["demo"], ports: ["leaf01 port 3"]}},
    {label: "switch leaf01", matchers: {fabrics: ["demo"], switches: ["leaf01"]}}]);
});

test("a cable between switches: both ports and both switches; a node: itself", () => {
  assert.deepEqual(mapTargets(fabric, "demo", {kind: "link", index: 1}).map((t) => t.label),
    ["port leaf01 port 40", "port spine01 port 2", "switch leaf01", "switch spine01"]);
  assert.deepEqual(mapTargets(fabric, "demo", {kind: "node", index: 1}),
    [{label: "host gpu01", matchers: {fabrics: ["demo"], hosts: ["gpu01"]}}]);
  assert.deepEqual(mapTargets(fabric, "demo", null), []);
  assert.deepEqual(mapTargets(null, "demo", {kind: "node", index: 0}), []);
});

test("a silence's body and its description", () => {
  const body = silenceBody({fabrics: ["demo"], ports: ["leaf01 port 3"]}, "4", " swap ", new Date("2026-12-06T10:00:00Z"));
  assert.deepEqual(body, {fabrics: ["demo"], ports: ["leaf01 port 3"], starts_at: "2026-12-06T10:00:00.000Z",
    ends_at: "2026-12-06T14:00:00.000Z", reason: "swap"});
  assert.equal(describe({fabrics: ["demo"], kinds: [], ports: ["leaf01 port 3"]}), "fabrics: demo; ports: leaf01 port 3");
  assert.equal(describe({}), "everything");
});
