import assert from "node:assert/strict";
import {test} from "node:test";
import {sharpEventRows, sharpEventText, sharpJobRows, sharpSummary, sharpSwitchRows, speedup} from "../src/sharp-rows.js";
import {sharpSection} from "../scripts/sections.mjs";

test("the speed-up is the all-reduce time without SHARP over the time with it", () => {
  assert.equal(speedup(0.3368, 0.635), 0.635 / 0.3368);
  assert.equal(speedup(null, 0.635), null);
  assert.equal(speedup(0.3, null), null);
  assert.equal(speedup(0, 0.635), null);
  assert.equal(speedup(0.3, Infinity), null);
});

test("the summary reads the generation, trees in use against the subnet's limit and the savings", () => {
  const s = sharpSummary(sharpSection());
  assert.equal(s.state, "enabled");
  assert.equal(s.label, "Quantum-2 (NDR, SHARPv3)");
  assert.deepEqual([s.treesInUse, s.trees, s.perSwitch, s.perPort], [2, 511, 2, 1]);
  assert.deepEqual(s.allowedTenants, ["acme", "globex"]);
  assert.equal(s.keptGbps, 31044.1);
  assert.equal(s.bytesKeptOffWire, 9.151e13);
  assert.equal(sharpSummary(null).state, "none");
  const off = sharpSummary({enabled: false, trees_in_use: 0, switches: [], jobs: [], events: []});
  assert.deepEqual([off.state, off.trees, off.label], ["disabled", null, ""]);
  assert.equal(s.aggregationSwitches, null, "no inventory listed: every switch aggregates");
  assert.equal(sharpSummary({...sharpSection(), aggregation_switches: 660}).aggregationSwitches, 660);
});

test("switch rows keep the engine's order and their use of the per-switch limit", () => {
  const rows = sharpSwitchRows(sharpSection());
  assert.deepEqual(rows.map((r) => [r.id, r.name, r.trees, r.limit, r.fraction]),
    [["0", "leaf01", 1, 2, 0.5], ["7", "leaf08", 2, 2, 1], ["17", "spine01", 1, 2, 0.5]]);
  assert.deepEqual(sharpSwitchRows(null), []);
});

test("job rows: on with tree and savings, off with the reason and what it would gain", () => {
  const [llama, diffusion, bert] = sharpJobRows(sharpSection());
  assert.deepEqual([llama.on, llama.reason, llama.root, llama.switches], [true, null, "spine01", 3]);
  assert.equal(llama.bytesKeptOffWire, 9.1e13);
  assert.ok(Math.abs(llama.speedup - 1.8854) < 1e-3);
  assert.deepEqual([diffusion.on, diffusion.reason, diffusion.root], [false, "tenant initech is not allowed to use SHARP", null]);
  assert.ok(Math.abs(diffusion.speedup - 3.3238) < 1e-3, "an off job shows what SHARP would gain");
  assert.equal(bert.speedup, null, "unknown time: no speed-up");
  const noReason = sharpJobRows({jobs: [{...sharpSection().jobs[1], reason: null}]});
  assert.equal(noReason[0].reason, "no SHARP tree");
});

test("events come newest first with distinct keys, even when repeated", () => {
  const rows = sharpEventRows(sharpSection());
  assert.equal(rows.length, 5);
  assert.equal(rows[0].t, 12);
  assert.equal(rows.at(-1).text, "allocated llama-70b: root spine01, 3 switches");
  assert.equal(new Set(rows.map((r) => r.key)).size, 5);
  assert.equal(sharpEventText({t: 1, kind: "fallback", job: "x", reason: "no tree fits"}), "fallback x: no tree fits");
  assert.equal(sharpEventText({t: 1, kind: "allocated", job: "x", root: "s1", switches: 1}), "allocated x: root s1, 1 switch");
  assert.equal(sharpEventText({t: 1, kind: "released", job: "x"}), "released x");
  assert.equal(sharpEventText({t: 1, kind: "tree_moved", job: "x"}), "tree moved x");
});
