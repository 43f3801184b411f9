import assert from "node:assert/strict";
import {test} from "node:test";
import {storedSeries} from "../src/charts/detail.js";
import {rowSpark} from "../src/history/health-sparklines.js";
import {MAX_PORTS, pageQuery, parsePorts, portBodies} from "../src/history/history-page.js";
import {BATCH_PORTS, BATCH_VALUES, limiter, tsdbClient} from "../src/history/tsdb-client.js";
import {ApiError} from "../src/api.js";

const answer = (values, extra = {}) => ({node: "leaf01", port: 3, start: 0, end: 10 * values.length,
  t: values.map((_, i) => 10 * i), values, ...extra});

test("the address names the charted ports by node and port; the last colon splits them; bad entries are left out", () => {
  assert.deepEqual(parsePorts("?ports=leaf01:3,0x0002c9030000abcd:1,host-7:2,leaf01:3"), [
    {node: "leaf01", port: 3}, {node: "0x0002c9030000abcd", port: 1}, {node: "host-7", port: 2}]);
  assert.deepEqual(parsePorts("?ports=odd:name:4,:1,leaf:0,leaf:256,leaf:x,leaf"), [{node: "odd:name", port: 4}]);
  assert.deepEqual(parsePorts(""), []);
  const many = Array.from({length: 40}, (_, i) => `sw${i}:1`).join(",");
  assert.equal(parsePorts(`?ports=${many}`).length, MAX_PORTS);
  const state = {range: {key: "7d"}, ports: [{node: "leaf01", port: 3}, {node: "spine 2", port: 1}], errors: "error_x_per_s"};
  const query = pageQuery(state);
  assert.equal(query, "?range=7d&ports=leaf01:3,spine+2:1&errors=error_x_per_s");
  assert.deepEqual(parsePorts(query), state.ports);
  assert.equal(pageQuery({range: {key: "1h"}, ports: null, errors: null}), "?range=1h");
});

test("the history client asks the port series and top-N endpoints, errors as ApiError", async () => {
  const calls = [];
  const fetch = async (url) => {
    calls.push(url);
    return url.includes("nosuch") ? {ok: false, status: 404, json: async () => ({detail: "no node 'nosuch' in fabric demo"})}
      : {ok: true, status: 200, json: async () => ({ports: []})};
  };
  const client = tsdbClient().base("/api").fabric("my fab").fetch(fetch);
  await client.portSeries("leaf 01", 3, "utilization", {start: 100.12345, end: 200, points: 50});
  await client.top("error_SymbolErrorCounter_per_s", {start: 100, end: 200, n: 5});
  assert.deepEqual(calls, [
    "/api/fabrics/fabrics/my%20fab/ports/leaf%2001/3/tsdb/?series=utilization&start=100.123&end=200&points=50",
    "/api/fabrics/fabrics/my%20fab/tsdb/top/?series=error_SymbolErrorCounter_per_s&start=100&end=200&n=5"]);
  await assert.rejects(client.portSeries("nosuch", 1, "utilization", {start: 0, end: 1, points: 1}),
    (e) => e instanceof ApiError && e.status === 404 && e.message === "no node 'nosuch' in fabric demo");
});

test("the request queue runs at most its limit at once, in the order asked, and goes on after a failure", async () => {
  const queue = limiter(2);
  let running = 0;
  let most = 0;
  const order = [];
  const job = (i) => () => new Promise((resolve, reject) => {
    running += 1;
    most = Math.max(most, running);
    order.push(i);
    setTimeout(() => ((running -= 1), i === 1 ? reject(new Error("boom")) : resolve(i)), 5);
  });
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => queue(job(i))));
  assert.equal(most, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
});

test("the port panel draws a cable's stored history as it draws the ring: both directions, downs and swaps", () => {
  const a = answer([0.5, null, 0.7], {swaps: [{t: 12, from: "MT1", to: "MT2"}]});
  const b = answer([0.1, 0.2, 0.3], {node: "spine01", port: 9});
  const s = storedSeries(a, b, answer([1, 0, 1]), null);
  assert.deepEqual(s.t, [5, 15, 25]);
  assert.equal(s.tick_s, 10);
  assert.deepEqual(s.util, [0.5, null, 0.7]);
  assert.deepEqual(s.reverse_util, [0.1, 0.2, 0.3]);
  assert.deepEqual(s.down, [false, true, false]);
  assert.deepEqual(s.reverse_down, [false, false, false]);
  assert.deepEqual(s.marks, [{t: 12, text: "leaf01 port 3: cable swapped: MT1 → MT2"}]);
  const lone = storedSeries(null, b, null, null);
  assert.deepEqual(lone.util, [null, null, null]);
  assert.deepEqual(storedSeries(null, null, null, null).t, []);
});

