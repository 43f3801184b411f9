import assert from "node:assert/strict";
import {test} from "node:test";
import {applyFocus, parseFocus} from "../src/focus.js";

test("parseFocus reads link, node and job focus and rejects the rest", () => {
  assert.deepEqual(parseFocus("?focus=link:40"), {kind: "link", value: "40"});
  assert.deepEqual(parseFocus("?focus=node:gpu0001&tenant=acme"), {kind: "node", value: "gpu0001"});
  assert.deepEqual(parseFocus("?focus=job:llama-70b"), {kind: "job", value: "llama-70b"});
  for (const bad of ["", "?focus=", "?focus=link:-1", "?focus=link:x", "?focus=port:1", "?focus=node:"]) {
    assert.equal(parseFocus(bad), null, bad);
  }
});

function fakeContext() {
  const calls = [];
  const fabric = {n: 3, L: 2, nodes: {name: ["leaf01", "gpu0001", "gpu0002"]}};
  return {
    calls, fabric, catalog: [], frame: {jobs: []},
    select: (item) => calls.push(["select", item]),
    highlight: (h) => calls.push(["highlight", h.kind, h.label, [...h.cables], [...h.nodes]]),
  };
}

test("applyFocus selects and highlights a link (its cable) or a node, and a job once the catalog has it", () => {
  const ctx = fakeContext();
  assert.equal(applyFocus(ctx, {kind: "link", value: "3"}), true);
  assert.deepEqual(ctx.calls, [["select", {kind: "link", index: 1}], ["highlight", "focus", "link 3", [1], []]]);
  ctx.calls.length = 0;
  assert.equal(applyFocus(ctx, {kind: "link", value: "4"}), false, "beyond 2L");
  assert.equal(applyFocus(ctx, {kind: "node", value: "gpu0002"}), true);
  assert.deepEqual(ctx.calls[0], ["select", {kind: "node", index: 2}]);
  assert.equal(applyFocus(ctx, {kind: "node", value: "nope"}), false);
  assert.equal(applyFocus(ctx, {kind: "job", value: "j1"}), false, "not in the catalog yet");
  ctx.catalog = [{id: "j1", hosts: [1, 2], links: [0]}];
  ctx.calls.length = 0;
  assert.equal(applyFocus(ctx, {kind: "job", value: "j1"}), true);
  assert.deepEqual(ctx.calls, [["highlight", "job", "j1", [0], [1, 2]]]);
});
