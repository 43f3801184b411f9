import assert from "node:assert/strict";
import {test} from "node:test";
import {hotspotRows, topLinks} from "../src/hotspot-rows.js";

test("top links are the highest values, highest first, zeros left out", () => {
  const values = Float32Array.from([0.1, 0.9, 0, 0.5, 0.9, 0.3, 0.7]);
  assert.deepEqual([...topLinks(values, 3)], [1, 4, 6]);
  assert.deepEqual([...topLinks(values, 10)], [1, 4, 6, 3, 5, 0]);
  assert.deepEqual([...topLinks(new Float32Array(5), 3)], []);
  const big = Float32Array.from({length: 10000}, (_, i) => ((i * 7919) % 10007) / 10007);
  const expected = [...big.keys()].sort((p, q) => big[q] - big[p] || p - q).slice(0, 10);
  assert.deepEqual([...topLinks(big, 10)], expected);
});

test("hotspot rows use the engine's ranking when the frame has one, else utilization", () => {
  const util = Float32Array.from([0.2, 0.8, 0.5, 0.1]);
  const byLink = new Map([[1, ["job-a"]], [2, ["job-b"]]]);
  const own = hotspotRows({util, hotspots: []}, 2, byLink);
  assert.deepEqual(own.map((r) => [r.link, r.jobs]), [[1, ["job-a"]], [2, ["job-b"]]]);
  const engine = hotspotRows({util, hotspots: [{link: 3, congestion: 1.4, util: 0.1, xmit_wait: 12,
    jobs: [{id: "x", gbps: 3}]}, {link: 2, congestion: 1.1, util: 0.5, jobs: []}]}, 5, byLink);
  assert.deepEqual(engine.map((r) => [r.link, r.congestion, r.xmitWait, r.jobs]),
    [[3, 1.4, 12, ["x"]], [2, 1.1, null, ["job-b"]]]);
});

test("a hotspot whose traffic no known job sent lists no job, never the jobs that could use the link", () => {
  const util = Float32Array.from([0.2, 0.8]);
  const byLink = new Map([[1, ["idle-job"]]]);
  const [row] = hotspotRows({util, hotspots: [{link: 1, util: 0.6, jobs: [], unattributed_gbps: 120}]}, 1, byLink);
  assert.deepEqual([row.jobs, row.unattributed], [[], 120]);
  const [mixed] = hotspotRows({util, hotspots: [{link: 1, jobs: [{id: "a", gbps: 50}], unattributed_gbps: 70}]}, 1);
  assert.deepEqual([mixed.jobs, mixed.unattributed], [["a"], 70]);
  // an engine that attributes nothing (no twin) still lets the jobs API answer
  const [plain] = hotspotRows({util, hotspots: [{link: 1, jobs: []}]}, 1, byLink);
  assert.deepEqual([plain.jobs, plain.unattributed], [["idle-job"], null]);
});
