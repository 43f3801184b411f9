// The cluster page: its compute planes compared (load per plane, imbalance, the hottest link of each), the
// storage fabric beside compute, each job at its slowest rail with a link that opens every plane's map on it.
// Polled from the cluster API once per second while the tab is visible; rows are joined by key, so an
// update redraws in place (8 planes and hundreds of jobs are a few hundred rows).
import {format, scaleBand, scaleLinear, select} from "d3";
import {formatRate} from "../format.js";
import {utilColor} from "../colors.js";
import {pollPage} from "./poll.js";

const count = format(",d");
const pct = format(".0%");
const times = format(".2f");

/**
 * Text of one plane row.
 * @param {object} card the plane's fabric card
 * @param {object} plane its entry of the API's `planes`
 * @param {number} slowest jobs whose slowest rail this plane is
 * @returns {string[]} cells: name, rail, engine, throughput, load, congested, hottest, alerts, slowest
 */
export function planeCells(card, plane, slowest) {
  const h = card.hottest ?? {};
  return [
    card.name, String(card.rail ?? "–"), card.state,
    plane?.throughput_gbps == null ? "–" : formatRate(plane.throughput_gbps),
    plane?.load == null ? "–" : `${times(plane.load)}×`,
    card.congested_links == null ? "–" : count(card.congested_links),
    h.label ? `${h.label} at ${pct(h.util ?? 0)}` : "–",
    `${card.alerts.critical} critical, ${card.alerts.warning} warning`,
    count(slowest ?? 0),
  ];
}

/**
 * One sentence on the planes' balance.
 * @param {object} data the cluster API's answer
 * @returns {string}
 */
export function imbalanceText(data) {
  const im = data.imbalance ?? {};
  const live = (data.planes ?? []).filter((p) => p.live).length;
  if (!live) return "No plane has sent a frame yet.";
  if (im.max_over_mean == null) return `${live} of ${data.planes.length} planes live; no traffic yet.`;
  const name = (slug) => data.fabrics.find((f) => f.slug === slug)?.name ?? slug;
  return `${live} of ${data.planes.length} planes live. Most loaded: ${name(im.most_loaded)}, ` +
    `${times(im.max_over_mean)}× the mean` + (im.max_over_min == null ? "" : `, ${times(im.max_over_min)}× the least loaded`) + ".";
}

/**
 * Text of the hosts line.
 * @param {object} hosts the API's `hosts`
 * @param {number} planes how many compute planes the cluster shows
 * @returns {string}
 */
export function hostsText(hosts, planes) {
  if (hosts?.hosts == null) return "No fabric's topology is known yet.";
  const missing = hosts.on_planes - hosts.on_every_plane;
  let text = `${count(hosts.hosts)} hosts on the cluster's fabrics; ${count(hosts.on_every_plane)} have an HCA on ` +
    `each of the ${planes} compute planes`;
  if (hosts.by_sysimg) text += `; ${count(hosts.by_sysimg)} joined by system image GUID across different names`;
  text += missing ? `; ${count(missing)} miss a plane` : "";
  if (hosts.partial?.length) text += ` (${hosts.partial.slice(0, 8).join(", ")}${missing > 8 ? ", …" : ""})`;
  return `${text}.`;
}

/**
 * A job's expected against observed traffic over the telemetry-fed planes (their twins), at its slowest rail.
 * @param {object|null} twin the job's `twin` entry (null: no telemetry-fed plane reports the job)
 * @param {function(string): string} planeName a plane's name from its slug
 * @returns {string} e.g. "40% of expected on plane 2 (135 Gb/s of 200 Gb/s)"
 */
export function twinText(twin, planeName) {
  if (!twin) return "–";
  const total = `${formatRate(twin.observed_gbps ?? 0)} of ${formatRate(twin.expected_gbps ?? 0)}`;
  if (twin.ratio == null) return `nothing expected (${total})`;
  return `${pct(twin.ratio)} of expected on ${planeName(twin.slowest_plane)} (${total})`;
}

/** A what-if's ratio of communication time: "1.25×", or "cannot run" where the change cuts the job off. */
export function ratioText(r) {
  return r == null ? "cannot run" : `${times(r)}×`;
}

// Text is written only where it changed: an update of hundreds of rows then restyles only what moved.
function setText(selection, text) {
  return selection.each(function (d, i) {
    const t = typeof text === "function" ? text.call(this, d, i) : text;
    if (t != null && this.textContent !== t) this.textContent = t;
  });
}

// One row per item, joined by key; a cell whose text is null is left to `decorate` (links).
function rows(tbody, items, key, cells, decorate) {
  return select(tbody).selectAll("tr").data(items, key).join("tr").each(function (d) {
    const tr = select(this);
    tr.attr("data-key", key(d));
    setText(tr.selectAll("td").data(cells(d)).join("td"), (t) => t);
    if (decorate) decorate(tr, d);
  });
}