test("a Health row's sparkline shows the stored BER, else the module temperature", () => {
  const ber = rowSpark(answer([1e-12, 1e-10]), null, answer([1, 1]));
  assert.equal(ber.series, "effective BER");
  assert.equal(ber.spark.points, 2);
  const hot = rowSpark(answer([null, null]), answer([70, 78.5]), null);
  assert.equal(hot.series, "module temperature");
  assert.equal(hot.spark.label, "2 bins, highest 78.5 °C, last 78.5 °C");
  assert.equal(rowSpark(null, null, null).spark.points, 0);
});

test("a job's links are one pane of lines, the hottest named, and its run reads in UTC", async () => {
  const {jobChartModel, runText} = await import("../src/history/job-links.js");
  const body = {job: "llm-70b", series: "utilization", unit: "ratio", start: 0, end: 40, t: [0, 10, 20, 30], count: 12,
    links: [{node: "leaf01", port: 3, value: 0.9, values: [0.8, 1, null, 0.9]},
      {node: null, guid: "hidden", port: 1, value: null, values: [null, null, null, null]}]};
  const model = jobChartModel(body, {width: 480, height: 100});
  assert.equal(model.panes.length, 1);
  const [pane] = model.panes;
  assert.equal(pane.title, "utilization of the 2 hottest of 12 links");
  assert.deepEqual(pane.lines.map((l) => [l.series, l.points, l.text]), [["leaf01:3", 3, "leaf01 port 3: 90%"],
    ["hidden:1", 0, "hidden port 1: –"]]);
  assert.equal(model.points, 3);
  assert.ok(pane.lines[0].d.startsWith("M50,"), "the first bin at its centre: 5 s of 40 over 400 px");
  assert.equal(runText({running: true, first: Date.UTC(2026, 11, 6, 22, 10) / 1000}), "running since 2026-12-06 22:10 UTC");
  assert.equal(runText({running: false, first: 0, last: 5400}), "ran 1970-01-01 00:00 – 1970-01-01 01:30 UTC");
  assert.equal(runText({running: true, first: null}), "running (first noted now)");
});

test("the history client asks a job's links over its run unless given a window", async () => {
  const calls = [];
  const client = tsdbClient().fabric("demo").fetch(async (url) => (calls.push(url), {ok: true, status: 200,
    json: async () => ({jobs: [{id: "a"}]})}));
  await client.jobLinks("job 1", {points: 100, n: 20});
  await client.jobLinks("job 1", {start: 1, end: 2, points: 100, n: 20});
  assert.deepEqual(await client.jobs(), [{id: "a"}]);
  assert.deepEqual(calls, ["/api/fabrics/fabrics/demo/jobs/job%201/tsdb/?series=utilization&points=100&n=20",
    "/api/fabrics/fabrics/demo/jobs/job%201/tsdb/?series=utilization&start=1&end=2&points=100&n=20",
    "/api/fabrics/fabrics/demo/jobs/"]);
});

test("the history client asks several ports' series in one request, split only where the API's caps say", async () => {
  const calls = [];
  const client = tsdbClient().base("/api/").fabric("demo").fetch(async (url) => {
    calls.push(url);
    const ports = new URL(url, "http://x").searchParams.getAll("port");
    return {ok: true, status: 200, json: async () => ({t: [0], start: 0, end: 1, series: {},
      ports: ports.map((asked) => ({asked}))})};
  });
  const ports = [{node: "leaf 01", port: 3}, {node: "host-7", port: 1}];
  const one = await client.portsSeries(ports, ["utilization", "link_up"], {start: 1.23456, end: 2, points: 10});
  assert.deepEqual(calls, ["/api/fabrics/fabrics/demo/tsdb/ports/?port=leaf+01%3A3&port=host-7%3A1"
    + "&series=utilization&series=link_up&start=1.235&end=2&points=10"]);
  assert.deepEqual(one.ports.map((p) => p.asked), ["leaf 01:3", "host-7:1"]);
  calls.length = 0;
  const many = Array.from({length: 150}, (_, i) => ({node: `sw${i}`, port: 1}));
  const all = await client.portsSeries(many, ["utilization"], {start: 0, end: 1, points: 100});
  assert.deepEqual(calls.map((u) => new URL(u, "http://x").searchParams.getAll("port").length), [BATCH_PORTS, BATCH_PORTS, 22]);
  assert.deepEqual(all.ports.map((p) => p.asked), many.map((p) => `${p.node}:${p.port}`), "in the order asked");
  calls.length = 0;
  const seven = ["a", "b", "c", "d", "e", "f", "g"];
  await client.portsSeries(many.slice(0, 40), seven, {start: 0, end: 1, points: 4000});
  const per = Math.floor(BATCH_VALUES / (7 * 4000));
  assert.deepEqual(calls.map((u) => new URL(u, "http://x").searchParams.getAll("port").length), [per, per, 40 - 2 * per]);
  calls.length = 0;
  await client.switchSeries("leaf 01", "utilization", {start: 0, end: 1, points: 5});
  assert.deepEqual(calls, ["/api/fabrics/fabrics/demo/nodes/leaf%2001/tsdb/?series=utilization&start=0&end=1&points=5"]);
});

