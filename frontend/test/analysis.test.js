import assert from "node:assert/strict";
import {test} from "node:test";
import {congestionTable, describe, mergeAnalysis, mergeProgress} from "../src/analysis.js";
import {ApiError, api, csrfToken, errorText} from "../src/api.js";
import {context} from "../src/context.js";
import {feed} from "../src/feed.js";

test("the CSRF token comes from Django's cookie", () => {
  assert.equal(csrfToken("sessionid=abc; csrftoken=Tok%3D1; theme=dark"), "Tok=1");
  assert.equal(csrfToken("csrftoken=x=y"), "x=y");
  assert.equal(csrfToken("sessionid=abc"), "");
  assert.equal(csrfToken(undefined), "");
});

test("field errors, nested ones too, become one line naming the field", () => {
  assert.equal(errorText({params: {failed_cables: ["item 1: cable 5000 is outside 0..1023"]}}, 400),
    "params.failed_cables: item 1: cable 5000 is outside 0..1023");
  assert.equal(errorText({kind: ["\"x\" is not a valid choice."]}, 400), "kind: \"x\" is not a valid choice.");
  assert.equal(errorText({detail: "You do not have permission to perform this action."}, 403),
    "You do not have permission to perform this action.");
  assert.equal(errorText(null, 502), "HTTP 502");
});

const msg = (id, status, fraction, message = "") => ({v: 1, type: "progress", task: "analysis", id, kind: "ebb",
  status, fraction, message});

test("progress messages update, add and never undo a final state", () => {
  let rows = [{id: 3, kind: "ebb", status: "queued", progress: 0, result: null}];
  rows = mergeProgress(rows, msg(3, "running", 0.4, "400 of 1000 patterns"));
  assert.deepEqual([rows[0].status, rows[0].progress, rows[0].message], ["running", 0.4, "400 of 1000 patterns"]);
  rows = mergeProgress(rows, msg(3, "running", 0.2));
  assert.equal(rows[0].progress, 0.4, "an older progress message is ignored");
  rows = mergeProgress(rows, msg(5, "running", 0.1));
  assert.deepEqual(rows.map((r) => r.id), [5, 3], "an analysis someone else started is added, newest first");
  rows = mergeProgress(rows, msg(3, "done", 1, "eBB 68.7%"));
  rows = mergeAnalysis(rows, {id: 3, kind: "ebb", status: "done", progress: 1, result: {ebb: 0.687}});
  rows = mergeProgress(rows, msg(3, "running", 0.9));
  rows = mergeAnalysis(rows, {id: 3, kind: "ebb", status: "queued", progress: 0, result: null});
  const three = rows.find((r) => r.id === 3);
  assert.deepEqual([three.status, three.result], ["done", {ebb: 0.687}]);
  assert.equal(mergeProgress(rows, {task: "engine", id: 3, status: "running", fraction: 0.5}), rows);
  rows = mergeProgress(rows, msg(5, "failed", 0.1, "ftree: the fabric is not connected"));
  assert.deepEqual(describe(rows.find((r) => r.id === 5)), ["ftree: the fabric is not connected"]);
});

test("results read as eBB and what-if deltas", () => {
  const ebb = {kind: "ebb", status: "done", result: {ebb: 0.6871, engine: "minhop", patterns: 1000,
    pattern: "bisection", min: 0.625, max: 0.734, p5: 0.66, p95: 0.71}};
  assert.deepEqual(describe(ebb), ["eBB 68.7% (minhop, 1000 bisection patterns)", "range 62.5%–73.4%, 90% within 66.0%–71.0%"]);
  const whatif = {kind: "whatif_links", status: "done", result: {
    baseline: {engine: "minhop", ebb: 0.69}, alternative: {engine: "minhop", ebb: 0.63},
    failed: [{cable: 600, a: "leaf3/33", b: "spine1/4"}],
    summary: {jobs: 8, jobs_slower: 2, jobs_faster: 0, jobs_broken: 1, ebb_delta: -0.06,
      worst_job: {id: "llama-70b", comm_ratio: 1.5}}}};
  assert.deepEqual(describe(whatif), ["minhop → minhop without leaf3/33–spine1/4", "eBB 69.0% → 63.0%",
    "2 of 8 jobs slower, 0 faster, 1 without a route; worst llama-70b ×1.50"]);
  assert.deepEqual(describe({kind: "ebb", status: "running", message: "3 of 10 patterns"}), ["3 of 10 patterns"]);
});

function fakeFetch(answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({url, ...init});
    const [status, body] = answers.shift();
    return {ok: status < 400, status, json: async () => body};
  };
  return {fetch, calls};
}

test("the client lists, reads, asks whether it may create, and creates with the CSRF token", async () => {
  const {fetch, calls} = fakeFetch([[200, {count: 1, results: [{id: 1}]}], [200, {id: 1}],
    [200, {name: "Analysis List", actions: {POST: {}}}], [201, {id: 2, status: "queued"}], [200, {name: "x"}]]);
  const client = api().base("/api").fabric("my fab").fetch(fetch).cookie(() => "csrftoken=abc").analyses();
  assert.deepEqual(await client.list(5), [{id: 1}]);
  await client.get(1);
  assert.equal(await client.canCreate(), true);
  assert.deepEqual(await client.create("ebb", {patterns: 100}), {id: 2, status: "queued"});
  assert.equal(await client.canCreate(), false, "no POST action: not allowed");
  const root = "/api/fabrics/fabrics/my%20fab/analyses/";
  assert.deepEqual(calls.map((c) => [c.method, c.url]), [["GET", `${root}?limit=5`], ["GET", `${root}1/`],
    ["OPTIONS", root], ["POST", root], ["OPTIONS", root]]);
  const create = calls[3];
  assert.equal(create.headers["X-CSRFToken"], "abc");
  assert.equal(create.headers["Content-Type"], "application/json");
  assert.equal(create.credentials, "same-origin");
  assert.deepEqual(JSON.parse(create.body), {kind: "ebb", params: {patterns: 100}});
  assert.equal(calls[0].headers["X-CSRFToken"], undefined, "reads send no token");
});

