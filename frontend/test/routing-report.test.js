import assert from "node:assert/strict";
import {test} from "node:test";

import {ROUTING_RETRIES, routingLines, routingRetryDelay} from "../src/routing-report.js";

const REPORT = {engine: "ftree", engine_used: "minhop", requested_engine: "ftree",
  fallback: {engine: "minhop", reason: "ftree: ERR AB09 ..."}, unreachable_entries: 3, unreachable_host_entries: 2,
  entries: 1200, unreachable_pairs: 0, host_pairs: 992, ports: {min: 2, max: 6, mean: 3}, hop_histogram: {2: 56, 4: 936},
  credit_loops: {acyclic: true, text: "none"}, warnings: ["ftree: ERR AB09 ...; routed with minhop, as OpenSM does"]};

test("a fallback, unreachable entries and imbalance are flagged", () => {
  const lines = routingLines(REPORT);
  assert.deepEqual(lines[0], {text: "Engine: ftree → minhop (fallback)", level: "warn"});
  assert.deepEqual(lines[1], {text: "Unreachable (switch, LID) entries: 3 of 1,200 (2 towards hosts)", level: "bad"});
  assert.equal(lines[3].text, "Destinations per switch port: min 2, max 6, mean 3.0 (max/mean 2.00)");
  assert.equal(lines[3].level, "warn");
  assert.equal(lines.at(-1).level, "warn");
});

test("a clean report is all ok", () => {
  const lines = routingLines({...REPORT, fallback: null, engine_used: "ftree", unreachable_entries: 0,
    ports: {min: 3, max: 3, mean: 3}, warnings: []});
  assert.ok(lines.every((l) => l.level === "ok"), JSON.stringify(lines));
  assert.deepEqual(routingLines(null), []);
});

test("ftree's unrouted switch-to-switch entries are said, not flagged", () => {
  const lines = routingLines({...REPORT, fallback: null, engine_used: "ftree", unreachable_entries: 12,
    unreachable_host_entries: 0, unreachable_expected: 12, entries: 192});
  assert.deepEqual(lines[1], {text: "Unreachable (switch, LID) entries: 12 of 192 (0 towards hosts; 12 "
    + "switch-to-switch, unrouted by design as OpenSM's ftree leaves them)", level: "ok"});
  const worse = routingLines({...REPORT, unreachable_entries: 13, unreachable_host_entries: 1, unreachable_expected: 12});
  assert.equal(worse[1].level, "bad");
});

test("a report not published yet is asked again, later each time, then given up; other errors are final", () => {
  assert.equal(routingRetryDelay({status: 503}, 1), 1000);
  assert.equal(routingRetryDelay({status: 503}, 3), 3000);
  assert.equal(routingRetryDelay({status: 503}, ROUTING_RETRIES), 5000);
  assert.equal(routingRetryDelay({status: 503}, ROUTING_RETRIES + 1), null);
  assert.equal(routingRetryDelay({status: 404}, 1), null);
  assert.equal(routingRetryDelay({status: 0}, 1), null);
});
