import assert from "node:assert/strict";
import {test} from "node:test";
import {describe, eventSilenceBox, mapTargets, silenceBody} from "../src/silence.js";

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

// the few DOM calls a "Silence…" box makes (no DOM in node)
function fakeDoc() {
  const make = (tag) => {
    const el = {tagName: tag, children: [], dataset: {}, attrs: {}, listeners: {}, open: false, textContent: "",
      append(...kids) { this.children.push(...kids); },
      setAttribute(k, v) { this.attrs[k] = v; },
      addEventListener(type, fn) { this.listeners[type] = fn; }};
    return el;
  };
  return {createElement: make};
}

test("an event's silence box asks for its draft once however often it is opened meanwhile", async () => {
  const doc = fakeDoc();
  let calls = 0;
  let answer;
  const fetch = () => {
    calls += 1;
    return new Promise((resolve) => { answer = resolve; });
  };
  const box = eventSilenceBox(doc, "42", fetch);
  assert.equal(box.dataset.silenceEvent, "42");
  const toggle = (open) => { box.open = open; box.listeners.toggle(); };
  toggle(true);
  toggle(false);
  toggle(true);  // opened again before the draft came
  assert.equal(calls, 1);
  answer({ok: false, status: 403, json: async () => ({detail: "no"})});
  await new Promise((r) => setTimeout(r, 0));
  const errors = () => box.children.filter((c) => c.className === "error");
  assert.equal(errors().length, 1);
  toggle(false);
  toggle(true);  // after a refusal: asked again
  assert.equal(calls, 2);
});
