import assert from "node:assert/strict";
import {test} from "node:test";
import {hostsText, imbalanceText, planeCells, ratioText, twinText} from "../src/pages/cluster.js";

// Shaped like GET /api/clusters/pod/ (ibweb.dashboard.cluster.cluster_detail) on the demo pod.
const alerts = (critical = 0, warning = 0) => ({critical, warning, info: 0});
const card = (slug, name, rail, extra = {}) => ({slug, name, mode: "emulated", routing: "minhop",
  url: `/fabrics/${slug}/`, events_url: `/fabrics/${slug}/events/`, alerts: alerts(), progress: null, seq: null,
  age_s: null, state: "idle", role: rail ? "compute" : "storage", rail, ...extra});
const liveCard = (slug, name, rail, extra = {}) => card(slug, name, rail, {state: "live", seq: 41, age_s: 0.4,
  hosts: 64, switches: 16, links: 128, throughput_gbps: 864, congested_links: 0,
  hottest: {link: 48, util: 0.10625, label: "leaf07:1 → dgx0049:1"}, ...extra});
const plane = (key, gbps, load) => ({key, live: gbps != null, throughput_gbps: gbps, congested_links: gbps == null ? undefined : 0,
  step_ms: 5.0, t: gbps == null ? null : 1796514001.7, hottest_util: gbps == null ? null : 0.1, load});
const FABRICS = [liveCard("pod-plane1", "Demo pod: plane 1", 1), liveCard("pod-plane2", "Demo pod: plane 2", 2),
  liveCard("pod-storage", "Demo pod: storage", null)];
const answer = (planes, imbalance) => ({slug: "pod", name: "Demo pod", description: "", fabrics: FABRICS, planes,
  imbalance: {max_over_mean: null, max_over_min: null, least_loaded: null, most_loaded: null,
    jobs_slowest_on: Object.fromEntries(planes.map((p) => [p.key, 0])), ...imbalance},
  jobs: [], compute_gbps: 0, storage: [], hosts: {hosts: null, fabrics: {}, on_every_plane: null, on_planes: null,
    by_sysimg: 0, partial: []}, whatifs: []});
const hosts = (extra) => ({hosts: 68, fabrics: {"pod-plane1": 64, "pod-plane2": 64, "pod-storage": 68}, on_planes: 64,
  on_every_plane: 64, by_sysimg: 0, partial: [], ...extra});

test("planeCells: a plane without a frame yet reads – in every measured cell", () => {
  const c = card("pod-plane1", "Demo pod: plane 1", 1);
  assert.deepEqual(planeCells(c, plane("pod-plane1", null, null), undefined),
    ["Demo pod: plane 1", "1", "idle", "–", "–", "–", "–", "0 critical, 0 warning", "0"]);
  // a card whose plane has no entry (no frame, not compared yet) and no rail
  assert.deepEqual(planeCells(card("x", "X", null, {state: "starting"}), undefined, 0),
    ["X", "–", "starting", "–", "–", "–", "–", "0 critical, 0 warning", "0"]);
});

test("planeCells: load, throughput, congestion, the hottest link and alerts of a live plane", () => {
  const c = liveCard("pod-plane2", "Demo pod: plane 2", 2, {congested_links: 1234, alerts: alerts(1, 3),
    hottest: {link: 109, util: 0.856, label: "leaf06:14 → spine06:6"}});
  assert.deepEqual(planeCells(c, plane("pod-plane2", 1834.5678, 1.23456), 1200),
    ["Demo pod: plane 2", "2", "live", "1.83 Tb/s", "1.23×", "1,234", "leaf06:14 → spine06:6 at 86%",
      "1 critical, 3 warning", "1,200"]);
  const even = planeCells(liveCard("pod-plane1", "Demo pod: plane 1", 1), plane("pod-plane1", 812.46, 1), 0);
  assert.deepEqual(even.slice(3, 7), ["812.5 Gb/s", "1.00×", "0", "leaf07:1 → dgx0049:1 at 11%"]);
  // zero traffic is a number, not a missing one; a hottest link without a utilization reads 0%
  const idle = planeCells(liveCard("p", "P", 3, {hottest: {link: 0, label: "a → b"}}), plane("p", 0, 0), 2);
  assert.deepEqual(idle.slice(3, 7), ["0.0 Gb/s", "0.00×", "0", "a → b at 0%"]);
  // a hottest entry without a label (no topology known yet) is no link
  const unlabelled = planeCells(liveCard("p", "P", 3, {hottest: {link: 7, util: 0.5, label: null}}), plane("p", 5, 1), 0);
  assert.equal(unlabelled[6], "–");
});

test("imbalanceText: no live plane", () => {
  const none = answer([plane("pod-plane1", null, null), plane("pod-plane2", null, null)], {});
  assert.equal(imbalanceText(none), "No plane has sent a frame yet.");
  assert.equal(imbalanceText({fabrics: FABRICS, planes: [], imbalance: {}}), "No plane has sent a frame yet.");
  assert.equal(imbalanceText({fabrics: FABRICS}), "No plane has sent a frame yet.");
});

test("imbalanceText: live planes with no traffic yet", () => {
  const one = answer([plane("pod-plane1", 0, null), plane("pod-plane2", null, null)], {least_loaded: "pod-plane1",
    most_loaded: "pod-plane1"});
  assert.equal(imbalanceText(one), "1 of 2 planes live; no traffic yet.");
  const both = answer([plane("pod-plane1", 0, null), plane("pod-plane2", 0, null)], {});
  assert.equal(imbalanceText(both), "2 of 2 planes live; no traffic yet.");
});