function drawBars(svg, data) {
  const planes = data.planes ?? [];
  const width = svg.node().clientWidth || 640;
  const height = Math.max(60, 26 * planes.length + 10);
  svg.attr("viewBox", `0 0 ${width} ${height}`).attr("height", height);
  const max = Math.max(1, ...planes.map((p) => p.throughput_gbps ?? 0));
  const y = scaleBand().domain(planes.map((p) => p.key)).range([4, height - 4]).padding(0.2);
  const x = scaleLinear().domain([0, max]).range([0, width - 260]);
  const mean = planes.filter((p) => p.live).reduce((s, p) => s + (p.throughput_gbps ?? 0), 0) /
    Math.max(1, planes.filter((p) => p.live).length);
  const name = new Map(data.fabrics.map((f) => [f.slug, f.rail ? `plane ${f.rail}` : f.name]));
  svg.selectAll("g.bar").data(planes, (p) => p.key).join((enter) => {
    const g = enter.append("g").attr("class", "bar");
    g.append("text").attr("class", "bar-name").attr("x", 0).attr("dy", "0.35em");
    g.append("rect").attr("x", 90);
    g.append("text").attr("class", "bar-value").attr("dy", "0.35em");
    return g;
  }).attr("data-key", (p) => p.key).attr("transform", (p) => `translate(0,${y(p.key)})`).each(function (p) {
    const g = select(this);
    const mid = y.bandwidth() / 2;
    g.select(".bar-name").attr("y", mid).text(name.get(p.key) ?? p.key);
    g.select("rect").attr("height", y.bandwidth()).attr("width", x(p.throughput_gbps ?? 0))
      .attr("fill", utilColor(p.hottest_util ?? 0));
    g.select(".bar-value").attr("x", 96 + x(p.throughput_gbps ?? 0)).attr("y", mid)
      .text(p.throughput_gbps == null ? "no frame" : `${formatRate(p.throughput_gbps)} · ${times(p.load ?? 0)}× mean`);
  });
  svg.selectAll("line.mean").data(mean > 0 ? [mean] : []).join("line").attr("class", "mean")
    .attr("x1", 90 + x(mean)).attr("x2", 90 + x(mean)).attr("y1", 0).attr("y2", height);
}

/**
 * Draw the whole page from one API answer (also what the tests call).
 * @param {Element} root the page's main element
 * @param {object} data the cluster API's answer
 */
export function drawCluster(root, data) {
  const cards = new Map(data.fabrics.map((f) => [f.slug, f]));
  const slowest = data.imbalance?.jobs_slowest_on ?? {};
  rows(root.querySelector(".plane-table tbody"), data.planes, (p) => p.key,
    (p) => [null, ...planeCells(cards.get(p.key), p, slowest[p.key]).slice(1)],
    (tr, p) => {
      const card = cards.get(p.key);
      setText(tr.select("td").selectAll("a").data([card]).join("a").attr("href", card.url), card.name);
      tr.attr("data-state", card.state);
    });
  root.querySelector("[data-field=imbalance]").textContent = imbalanceText(data);
  drawBars(select(root.querySelector("svg.plane-bars")), data);
  rows(root.querySelector(".storage-table tbody"), data.storage, (s) => s.slug, (s) => [
    cards.get(s.slug).name, cards.get(s.slug).state,
    s.throughput_gbps == null ? "–" : formatRate(s.throughput_gbps),
    s.read_gbps == null ? "–" : formatRate(s.read_gbps), s.write_gbps == null ? "–" : formatRate(s.write_gbps)]);
  root.querySelector("[data-field=compute]").textContent =
    `Compute planes together: ${formatRate(data.compute_gbps ?? 0)}.`;
  const planeName = (slug) => (cards.get(slug)?.rail ? `plane ${cards.get(slug).rail}` : slug);
  rows(root.querySelector(".job-table tbody"), data.jobs, (j) => j.id, (j) => [
    j.id, j.tenant ?? "–", j.hosts == null ? "–" : count(j.hosts), formatRate(j.achieved_gbps ?? 0),
    j.slowdown == null ? "–" : `${times(j.slowdown)}×`, j.slowest_plane ? planeName(j.slowest_plane) : "–",
    twinText(j.twin, planeName), null],
  (tr, j) => {
    tr.attr("data-slowest", j.slowest_plane ?? "");
    const cell = select(tr.node().lastElementChild);
    setText(cell.selectAll("a").data(Object.entries(j.links ?? {}), ([slug]) => slug).join("a")
      .attr("href", ([, url]) => url), ([slug]) => `${planeName(slug)} ${times(j.planes[slug]?.slowdown ?? 1)}×`);
  });
  const whatifRows = (data.whatifs ?? []).flatMap((w) => w.jobs.map((j) => ({...j, plane: w.plane, w})));
  rows(root.querySelector(".whatif-table tbody"), whatifRows, (r) => `${r.plane}/${r.id}`, (r) => [
    planeName(r.plane), r.w.failed.length ? r.w.failed.join("; ") : count(r.w.failed_cables), r.id,
    ratioText(r.plane_ratio), ratioText(r.cluster_ratio)]);
  root.querySelector("[data-field=hosts]").textContent = hostsText(data.hosts, data.planes.length);
  root.querySelector(".cluster-status").textContent =
    `${data.fabrics.length} fabrics, ${data.planes.length} compute planes; updated every second.`;
}

/**
 * Wire the page: `clusterPage(document.querySelector("[data-page=cluster]"))`.
 * @param {Element} root
 * @param {object} [options] {every: ms, fetch}
 * @returns {{refresh: function(): Promise<boolean>, stop: function()}}
 */
export function clusterPage(root, options = {}) {
  return pollPage(root, (data) => drawCluster(root, data), {what: "cluster page", ...options});
}
