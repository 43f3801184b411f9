import assert from "node:assert/strict";
import {test} from "node:test";
import {cableEntries, cableOf, GRADE_COLORS, gradeColor, healthCables, healthLegend, healthProblem, healthRows,
  MARK_COLORS, worseGrade} from "../src/health-rows.js";
import {healthSource} from "../src/health-source.js";

// spine0 (ports 1, 2) -- leaf0 port 9, leaf1 port 9; leaf0 port 1 -- host0 port 1
const fabric = {n: 4, L: 3, nodes: {name: ["spine0", "leaf0", "leaf1", "host0"], guid: ["0x1", "0x2", "0x3", "0x4"]},
  links: {a: Int32Array.of(0, 0, 1), b: Int32Array.of(1, 2, 3), aPort: Int32Array.of(1, 2, 1), bPort: Int32Array.of(9, 9, 1)}};

const entry = (node, index, port, grade, extra = {}) => ({node, node_index: index, guid: fabric.nodes.guid[index], port,
  grade, reasons: [], up: true, ber: null, module: {present: false}, cable: null, downs: null, ...extra});

test("grades have their colours, anything unknown grey; the worse of two grades wins", () => {
  assert.equal(gradeColor("warning"), GRADE_COLORS.warning);
  assert.equal(gradeColor("error"), GRADE_COLORS.error);
  assert.equal(gradeColor("bogus"), GRADE_COLORS.unknown);
  assert.notEqual(GRADE_COLORS.warning, GRADE_COLORS.error);
  assert.equal(worseGrade("warning", "error"), "error");
  assert.equal(worseGrade("error", "warning"), "error");
  assert.equal(worseGrade("unknown", "normal"), "normal");
  assert.equal(worseGrade(null, "warning"), "warning");
  assert.equal(worseGrade(null, null), "unknown");
});

test("a report's port end is found by GUID, else by index when the name agrees or is hidden", () => {
  assert.equal(cableOf({node: "spine0", guid: "0x1", node_index: 0, port: 2}, fabric), 1);
  assert.equal(cableOf({node: "leaf0", guid: "0x2", node_index: 99, port: 9}, fabric), 0);
  assert.equal(cableOf({node: "host-3", guid: "hidden", node_index: 3, port: 1}, fabric), 2);
  assert.equal(cableOf({node: "other", guid: null, node_index: 3, port: 1}, fabric), -1);
  assert.equal(cableOf({node: "spine0", guid: "0x1", node_index: 0, port: 7}, fabric), -1);
});

test("a cable takes the worse grade of its listed ends; hot modules and downs are marked", () => {
  const report = {summary: {grades: {normal: 10, warning: 2, error: 1, unknown: 0}}, worst: [
    entry("leaf0", 1, 9, "error", {downs: {down: false, downs_24h: 3}}),
    entry("spine0", 0, 1, "warning", {module: {present: true, status: "warning", temperature_c: 76, temperature_warning_c: 75}}),
    entry("spine0", 0, 2, "warning"),
  ]};
  const shown = healthCables(report, fabric);
  assert.equal(shown.cables.get(0).grade, "error");
  assert.equal(shown.cables.get(0).entries.length, 2);
  assert.equal(shown.cables.get(1).grade, "warning");
  assert.equal(shown.cables.has(2), false);
  assert.deepEqual([...shown.groups], [[GRADE_COLORS.warning, [1]], [GRADE_COLORS.error, [0]]]);
  assert.deepEqual(shown.marks.map((m) => [m.kind, m.node, m.cable, m.color]),
    [["down", 1, 0, MARK_COLORS.down], ["hot", 0, 0, MARK_COLORS.hot]]);
  assert.equal(shown.truncated, false);
  const cut = healthCables({...report, summary: {grades: {warning: 40, error: 20}}}, fabric);
  assert.equal(cut.truncated, true);
  assert.equal(cut.flagged, 60);
  assert.equal(healthCables(null, fabric).cables.size, 0);
  assert.equal(healthCables(report, null).cables.size, 0);
});

test("the legend counts the cables by grade and says what is not shown", () => {
  const report = {summary: {grades: {warning: 5, error: 0}}, worst: [entry("spine0", 0, 1, "warning")]};
  const labels = healthLegend(healthCables(report, fabric)).map((d) => d.label);
  assert.ok(labels.includes("warning (1)"));
  assert.ok(labels.includes("error (0)"));
  assert.ok(labels.includes("other cables: normal or not reported"));
  assert.ok(labels.includes("worst 1 shown of 5 ports graded warning or error"));
  const all = healthLegend(healthCables({...report, summary: {grades: {warning: 1, error: 0}}}, fabric));
  assert.ok(all.some((d) => d.label === "worst 1 shown (every port graded warning or error)"));
  assert.deepEqual(healthLegend(null, "no health report yet"), [{label: "no health report yet", color: null, kind: "note"}]);
});

