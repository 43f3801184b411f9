import assert from "node:assert/strict";
import {test} from "node:test";
import {GRADE_COLORS} from "../src/health-rows.js";
import {sparkline, trendRows} from "../src/health-trend.js";

const body = {tracked: true, t: [10, 20, 30, 40], raw: [null, 1e-6, 1e-5, 1e-4], grade: [null, "warning", "error", "error"],
  lanes: [1e-9, null, 2e-6, null]};

test("a trend's sparkline runs on a log scale over whole decades, a dot per graded point in its grade's colour", () => {
  const s = sparkline(body, {width: 90, height: 30});
  assert.equal(s.low, -6);
  assert.equal(s.high, -4);
  assert.equal(s.d, "M30.0,30.0L60.0,15.0L90.0,0.0"); // the grading not read is a gap, not a point
  assert.deepEqual(s.dots.map((p) => [p.grade, p.color]), [["warning", GRADE_COLORS.warning],
    ["error", GRADE_COLORS.error], ["error", GRADE_COLORS.error]]);
  assert.equal(s.dots[2].title, "1.0e-4 (error)");
  assert.equal(s.label, "raw BER over the last 4 gradings (30 s): 1.0e-6 → 1.0e-4, 1e-6..1e-4");
});

test("a gap in the middle lifts the pen; a flat trend still spans a decade; nothing kept says so", () => {
  const gap = sparkline({t: [1, 2, 3], raw: [1e-5, null, 1e-5], grade: ["error", null, "error"]}, {width: 20, height: 10});
  assert.equal(gap.d, "M0.0,10.0M20.0,10.0");
  assert.equal(gap.high - gap.low, 1);
  const zero = sparkline({t: [1], raw: [0], grade: ["normal"]});
  assert.equal(zero.low, -18);
  assert.equal(sparkline({t: [], raw: [], grade: []}).label, "no graded BER kept");
  assert.equal(sparkline(null).d, "");
});

test("the panel's rows: the lanes read, or why none are, and a note for ports with no trend kept", () => {
  assert.deepEqual(trendRows(body), [["raw BER per lane", "0: 1.0e-9, 2: 2.0e-6", null]]);
  assert.deepEqual(trendRows({...body, lanes: Array(12).fill(null)}),
    [["raw BER per lane", "no lane read (the tool reports the port's raw BER only)", null]]);
  assert.deepEqual(trendRows({tracked: false, t: [], raw: [], grade: [], lanes: null}),
    [["raw BER per lane", "not kept for ports graded normal", null],
      ["BER trend", "none kept: graded normal at every recent grading", null]]);
  assert.deepEqual(trendRows(null), []);
});