test("imbalanceText: the most loaded plane by name, against the mean and the least loaded", () => {
  const data = answer([plane("pod-plane1", 600, 0.6667), plane("pod-plane2", 1200, 1.3333)],
    {max_over_mean: 1.3333, max_over_min: 2, least_loaded: "pod-plane1", most_loaded: "pod-plane2"});
  assert.equal(imbalanceText(data),
    "2 of 2 planes live. Most loaded: Demo pod: plane 2, 1.33× the mean, 2.00× the least loaded.");
  // a plane that carries nothing has no ratio to the least loaded: the sentence stops at the mean
  const idle = answer([plane("pod-plane1", 0, 0), plane("pod-plane2", 900, 2)],
    {max_over_mean: 2, max_over_min: null, least_loaded: "pod-plane1", most_loaded: "pod-plane2"});
  assert.equal(imbalanceText(idle), "2 of 2 planes live. Most loaded: Demo pod: plane 2, 2.00× the mean.");
  // one of three live; a most loaded plane the viewer has no card of reads as its slug
  const three = answer([plane("pod-plane1", 500, 1), plane("pod-plane2", null, null), plane("pod-plane3", null, null)],
    {max_over_mean: 1, max_over_min: 1, least_loaded: "pod-plane3", most_loaded: "pod-plane3"});
  assert.equal(imbalanceText(three), "1 of 3 planes live. Most loaded: pod-plane3, 1.00× the mean, 1.00× the least loaded.");
});

test("hostsText: no topology known, and every host on every plane", () => {
  assert.equal(hostsText(answer([], {}).hosts, 2), "No fabric's topology is known yet.");
  assert.equal(hostsText(undefined, 2), "No fabric's topology is known yet.");
  assert.equal(hostsText(hosts(), 2), "68 hosts on the cluster's fabrics; 64 have an HCA on each of the 2 compute planes.");
});

test("hostsText: hosts joined by system image GUID", () => {
  assert.equal(hostsText(hosts({hosts: 2052, on_planes: 2048, on_every_plane: 2048, by_sysimg: 1024}), 8),
    "2,052 hosts on the cluster's fabrics; 2,048 have an HCA on each of the 8 compute planes; " +
    "1,024 joined by system image GUID across different names.");
});

test("hostsText: hosts missing a plane, named where the viewer may", () => {
  assert.equal(hostsText(hosts({on_every_plane: 62, partial: ["dgx0007", "dgx0031"]}), 2),
    "68 hosts on the cluster's fabrics; 62 have an HCA on each of the 2 compute planes; 2 miss a plane " +
    "(dgx0007, dgx0031).");
  // a viewer who does not see every tenant gets the count, no names
  assert.equal(hostsText(hosts({on_every_plane: 61, partial: []}), 2),
    "68 hosts on the cluster's fabrics; 61 have an HCA on each of the 2 compute planes; 3 miss a plane.");
  const names = (n) => Array.from({length: n}, (_, i) => `dgx${String(i + 1).padStart(4, "0")}`);
  // exactly 8 missing: all named, no ellipsis
  assert.equal(hostsText(hosts({on_every_plane: 56, partial: names(8)}), 2),
    "68 hosts on the cluster's fabrics; 56 have an HCA on each of the 2 compute planes; 8 miss a plane " +
    "(dgx0001, dgx0002, dgx0003, dgx0004, dgx0005, dgx0006, dgx0007, dgx0008).");
  // more than 8 missing (the API sends at most 20 names): the first 8 and "…"
  const many = hostsText(hosts({hosts: 1300, on_planes: 1200, on_every_plane: 1188, by_sysimg: 1, partial: names(12)}), 4);
  assert.equal(many, "1,300 hosts on the cluster's fabrics; 1,188 have an HCA on each of the 4 compute planes; " +
    "1 joined by system image GUID across different names; 12 miss a plane " +
    "(dgx0001, dgx0002, dgx0003, dgx0004, dgx0005, dgx0006, dgx0007, dgx0008, …).");
  assert.ok(!many.includes("dgx0009"));
});

test("ratioText: a what-if's ratio, or a job cut off", () => {
  assert.equal(ratioText(null), "cannot run");
  assert.equal(ratioText(undefined), "cannot run");
  assert.equal(ratioText(1.25), "1.25×");
  assert.equal(ratioText(1), "1.00×");
  assert.equal(ratioText(1.3333), "1.33×");
  assert.equal(ratioText(0), "0.00×");
});

test("twinText: a job at its slowest rail against what its collective should send", () => {
  const planeName = (slug) => `plane ${slug.slice(-1)}`;
  assert.equal(twinText(null, planeName), "–");
  assert.equal(twinText({expected_gbps: 200, observed_gbps: 135, ratio: 0.4, slowest_plane: "pod-plane2"}, planeName),
    "40% of expected on plane 2 (135.0 Gb/s of 200.0 Gb/s)");
  assert.equal(twinText({expected_gbps: 0, observed_gbps: 1.5, ratio: null, slowest_plane: null}, planeName),
    "nothing expected (1.5 Gb/s of 0.0 Gb/s)");
});