test("a refused create is an ApiError naming the field", async () => {
  const {fetch} = fakeFetch([[400, {params: {patterns: ["1000000 is outside 1..20000"]}}]]);
  await assert.rejects(api().fabric("demo").fetch(fetch).cookie(() => "").analyses().create("ebb", {patterns: 1e6}),
    (error) => error instanceof ApiError && error.status === 400 && error.message === "params.patterns: 1000000 is outside 1..20000");
});

test("the feed passes progress messages to the context's progress event", () => {
  class Socket {
    static last = null;
    constructor() {
      Socket.last = this;
    }
    close() {}
  }
  const ctx = context();
  const seen = [];
  ctx.on("progress.test", (m) => seen.push([m.task, m.id, m.fraction, m.status]));
  feed().url("ws://h/ws/").context(ctx).socket(Socket).start();
  Socket.last.onmessage({data: JSON.stringify(msg(7, "running", 0.25))});
  Socket.last.onmessage({data: JSON.stringify({v: 1, type: "progress", task: "engine", id: 1, fraction: 0.05,
    status: "running", message: "routing"})});
  assert.deepEqual(seen, [["analysis", 7, 0.25, "running"], ["engine", 1, 0.05, "running"]]);
  assert.equal(ctx.status, "connecting", "progress alone does not make the feed live");
});

test("a RoCE what-if reads as imbalance, collisions and the slowest job", () => {
  const result = {params: {jobs: 2, qps: 4, same_seed: false}, sides: [
    {label: "InfiniBand LFT (ftree)", imbalance: 1, collisions: 0, max_flows_on_link: 1},
    {label: "InfiniBand adaptive routing", imbalance: 1, collisions: null, max_flows_on_link: null},
    {label: "RoCEv2 ECMP (4 QPs/connection)", imbalance: 2.5, collisions: 40, max_flows_on_link: 6}],
  summary: [{id: "a", vs_lft: [1, 1, 1.2]}, {id: "b", vs_lft: [1, 0.9, 1.8]}]};
  const lines = describe({kind: "whatif_roce", status: "done", result});
  assert.equal(lines[0], "2 jobs, 4 QP/connection, a hash seed per switch");
  assert.equal(lines[2], "InfiniBand adaptive routing: imbalance 1.00");
  assert.equal(lines[3], "RoCEv2 ECMP (4 QPs/connection): imbalance 2.50, 40 collisions (max 6 on a link)");
  assert.equal(lines[4], "slowest under ECMP: b ×1.80 the LFTs' time (adaptive ×0.90)");
});

test("a congestion what-if reads as its sides and a jobs x sides table", () => {
  const job = (id, comm_s, slowdown, label) => ({id, comm_s, slowdown, limiting_link: label ? {link: 3, label} : null});
  const result = {params: {jobs: 2, vls: 4, qos: false}, congestion_control: {source: "default"}, sides: [
    {key: "maxmin", label: "ideal congestion control (max-min)", jobs: [job("hot", 0.16, 1), job("victim", 0.032, 1)]},
    {key: "credit", label: "credit flow control (as configured)", roots: 1, held: 13, converged: true, iterations: 13,
      worst_slowdown: 11.25, jobs: [job("hot", 0.36, 2.25), job("victim", 0.36, 11.25, "gpu0008/1 -> leaf02/4")]},
    {key: "vl_separation", label: "VL separation (a lane per job)", roots: 1, held: 13, converged: false,
      iterations: 400, worst_slowdown: 2.25, jobs: [job("hot", 0.36, 2.25), job("victim", 0.024, 0.75)]},
    {key: "congestion_control", label: "IB congestion control", roots: 0, held: 0, converged: true, iterations: 1,
      worst_slowdown: 1, fecn_marks_per_s: 878906.2, becn_per_s: 878906.2, throttled_flows: 9,
      held_by: {fair: 9, marking: 0, table: 0}, jobs: [job("hot", 0.16, 1), job("victim", null, null)]}]};
  const lines = describe({kind: "whatif_congestion", status: "done", result});
  assert.equal(lines[0], "2 jobs, one lane as configured; VL separation over 4 lanes; congestion control: default settings");
  assert.equal(lines[1], "credit flow control (as configured): worst job ×11.25 of ideal, 1 congestion roots, 13 held links");
  assert.equal(lines[2], "VL separation (a lane per job): worst job ×2.25 of ideal, 1 congestion roots, 13 held links " +
    "(not converged after 400 iterations)");
  assert.equal(lines[3], "IB congestion control: worst job ×1.00 of ideal, 0 congestion roots, 0 held links; 878906 FECN/s, " +
    "878906 BECN/s, 9 flows throttled (9 at their fair share, 0 by sparse marking, 0 by the table)");
  const t = congestionTable(result);
  assert.deepEqual(t.head, ["job", "ideal congestion control (max-min)", "credit flow control (as configured)",
    "VL separation (a lane per job)", "IB congestion control"]);
  assert.deepEqual(t.rows.map((r) => r.id), ["hot", "victim"]);
  assert.deepEqual(t.rows[1].cells.map((c) => c.text), ["0.0320 s", "0.360 s ×11.25", "0.0240 s ×0.75", "never"]);
  assert.equal(t.rows[1].cells[1].title, "limited by gpu0008/1 -> leaf02/4");
  assert.equal(t.rows[0].cells[0].title, "");
});
