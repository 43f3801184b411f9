import assert from "node:assert/strict";
import {test} from "node:test";
import {chartModel, chartPanes, chartSeries, defaultErrorSeries, errorSeries, FORMATS} from "../src/history/port-panes.js";
import {binCenters, downStretches, paneGeometry, seriesSpark, swapMarks, timeAxis, valueRange} from "../src/history/series-geometry.js";

/** A port series answer of `values` over [start, start + 10 * n) in n bins of 10 s. */
const answer = (values, start = 1000, extra = {}) => ({node: "leaf01", port: 3, start, end: start + 10 * values.length,
  t: values.map((_, i) => start + 10 * i), values, ...extra});

const CATALOG = ["tx_bytes_per_s", "rx_bytes_per_s", "utilization", "xmit_wait_per_s", "link_up", "effective_ber",
  "module_temperature_c", "error_SymbolErrorCounter_per_s", "error_LinkDownedCounter_per_s", "error_PortRcvErrors_per_s",
  "error_LocalLinkIntegrityErrors_per_s"]
  .map((name) => ({name}));

/** The x of each point of an SVG path ("M0,1L2,3M4,5"), with a null where a new subpath starts. */
function xs(d) {
  return [...d.matchAll(/([ML])([-\d.e]+),([-\d.e]+)/g)].map((m) => [m[1], Number(m[2])]);
}

test("bins are drawn at their centres on the window's time axis", () => {
  assert.deepEqual(binCenters(answer([1, 2, 3])), [1005, 1015, 1025]);
  const x = timeAxis(1000, 1030, 300);
  assert.deepEqual([x(1000), x(1015), x(1030)], [0, 150, 300]);
  assert.ok(x.ticks(3).every((t) => t.x >= 0 && t.x <= 300 && typeof t.text === "string"));
});

test("a null bin breaks the line: missing is never drawn as 0", () => {
  const x = timeAxis(1000, 1050, 50);
  const pane = paneGeometry([answer([0.5, null, 0.25, 0.5, null])], {x, height: 100});
  const points = xs(pane.lines[0].d);
  assert.deepEqual(points.map(([cmd, px]) => `${cmd}${px}`), ["M5", "M25", "L35"]);
  assert.equal(pane.lines[0].points, 3);
  assert.equal(pane.lines[0].last, 0.5);
  assert.equal(pane.lines[0].max, 0.5);
  assert.equal(pane.domain[0], 0, "a linear pane starts at 0");
  const none = paneGeometry([answer([null, null]), null], {x, height: 100});
  assert.ok(none.empty);
  assert.deepEqual(none.lines.map((l) => l.d), ["", ""]);
});

test("rates are scaled (bytes/s to Gb/s) and share a y scale; BER is drawn on a log scale in decades", () => {
  const x = timeAxis(1000, 1020, 20);
  const rate = paneGeometry([answer([25e9 / 8, 50e9 / 8]), answer([0, 100e9 / 8])], {x, height: 100, factor: 8e-9,
    format: FORMATS.gbps});
  assert.ok(Math.abs(rate.lines[1].max - 100) < 1e-9);
  assert.ok(rate.domain[1] >= 100);
  assert.ok(rate.ticks.some((t) => t.text === "100.0 Gb/s"));
  const ber = paneGeometry([answer([1e-12, 1e-9])], {x, height: 90, log: true, format: FORMATS.ber});
  assert.deepEqual(ber.domain, [1e-12, 1e-9]);
  assert.deepEqual(ber.ticks.map((t) => [t.text, Math.round(t.y)]), [["1e-12", 90], ["1e-11", 60], ["1e-10", 30], ["1e-9", 0]]);
  const zero = paneGeometry([answer([0, 1e-10])], {x, height: 90, log: true});
  assert.equal(xs(zero.lines[0].d).length, 2, "a BER of 0 stays on the line, at the bottom");
  assert.deepEqual(valueRange([[0, -1, null, 3, 2]], true), [2, 3]);
  assert.equal(valueRange([[null]]), null);
});

test("down bins of the link state merge into stretches; cable swaps inside the window become marks", () => {
  assert.deepEqual(downStretches(answer([1, 0, 0, 1, null, 0])), [{t0: 1010, t1: 1030}, {t0: 1050, t1: 1060}]);
  assert.deepEqual(downStretches(null), []);
  const body = answer([1, 1, 1], 1000, {swaps: [{t: 1025, from: "MT1", to: "MT2"}, {t: 5, from: "A", to: "B"},
    {t: 1001, from: {node: "spine01", port: 4}, to: null}]});
  assert.deepEqual(swapMarks(body), [{t: 1001, text: "cable swapped: spine01 port 4 → nothing"},
    {t: 1025, text: "cable swapped: MT1 → MT2"}]);
  assert.deepEqual(swapMarks({recabled: [{t: 7, from: "x", to: "y"}]}), [{t: 7, text: "cable swapped: x → y"}]);
  assert.deepEqual(swapMarks(null), []);
});

