import assert from "node:assert/strict";
import {test} from "node:test";
import {context} from "../src/context.js";
import {synthetic, syntheticFrame, syntheticSnapshot} from "../scripts/synthetic.mjs";

const fab = synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2});

test("a snapshot applies its frame; frames then apply in order and stale ones are skipped", () => {
  const ctx = context();
  const seen = [];
  ctx.on("snapshot.test", (fabric) => seen.push(`snapshot ${fabric.L}`)).on("frame.test", (frame) => seen.push(`frame ${frame.seq}`));
  assert.equal(ctx.applyFrame(syntheticFrame(fab, 1)), false, "no frame before a snapshot");
  ctx.applySnapshot(syntheticSnapshot(fab, 5));
  assert.equal(ctx.applyFrame(syntheticFrame(fab, 5)), false, "a repeated seq");
  assert.equal(ctx.applyFrame(syntheticFrame(fab, 4)), false, "an older seq");
  assert.equal(ctx.applyFrame(syntheticFrame(fab, 9)), true, "seq may skip");
  assert.deepEqual(seen, ["snapshot 8", "frame 5", "frame 9"]);
  assert.equal(ctx.frames, 2);
  assert.equal(ctx.frame.seq, 9);
});

test("render times keep the last 200 frames with median and p95", () => {
  const ctx = context();
  ctx.applySnapshot({...syntheticSnapshot(fab, 0), frame: null});
  for (let seq = 1; seq <= 250; ++seq) ctx.applyFrame(syntheticFrame(fab, seq));
  const {renderMs} = ctx.stats;
  assert.equal(renderMs.length, 200);
  assert.ok(renderMs.every((ms) => ms >= 0));
  renderMs.splice(0, renderMs.length, ...Array.from({length: 100}, (_, i) => i + 1));
  assert.equal(ctx.stats.median, 51);
  assert.equal(ctx.stats.p95, 96);
});

test("status, hover and select fire only on change", () => {
  const ctx = context();
  const seen = [];
  ctx.on("status.test", (s, detail) => seen.push(`${s}:${detail}`)).on("select.test", (item) => seen.push(item));
  ctx.setStatus("live");
  ctx.setStatus("live");
  ctx.select({kind: "link", index: 3});
  ctx.select({kind: "link", index: 3});
  ctx.select(null);
  assert.deepEqual(seen, ["live:", {kind: "link", index: 3}, null]);
});
