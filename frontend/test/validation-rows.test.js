import assert from "node:assert/strict";
import {test} from "node:test";
import {withProblems} from "../src/pages/validation.js";
import {adviceAction, adviceCells, adviceSummary, checkRows, digestText, evidenceText, findingRow, isolatedCells,
  isolatedSummary, kpiTiles, whatifText} from "../src/validation-rows.js";

// Shaped like GET /api/fabrics/fabrics/<slug>/validation/ (ibweb.live.validation.answer.validation_for).
const KPIS = {connected_endpoints: {connected: 63, expected: 64, share: 0.984375},
  topology_correctness: null, healthy_links: {healthy: 126, links: 128, share: 0.984375, below_expected: 1, graded: 128}};
const advised = (extra = {}) => ({rank: 1, cable: 5, link: "leaf01/3 - dgx0003/1", node: "leaf01", port: 3, lid: 7,
  guid: "0x0000000000000007", grade: "error", score: 3e-4, failing_again: false, disconnects: ["dgx0003"],
  commands: {isolate: "ibportstate 7 3 disable", reenable: "ibportstate 7 3 enable"},
  note: "re-enable after a clean test period of 126 minutes; cuts dgx0003 off the fabric", jobs: [], other_jobs: 0,
  whatif: null, whatif_request: {kind: "whatif_links", params: {failed_cables: [5], ebb_patterns: 0}}, ...extra});

test("kpiTiles: shares as percentages graded against 100% and 99%, a missing plan says so", () => {
  const tiles = kpiTiles(KPIS);
  assert.deepEqual(tiles.map((t) => [t.key, t.value, t.grade]), [["connected_endpoints", "98.4%", "error"],
    ["topology_correctness", "–", "unknown"], ["healthy_links", "98.4%", "error"]]);
  assert.equal(tiles[0].detail, "63 of 64 hosts cabled");
  assert.equal(tiles[1].detail, "no cabling plan to compare with");
  assert.equal(tiles[2].detail, "126 of 128 links; 1 below expected rate");
  const all = kpiTiles({...KPIS, connected_endpoints: {connected: 64, expected: 64, share: 1},
    topology_correctness: {share: 0.995, planned_cables: 200}});
  assert.deepEqual(all.map((t) => t.grade), ["normal", "warning", "error"]);
  assert.equal(all[1].detail, "planned cables as planned, of 200");
  assert.deepEqual(kpiTiles(null).map((t) => t.value), ["–", "–", "–"]);
});

test("checkRows: passed, failed with their count, skipped with the reason", () => {
  assert.deepEqual(checkRows({link_below_expected: {status: "fail", findings: 1},
    sm_mastership: {status: "skipped", findings: 0, why: "no sminfo given"}, duplicate_ids: {status: "pass", findings: 0},
    firmware: {status: "fail", findings: 3}}), [
    ["Links below their expected width or speed", "1 finding", "fail"],
    ["Subnet manager mastership", "skipped: no sminfo given", "skipped"],
    ["Duplicate GUIDs and LIDs", "passed", "pass"], ["Firmware compliance", "3 findings", "fail"]]);
});

test("findingRow and evidenceText: the evidence in one bounded line, the map link kept", () => {
  const f = {check: "pkey_mismatch", severity: "error", subject: "dgx0003/1 - leaf01/3", link: 5,
    message: "P_Key mismatch: dgx0003/1 has 0x0001 that leaf01/3 lacks (base P_Keys)",
    evidence: {ca: "dgx0003/1", only_at_ca: ["0x0001"], only_at_switch: [], nested: {a: 1}, none: null},
    map_url: "/fabrics/pod/?focus=link:5"};
  const r = findingRow(f);
  assert.deepEqual(r.cells.slice(0, 3), ["error", "P_Key mismatches across a link", "dgx0003/1 - leaf01/3"]);
  assert.equal(r.cells[4], 'ca: dgx0003/1; only at ca: 0x0001; only at switch: ; nested: {"a":1}; none: –');
  assert.equal(r.mapUrl, "/fabrics/pod/?focus=link:5");
  assert.equal(findingRow({...f, map_url: null, check: "fan"}).mapUrl, null);
  const long = evidenceText({holders: Array.from({length: 100}, (_, i) => `node${i}`)}, 50);
  assert.equal(long.length, 50);
  assert.ok(long.endsWith("…"));
});

