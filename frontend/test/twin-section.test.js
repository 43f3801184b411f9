import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeFrame, frameBuffers} from "../src/decode.js";
import {FeedFormatError} from "../src/feed-error.js";
import {CODE, decodeTwin, deviationRows, OVERLAY_COLORS, overlayCables} from "../src/twin-section.js";

const L = 3;
const section = () => ({overlay: {expected: [10, 0, 5, 10, 0, 0], observed: [1, 20, 5, 9, 0, 0], code: [1, 2, 0, 0, -1, 0]},
  deviations: 2, alerts: 1, jobs: 2, plan: {summary: "1 miswired", counts: {miswired: 1}, link_status: [0, 2, 5, 0, 0, 0]}});

test("the twin section decodes into typed arrays and is checked field by field", () => {
  const t = decodeTwin(section(), L);
  assert.deepEqual([...t.code], [1, 2, 0, 0, -1, 0]);
  assert.deepEqual([...t.expected], [10, 0, 5, 10, 0, 0]);
  assert.equal(t.plan.summary, "1 miswired");
  assert.deepEqual([...t.plan.linkStatus], [0, 2, 5, 0, 0, 0]);
  assert.equal(decodeTwin(null, L), null);
  assert.equal(decodeTwin({...section(), plan: null}, L).plan, null);
  const bad = section();
  bad.overlay.code[4] = 7;
  assert.throws(() => decodeTwin(bad, L), (e) => e instanceof FeedFormatError && /overlay.code\[4\]/.test(e.message));
  assert.throws(() => decodeTwin({...section(), overlay: {...section().overlay, expected: [1]}}, L), /expected 6 values/);
  assert.throws(() => decodeTwin({...section(), jobs: -1}, L), /frame.twin.jobs/);
});

test("a frame carries its twin section, or null", () => {
  const msg = {v: 1, type: "frame", seq: 1, t: 1, tick_s: 1, rate: Array(6).fill(0), util: Array(6).fill(0), twin: section()};
  const out = decodeFrame(msg, L, frameBuffers(L));
  assert.equal(out.twin.deviations, 2);
  assert.equal(decodeFrame({...msg, seq: 2, twin: null}, L, out).twin, null);
  assert.throws(() => decodeFrame({...msg, seq: 3, twin: {overlay: null}}, L, out), /frame.twin.overlay/);
  assert.equal(out.seq, 2, "nothing is written from a frame that does not decode");
});

test("overlay cables take the worse direction; plan colours by kind", () => {
  const t = decodeTwin(section(), L);
  const exp = overlayCables(t, L, "expected");
  assert.deepEqual(exp.get(OVERLAY_COLORS.below), [0]);
  assert.deepEqual(exp.get(OVERLAY_COLORS.unexplained), [1]);
  assert.equal(exp.size, 2);
  const plan = overlayCables(t, L, "plan");
  assert.deepEqual(plan.get(OVERLAY_COLORS.miswired), [1]);
  assert.deepEqual(plan.get(OVERLAY_COLORS.wrong), [2]);
  assert.equal(overlayCables(t, L, "off").size, 0);
  assert.equal(overlayCables(null, L, "expected").size, 0);
  assert.equal(CODE.unexplained, 2);
});

test("deviation rows keep the API's ranking and mark the alerted ones", () => {
  const rows = deviationRows({deviations: [
    {kind: "down", key: "0x1/5", link: -1, label: "leaf01 port 5 -> spine02 port 1", expected_gbps: 80, observed_gbps: 0, jobs: ["4242"]},
    {kind: "unexplained", key: "0x2/1", link: 7, label: "spine01 port 1 -> leaf02 port 5", expected_gbps: 0, observed_gbps: 30, jobs: []},
  ], alerts: [{deviation: "down", key: "0x1/5"}]});
  assert.deepEqual(rows.map((r) => [r.text, r.link, r.alert]), [["down", -1, true], ["unexplained", 7, false]]);
  assert.deepEqual(deviationRows(null), []);
});
