import assert from "node:assert/strict";
import {test} from "node:test";
import {counterRows, directionLine, downSpans, recablingMarks, rollupSummary, withGaps} from "../src/charts/detail.js";

test("re-cablings of both directions become one marker per time, oldest first", () => {
  const spine = (n, port) => ({guid: `0x${n}`, port, node: `spine0${n}`});
  const body = {
    recabled: [{t: 120, from: spine(1, 2), to: spine(2, 3)}],
    reverse_recabled: [{t: 120, from: {guid: "hidden", port: 1, node: "host-4"}, to: {guid: "0x9", port: 3, node: null}},
      {t: 60, from: spine(2, 1), to: null}],
  };
  assert.deepEqual(recablingMarks(body), [
    {t: 60, text: "recabled: spine02 port 1 → nothing"},
    {t: 120, text: "recabled: spine01 port 2 → spine02 port 3; host-4 port 1 → 0x9 port 3"},
  ]);
  assert.deepEqual(recablingMarks({t: [], rate: []}), []);
  assert.deepEqual(recablingMarks(null), []);
});

test("ticks that never came break the line: a null point in every gap longer than 1.5 ticks", () => {
  const body = {t: [10, 11, 12, 20, 21], tick_s: 1, util: [0.1, null, 0.3, 0.4, 0.5], down: [false, true, false, false, false],
    reverse_util: [0.2, 0.2, 0.2, 0.2, 0.2]};
  const g = withGaps(body);
  assert.deepEqual(g.t, [10, 11, 12, 16, 20, 21]);
  assert.deepEqual(g.util, [0.1, null, 0.3, null, 0.4, 0.5]);
  assert.deepEqual(g.reverse_util, [0.2, 0.2, 0.2, null, 0.2, 0.2]);
  assert.deepEqual(g.down, [false, true, false, false, false, false]);
  assert.deepEqual(withGaps({t: [0, 6, 12], tick_s: 6, util: [1, 2, 3]}).t, [0, 6, 12]);  // 6 s ticks: no gap
});

test("down time of either direction becomes shaded stretches", () => {
  const body = {t: [1, 2, 3, 4, 5], tick_s: 1, down: [false, true, true, false, false],
    reverse_down: [false, false, false, false, true]};
  assert.deepEqual(downSpans(body), [{t0: 2, t1: 4}, {t0: 5, t1: 6}]);
  assert.deepEqual(downSpans({t: [1, 2], tick_s: 1}), []);
});

test("the rollup read-out weighs minutes by their coverage and never counts a minute without data as 0 %", () => {
  const body = {minute: ["a", "b", "c"], mean_util: [0.5, null, 0.2], max_util: [0.9, null, 0.4],
    coverage_s: [30, 0, 60], down_s: [30, 60, 0]};
  const sum = rollupSummary(body);
  assert.equal(sum.mean.toFixed(4), ((0.5 * 30 + 0.2 * 60) / 90).toFixed(4));
  assert.deepEqual([sum.peak, sum.covered, sum.down, sum.minutes], [0.9, 90, 90, 3]);
  assert.equal(rollupSummary({minute: ["a"], mean_util: [null], max_util: [null], coverage_s: [0], down_s: [60]}).mean, null);
});

test("each direction's rollup line is labelled with its sending end, and an unmeasured one says so", () => {
  const end = (node, port) => ({guid: "0x1", port, node});
  const fwd = {tx: end("leaf03", 5), rx: end("spine01", 1), minute: ["a", "b"], mean_util: [0.86, 0.9],
    max_util: [0.9, 0.91], coverage_s: [60, 60], down_s: [0, 0]};
  assert.equal(directionLine(fwd, "x"), "leaf03 port 5 -> spine01 port 1: mean 88%, peak 91% over 120 s measured");
  const back = {tx: end("spine01", 1), rx: end("leaf03", 5), minute: ["a"], mean_util: [null], max_util: [null],
    coverage_s: [0], down_s: [20]};
  assert.equal(directionLine(back, "x"), "spine01 port 1 -> leaf03 port 5: unmeasured in the last 1 min, down 20 s");
  assert.equal(directionLine({minute: []}, "leaf03:5 → spine01:1"), "leaf03:5 → spine01:1: no rollup yet");
  assert.equal(directionLine(null, "a → b"), "a → b: no rollup yet");
});

test("the counter table lists the counters read, those above their threshold first, rates per minute", () => {
  const body = {counters: [
    {counter: "LinkDownedCounter", value: 0, rate_per_min: null, threshold_per_min: 1, above: false},
    {counter: "SymbolErrorCounter", value: 100, rate_per_min: 300.123, threshold_per_min: 50, above: true},
    {counter: "QP1Dropped", value: null, rate_per_min: null, threshold_per_min: 100, above: false},
  ]};
  assert.deepEqual(counterRows(body), [
    {counter: "SymbolErrorCounter", value: "100", rate: "300.12", threshold: "50", above: true},
    {counter: "LinkDownedCounter", value: "0", rate: "-", threshold: "1", above: false},
  ]);
  assert.deepEqual(counterRows(null), []);
});