test("the error counters the store keeps are offered, a total first when there is one", () => {
  assert.deepEqual(errorSeries(CATALOG).map((s) => s.label), ["LinkDownedCounter", "LocalLinkIntegrityErrors",
    "PortRcvErrors", "SymbolErrorCounter"]);
  assert.equal(defaultErrorSeries(CATALOG), "error_SymbolErrorCounter_per_s", "\"LocalLink\" is no total of them");
  const withTotal = [...CATALOG, {name: "errors_total_per_s"}];
  assert.equal(errorSeries(withTotal)[0].name, "errors_total_per_s");
  assert.equal(defaultErrorSeries(withTotal), "errors_total_per_s");
  assert.equal(defaultErrorSeries([{name: "utilization"}]), null);
});

test("a port's chart asks every pane's series once, the link state last, and leaves out what the store lacks", () => {
  const panes = chartPanes(CATALOG, "error_PortRcvErrors_per_s");
  assert.deepEqual(panes.map((p) => p.key), ["rate", "utilization", "xmit_wait", "errors", "ber"]);
  assert.equal(panes[3].title, "Errors: PortRcvErrors");
  assert.deepEqual(chartSeries(panes, CATALOG), ["tx_bytes_per_s", "rx_bytes_per_s", "utilization", "xmit_wait_per_s",
    "error_PortRcvErrors_per_s", "effective_ber", "link_up"]);
  const lean = chartPanes([{name: "utilization"}], "error_PortRcvErrors_per_s");
  assert.deepEqual(lean.map((p) => p.key), ["utilization"]);
  assert.deepEqual(chartSeries(lean, [{name: "utilization"}]), ["utilization"]);
});

test("the chart model stacks the panes, drops the BER pane where none was stored, shades downs and marks swaps", () => {
  const panes = chartPanes(CATALOG, "error_SymbolErrorCounter_per_s");
  const bodies = {
    tx_bytes_per_s: answer([1e9, 2e9, null, 3e9], 1000, {swaps: [{t: 1022, from: "MT1", to: "MT2"}]}),
    rx_bytes_per_s: answer([1e9, 1e9, null, 1e9], 1000, {swaps: [{t: 1022, from: "MT1", to: "MT2"}]}),
    utilization: answer([0.2, 0.4, null, 0.6]),
    xmit_wait_per_s: null, // not answered
    error_SymbolErrorCounter_per_s: answer([0, 0, 5, 0]),
    effective_ber: answer([null, null, null, null]),
    link_up: answer([1, 1, 0, 1]),
  };
  const model = chartModel(bodies, panes, {start: 1000, end: 1040, width: 480, paneHeight: 50});
  assert.deepEqual(model.panes.map((p) => p.key), ["rate", "utilization", "xmit_wait", "errors"]);
  assert.deepEqual(model.panes.map((p) => p.empty), [false, false, true, false]);
  assert.equal(model.points, 3 + 3 + 3 + 4);
  assert.equal(model.plotWidth, 400);
  assert.ok(model.panes.every((p, i) => i === 0 || p.y0 >= model.panes[i - 1].y0 + 50), "panes do not overlap");
  assert.ok(model.height > model.panes[3].y0 + 50);
  const px = (v) => Math.round(v * 1000) / 1000;
  assert.deepEqual(model.downs.map((s) => [px(s.x), px(s.width)]), [[200, 100]]);
  assert.deepEqual(model.swaps.map((s) => [s.t, px(s.x), s.text]), [[1022, 220, "cable swapped: MT1 → MT2"]]);
  assert.equal(model.panes[0].lines[0].text, "out: last 24.0 Gb/s, highest 24.0 Gb/s");
  assert.equal(model.panes[2].lines[0].text, "ticks/s: –");
  const withBer = chartModel({...bodies, effective_ber: answer([1e-12, null, 1e-10, null])}, panes,
    {start: 1000, end: 1040, width: 480});
  assert.equal(withBer.panes.at(-1).key, "ber");
});

test("a sparkline reads its series over the window, with the link's down stretches", () => {
  const spark = seriesSpark(answer([1e-12, 1e-11, null, 1e-10]), {width: 40, height: 10, log: true, format: FORMATS.ber,
    up: answer([1, 0, 1, 1])});
  assert.equal(spark.points, 3);
  assert.deepEqual(spark.downs, [{x: 10, width: 10}]);
  assert.equal(spark.label, "3 bins, highest 1e-10, last 1e-10, down in 1 stretch");
  assert.ok(spark.d.startsWith("M5,10"));
  assert.equal(seriesSpark(null).label, "nothing stored in the window");
});