test("a several-ports answer becomes each port's answers in the single-port shape, or its error", () => {
  const answer = {start: 0, end: 20, t: [0, 10], series: {utilization: {unit: "ratio", agg: "mean"},
    link_up: {unit: "bool", agg: "min"}},
  ports: [{asked: "leaf01:3", node: "leaf01", port: 3, values: {utilization: [0.5, null], link_up: [1, 0]},
    swaps: [{t: 5, from: "a", to: "b"}]},
  {asked: "gpu1:1", node: "gpu1", port: 1, error: {status: 404, detail: "no node 'gpu1' in fabric demo"}}]};
  const [a, b] = portBodies(answer, ["utilization", "link_up"]);
  assert.deepEqual(a.bodies.utilization, {node: "leaf01", port: 3, series: "utilization", unit: "ratio", agg: "mean",
    start: 0, end: 20, t: [0, 10], values: [0.5, null], swaps: [{t: 5, from: "a", to: "b"}]});
  assert.deepEqual(a.bodies.link_up.values, [1, 0]);
  assert.deepEqual(b, {error: "no node 'gpu1' in fabric demo"});
  const state = {range: {key: "6h"}, ports: null, errors: null, switchNode: "leaf01", switchSeries: "xmit_wait_per_s"};
  assert.equal(pageQuery(state), "?range=6h&switch=leaf01&switch_series=xmit_wait_per_s");
  assert.equal(pageQuery({...state, switchSeries: "utilization"}), "?range=6h&switch=leaf01");
});

test("a switch's strip: a row per port on the port charts' time axis, coloured by value, grey where none stored", async () => {
  const {EMPTY, overWindow, stripModel, seriesReading} = await import("../src/history/switch-ports.js");
  const body = {node: "leaf01", series: "utilization", unit: "ratio", agg: "mean", start: 0, end: 40, t: [0, 10, 20, 30],
    ports: [{port: 1, peer: {node: "spine01", port: 4}, values: [0, 0.5, 1, null]},
      {port: 2, peer: null, values: [null, null, null, null]}]};
  const m = stripModel(body, {width: 480, rowHeight: 10});
  assert.equal(m.left, 70);
  assert.equal(m.plotWidth, 400, "the port charts' plot width for the same width");
  assert.equal(m.binWidth, 100);
  assert.deepEqual(m.rows.map((r) => [r.port, r.y, r.text]), [[1, 4, "50%"], [2, 14, "–"]]);
  assert.equal(m.cells, 3);
  assert.deepEqual(m.domain, [0, 1]);
  assert.equal(m.color(null), EMPTY);
  assert.notEqual(m.color(0), m.color(1));
  assert.equal(m.color(2), m.color(1), "clamped");
  assert.equal(overWindow([1, null, 3], "mean"), 2);
  assert.equal(overWindow([1, null, 3], "max"), 3);
  assert.equal(overWindow([1, null, 0], "min"), 0);
  assert.equal(overWindow([null], "mean"), null);
  const rates = stripModel({...body, series: "tx_bytes_per_s", unit: "bytes/s", ports: [{port: 1, values: [1.25e9, 2.5e9]}],
    t: [0, 20]}, {width: 480});
  assert.deepEqual(rates.domain, [0, 20], "bytes/s read as Gb/s from 0");
  assert.equal(seriesReading({series: "link_up", unit: "bool"}).format(0), "down");
  const ber = stripModel({...body, series: "effective_ber", unit: "ratio", agg: "max",
    ports: [{port: 1, values: [1e-12, 1e-6, 0]}], t: [0, 10, 20]}, {width: 480});
  assert.deepEqual(ber.domain, [1e-12, 1e-6]);
  assert.equal(ber.color(0), EMPTY, "a log scale has no colour for 0");
});
