import assert from "node:assert/strict";
import {test} from "node:test";
import {cardText} from "../src/pages/overview.js";

test("cardText reads an overview card", () => {
  const t = cardText({state: "live", hosts: 520, switches: 49, links: 1072, throughput_gbps: 35520,
    congested_links: 2, hottest: {label: "leaf01:3 → spine02:7", util: 0.851},
    alerts: {critical: 1, warning: 2, info: 0}, progress: null});
  assert.equal(t.size, " · 520 hosts, 49 switches, 1,072 links");
  assert.equal(t.throughput, "35.52 Tb/s");
  assert.equal(t.congested, "2");
  assert.equal(t.hottest, "leaf01:3 → spine02:7 at 85%");
  assert.equal(t.alerts, "1 critical, 2 warning, 0 info");
  const idle = cardText({state: "starting", alerts: {critical: 0, warning: 0, info: 0},
    progress: {fraction: 0.4, message: "routing"}});
  assert.deepEqual([idle.size, idle.throughput, idle.hottest, idle.progress, idle.fraction], ["", "–", "–", "routing", 0.4]);
});