test("whatifText: the jobs on the cable and the what-if's outcome", () => {
  assert.equal(whatifText(advised()), "no running job crosses this cable; what-if not run");
  const two = advised({jobs: [{id: "job-1", tenant: "acme"}], other_jobs: 1,
    whatif: {status: "done", summary: {jobs: 2, jobs_slower: 1, jobs_broken: 0},
      jobs: [{id: "job-1", comm_ratio: 1.25}]}});
  assert.equal(whatifText(two), "2 running jobs cross it (job-1); what-if: 1 slower, 0 cut off, worst 1.25× communication time");
  assert.equal(whatifText(advised({whatif: {status: "running"}})), "no running job crosses this cable; what-if running");
  assert.equal(whatifText(advised({whatif: {status: "failed", error: "no jobs"}})),
    "no running job crosses this cable; what-if failed: no jobs");
});

test("adviceCells and adviceSummary: commands, a port failing again has no re-enable", () => {
  assert.deepEqual(adviceCells(advised()).slice(0, 4), ["1", "leaf01 port 3", "isolate", "error"]);
  assert.deepEqual(adviceCells(advised()).slice(6), ["ibportstate 7 3 disable", "ibportstate 7 3 enable"]);
  const again = adviceCells(advised({failing_again: true, commands: {isolate: "ibportstate 7 3 disable", reenable: null}}));
  assert.deepEqual([again[2], again[3], again[7]], ["replace", "error, failing again", "replace first"]);
  assert.equal(adviceSummary(null), "No isolation advice: the fabric's ports are not graded yet.");
  assert.equal(adviceSummary({advised: [], candidates: 0, cap: 10}), "No port is graded bad enough to take out of service.");
  assert.match(adviceSummary({advised: [advised()], candidates: 12, cap: 10, clean_test_s: 7560}),
    /^1 of 12 candidate ports advised \(at most 10 at once; 11 held back by the cap\)\. Never executed.*126 minutes\.$/);
});

test("digestText: new, resolved and changed findings since the baseline, the KPIs that moved", () => {
  assert.equal(digestText(null), "No earlier report to compare with yet.");
  const d = {since: 1796500000, new: [{}], resolved: [], changed: [{}, {}],
    kpis: {healthy_links: {was: 1, now: 0.984375}, connected_endpoints: {was: 1, now: 1}, topology_correctness: {was: null, now: null}}};
  assert.equal(digestText(d, () => "T"), "Since T UTC: 1 new, 0 resolved, 2 changed severity; healthy links 100.0% → 98.4%.");
});

test("withProblems: the API address with or without ?problems=1", () => {
  assert.equal(withProblems("/api/fabrics/fabrics/pod/validation/", true), "/api/fabrics/fabrics/pod/validation/?problems=1");
  assert.equal(withProblems("/api/fabrics/fabrics/pod/validation/?problems=1", false), "/api/fabrics/fabrics/pod/validation/");
});

test("adviceAction: a port failing again after an isolation is labelled replace, the others isolate", () => {
  const replace = adviceAction(advised({failing_again: true, action: "replace", commands: {isolate: null, reenable: null}}));
  assert.deepEqual([replace.action, replace.label, replace.severity], ["replace", "replace", "critical"]);
  assert.match(replace.title, /replace the cable or transceiver/);
  assert.deepEqual([adviceAction(advised({action: "isolate"})).label, adviceAction(advised()).severity], ["isolate", "warning"]);
  assert.equal(adviceAction(advised({action: "replace"})).label, "replace");  // the report's action alone suffices
});

test("isolatedCells and isolatedSummary: the ports isolated now, since when, listed until seen enabled", () => {
  const r = {node: "leaf01", port: 3, guid: "0x0000000000000007", isolated_at: 1796500000, last_seen_at: 1796503600,
    source: "iblinkinfo:12"};
  assert.deepEqual(isolatedCells(r, (t) => `T${t}`), ["leaf01 port 3", "T1796500000", "T1796503600", "iblinkinfo:12"]);
  assert.equal(isolatedCells(r)[1], "2026-12-05 19:46 UTC");
  assert.deepEqual(isolatedCells({node: "host-3", port: 1, isolated_at: null, last_seen_at: null, source: ""}).slice(1),
    ["–", "–", "–"]);
  assert.equal(isolatedSummary([]), "No port is isolated now (none seen administratively disabled).");
  assert.match(isolatedSummary([r, r]), /^2 ports are isolated now .*until it is seen enabled again\.$/);
});