test("the port panel's rows: grade, BER with its window, module against its thresholds, inventory, downs", () => {
  const e = entry("leaf0", 1, 9, "error", {
    reasons: ["BER warning", "downs in 24 h"], up: true,
    ber: {grade: "warning", raw: 2.5e-6, effective: 1.2e-12, symbol: 0, raw_grade: "warning", effective_grade: "normal",
      symbol_grade: "normal", window_s: 600},
    module: {present: true, status: "warning", temperature_c: 76.04, temperature_warning_c: 75, temperature_alarm_c: 80},
    cable: {vendor: "Mellanox", pn: "MMA4Z00", sn: "MT123", length_m: 3},
    downs: {down: false, downs_24h: 2, downs_7d: 4, downtime_24h_s: 18, critical_24h: 1, repeated: true, episodes: [
      {start: 3600, end: 3609, open: false, duration_s: 9, downs: 1, critical: false},
      {start: 7200, end: null, open: true, duration_s: null, downs: 2, critical: true}]},
  });
  const rows = healthRows(e, (t) => `t${t}`);
  const byLabel = Object.fromEntries(rows.filter((r) => r[0] !== "down at").map((r) => [r[0], r.slice(1)]));
  assert.deepEqual(byLabel.grade, ["error (BER warning, downs in 24 h)", "error"]);
  assert.deepEqual(byLabel.BER, ["warning, over 10 min", "warning"]);
  assert.deepEqual(byLabel["raw BER"], ["2.5e-6", "warning"]);
  assert.deepEqual(byLabel["effective BER"], ["1.2e-12", "normal"]);
  assert.deepEqual(byLabel["symbol BER"], ["0", "normal"]);
  assert.deepEqual(byLabel.module, ["76 °C (warning 75 °C, alarm 80 °C)", "warning"]);
  assert.deepEqual(byLabel.cable, ["Mellanox MMA4Z00, serial MT123, 3 m", null]);
  assert.deepEqual(byLabel.downs, ["2 in 24 h, 4 in 7 d; down 18 s in 24 h, repeated", "error"]);
  assert.deepEqual(rows.filter((r) => r[0] === "down at"), [
    ["down at", "t3600: 9 s", "warning"], ["down at", "t7200: still down, 2 downs (long enough to kill jobs)", "error"]]);
  const bare = healthRows(entry("leaf0", 1, 9, "error", {up: false, ber: {grade: "unknown", window_s: null}}));
  assert.deepEqual(bare.find((r) => r[0] === "BER"), ["BER", "unknown, no window yet", "unknown"]);
  assert.deepEqual(bare.find((r) => r[0] === "module"), ["module", "no module read", null]);
  assert.deepEqual(bare.find((r) => r[0] === "downs"), ["downs", "down now", "error"]);
});

test("a cable's listed ends, and why there is no report", () => {
  const report = {worst: [entry("leaf0", 1, 9, "warning"), entry("spine0", 0, 1, "error"), entry("leaf1", 2, 9, "warning")]};
  assert.deepEqual(cableEntries(report, fabric, 0).map((x) => x.end), ["leaf0 port 9", "spine0 port 1"]);
  assert.deepEqual(cableEntries(report, fabric, 2), []);
  assert.equal(cableEntries(null, fabric, 0).length, 0);
  assert.equal(healthProblem({status: 404, message: "x"}), "no health report yet");
  assert.match(healthProblem({status: 403}), /not allowed/);
  assert.match(healthProblem({status: 0, message: "network error: down"}), /unavailable: network error/);
});

test("the health source asks once at a time, reuses a young answer and tells its listeners", async () => {
  let calls = 0;
  let clock = 0;
  let answer = () => Promise.resolve({worst: []});
  const source = healthSource(() => (++calls, answer()), {maxAgeMs: 1000, now: () => clock});
  const heard = [];
  source.on("a", (report, problem) => heard.push([report, problem]));
  await Promise.all([source.get(), source.refresh()]);
  assert.equal(calls, 1);
  await source.get();
  assert.equal(calls, 1);
  assert.deepEqual(source.report(), {worst: []});
  clock = 2000;
  answer = () => Promise.reject(Object.assign(new Error("none"), {status: 404}));
  await source.get();
  assert.equal(calls, 2);
  assert.equal(source.report(), null);
  assert.equal(source.problem(), "no health report yet");
  assert.deepEqual(heard, [[{worst: []}, ""], [null, "no health report yet"]]);
  source.on("a", null);
  await source.refresh();
  assert.equal(heard.length, 2);
});
