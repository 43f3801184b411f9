import assert from "node:assert/strict";
import {test} from "node:test";
import {collectorBody, shellQuote, trialCall, trialFacts} from "../src/pages/fabric-form.js";

test("collectorBody sends what the chosen way of reaching the tools uses, as typed", () => {
  const values = {source: "commands", command_prefix: " ssh mgmt01 ", environment: "SIM_HOST=gpu0001\n", drop_dir: "/srv/ib",
    lfts_path: "", timeout_s: "5", interval_s: "10"};
  assert.deepEqual(collectorBody((n) => values[n], "ftree"), {source: "commands", command_prefix: "ssh mgmt01",
    environment: "SIM_HOST=gpu0001\n", timeout_s: "5", interval_s: "10", routing_engine: "ftree"});
  assert.deepEqual(collectorBody((n) => ({...values, source: "directory"})[n]),
    {source: "directory", drop_dir: "/srv/ib", timeout_s: "5", interval_s: "10"});
});

test("trialCall is a curl command a shell runs unchanged", () => {
  const body = {source: "commands", command_prefix: "ssh o'neil"};
  const command = trialCall("https://ib.example/api/telemetry/trial-sweep/", body);
  assert.match(command, /^curl -X POST 'https:\/\/ib\.example\/api\/telemetry\/trial-sweep\/' -H "Authorization: Token \$IBWEB_TOKEN"/);
  assert.ok(command.endsWith(`-d ${shellQuote(JSON.stringify(body))}`));
});

test("trialFacts: counts, counters of a bounded read, the LFT dump, errors and warnings with their lines", () => {
  const report = {ok: false, duration_s: 1.5, source: "commands",
    discovery: {switches: 40, cas: 512, links: 1024, ports_not_up: 3},
    counters: {switches_total: 40, switches_limit: 16, switches_tried: 16, switches_read: 15, ports_expected: 512,
      ports_read: 480, ports_unknown: 0, ports_missing: ["leaf07 port 1", "leaf07 port 2"]},
    lft: {path: "/var/cache/opensm/opensm-lfts.dump", found: true, read: true, switches: 40, switches_total: 40,
      switches_missing: [], entries: 22000, unmapped_entries: 0, dead_entries: 2},
    errors: [{stage: "counters", message: "perfquery -l 7 1,2: no answer within 10 s (killed)", line: null, target: 7}],
    warnings: [{line: 1, text: "[root@mgmt01 ~]# iblinkinfo", reason: "shell prompt", source: "iblinkinfo"}]};
  const t = trialFacts(report);
  assert.deepEqual([t.switches, t.cas, t.links, t.down], ["40", "512", "1,024", "3"]);
  assert.equal(t.counters, "15 of 16 switches read (a trial reads at most 16 of the 40): 480 of 512 cabled switch ports; " +
    "no counters for leaf07 port 1, leaf07 port 2, …");
  assert.equal(t.lft, "/var/cache/opensm/opensm-lfts.dump: 40 of 40 switches, 22,000 entries; 2 entries through uncabled ports (an older cabling)");
  assert.deepEqual(t.errors, ["counters (LID 7): perfquery -l 7 1,2: no answer within 10 s (killed)"]);
  assert.deepEqual(t.warnings, ["iblinkinfo, line 1: shell prompt: [root@mgmt01 ~]# iblinkinfo"]);
  assert.equal(t.summary, "Test sweep found problems in 1.5 s: 40 switches, 512 CAs, 1,024 links; nothing was saved.");
});

test("trialFacts of a failed discovery and of a drop directory", () => {
  const failed = trialFacts({ok: false, discovery: null, counters: null, lft: {path: null, found: false, read: false,
    note: "none configured: the routing will be computed with minhop"},
  errors: [{stage: "discovery", message: "iblinkinfo:12: bad line", line: 12, target: null}], warnings: []});
  assert.equal(failed.switches, "–");
  assert.equal(failed.counters, "not read (no discovery)");
  assert.equal(failed.lft, "none configured: the routing will be computed with minhop");
  assert.deepEqual(failed.errors, ["discovery, line 12: iblinkinfo:12: bad line"]);
  const drop = trialFacts({ok: true, discovery: {switches: 6, cas: 8, links: 16, ports_not_up: 0},
    counters: {files: 2, switches_total: 6, switches_limit: null, switches_read: 1, ports_expected: 24, ports_read: 4,
      ports_unknown: 0, ports_missing: []},
    lft: {path: "/srv/ib/opensm-lfts.dump", found: false, read: false, note: "not found (No such file or directory): ..."}});
  assert.equal(drop.counters, "2 perfquery files: 4 of 24 cabled switch ports");
  assert.equal(drop.lft, "/srv/ib/opensm-lfts.dump: not found (No such file or directory): ...");
  assert.match(drop.summary, /^Test sweep passed: 6 switches, 8 CAs, 16 links/);
});
