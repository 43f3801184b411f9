// Port detail: the selected cable (or a host's cable) with its recent history from the history API, both
// directions' utilization as a time series, refreshed every few seconds, and the last hour's rollups. The API
// follows the cable across cabling changes: a tick without it is a gap (null), a change of a port's peer a
// 'recabled' marker. What is missing is drawn as missing (issue 35): the line breaks where a value is null (no
// measurement, or the cable down) and where ticks never came (a gap in time), and down time is shaded.
// Longer than the live ring (issue 40): a compact range picker (1 h to 90 d, custom) reads both ends' stored
// utilization and link state from the per-port history (history/tsdb-client.js), cable swaps marked, and links
// to the fabric's History page on the cable's two ports.
import {axisBottom, axisLeft, extent, format, line, max, scaleLinear, scaleTime, timeFormat} from "d3";
import {directedLabel, formatRate, formatUtil, nodeLines} from "../format.js";
import {devicePanel} from "./device-panel.js";
import {cableEntries, healthRows} from "../health-rows.js";
import {sparkline, trendRows} from "../health-trend.js";
import {silencePanel} from "../silence.js";
import {rangePicker} from "../history/range-picker.js";
import {binCenters, swapMarks} from "../history/series-geometry.js";
import {pointsFor, rangeLabel, rangeParams, rangeWindow} from "../history/time-range.js";
import {tsdbClient} from "../history/tsdb-client.js";

const percent = format(".0%");
const COLORS = ["#7cb7ff", "#ffb86b"];
/** Size of the port panel's BER sparklines (health-trend.js), pixels. */
const SPARK = {width: 120, height: 24};
const RECABLED = "#ff6b6b";
const DOWN = "rgba(255, 107, 107, 0.18)";

/**
 * The history answer with a null point inserted in every gap longer than 1.5 ticks (ticks that never came), so
 * that `line.defined` breaks the line there instead of joining the values around it.
 * @param {object} body {t, tick_s, util, reverse_util?, down?, reverse_down?}
 * @returns {{t: number[], util: (number|null)[], reverse_util: (number|null)[], down: boolean[], reverse_down: boolean[]}}
 */
export function withGaps(body) {
  const step = body.tick_s > 0 ? body.tick_s : 1;
  const out = {t: [], util: [], reverse_util: [], down: [], reverse_down: []};
  body.t.forEach((t, i) => {
    if (i > 0 && t - body.t[i - 1] > 1.5 * step) {
      out.t.push((t + body.t[i - 1]) / 2);
      out.util.push(null), out.reverse_util.push(null), out.down.push(false), out.reverse_down.push(false);
    }
    out.t.push(t);
    out.util.push(body.util[i] ?? null);
    out.reverse_util.push(body.reverse_util?.[i] ?? null);
    out.down.push(Boolean(body.down?.[i]));
    out.reverse_down.push(Boolean(body.reverse_down?.[i]));
  });
  return out;
}

/**
 * The stretches of time either direction was down, from the first down tick to the tick after the last one.
 * @param {object} body {t, tick_s, down?, reverse_down?}
 * @returns {{t0: number, t1: number}[]} oldest first
 */
export function downSpans(body) {
  const step = body.tick_s > 0 ? body.tick_s : 1;
  const spans = [];
  let start = null;
  body.t.forEach((t, i) => {
    const down = Boolean(body.down?.[i] || body.reverse_down?.[i]);
    if (down && start === null) start = t;
    if (!down && start !== null) spans.push({t0: start, t1: t}), (start = null);
  });
  if (start !== null) spans.push({t0: start, t1: body.t[body.t.length - 1] + step});
  return spans;
}

/**
 * The read-out of a rollups answer: means weighted by the covered seconds, minutes without any coverage left
 * out, and the seconds down and without data.
 * @param {object} body {minute, mean_util, max_util, coverage_s, down_s}
 * @returns {{mean: number|null, peak: number|null, covered: number, down: number, minutes: number}}
 */
export function rollupSummary(body) {
  let weighted = 0;
  let covered = 0;
  let down = 0;
  let peak = null;
  body.minute.forEach((_, i) => {
    const c = body.coverage_s?.[i] ?? 60;
    down += body.down_s?.[i] ?? 0;
    if (body.mean_util[i] == null || !c) return;
    weighted += body.mean_util[i] * c;
    covered += c;
    peak = Math.max(peak ?? 0, body.max_util[i] ?? 0);
  });
  return {mean: covered ? weighted / covered : null, peak, covered, down, minutes: body.minute.length};
}

/**
 * One direction's line of the rollup read-out, labelled with its sending end (issue 35): "leaf03 port 5 ->
 * spine01 port 1: mean 88%, peak 91% over 3540 s measured", or "...: unmeasured" when no minute had data.
 * @param {object} body a rollups answer {tx, rx, minute, mean_util, max_util, coverage_s, down_s}
 * @param {string} fallback the label when the answer names no ends (recorded without a topology)
 * @returns {string}
 */
export function directionLine(body, fallback) {
  const end = (e) => `${e.node ?? e.guid} port ${e.port}`;
  const label = body?.tx && body?.rx ? `${end(body.tx)} -> ${end(body.rx)}` : fallback;
  if (!body?.minute?.length) return `${label}: no rollup yet`;
  const sum = rollupSummary(body);
  const down = sum.down ? `, down ${Math.round(sum.down)} s` : "";
  if (sum.mean == null) return `${label}: unmeasured in the last ${sum.minutes} min${down}`;
  return `${label}: mean ${formatUtil(sum.mean)}, peak ${formatUtil(sum.peak)} over ${Math.round(sum.covered)} s`
    + ` measured${down}`;
}

/**
 * The rows of a port's error-counter table from a counters answer: only counters the sweep read, those above
 * their threshold first (`above`), rates per minute, "-" where there is no rate or threshold.
 * @param {object|null} body {counters: [{counter, value, rate_per_min, threshold_per_min, above}]}
 * @returns {{counter: string, value: string, rate: string, threshold: string, above: boolean}[]}
 */
export function counterRows(body) {
  const num = (v) => (v == null ? "-" : `${Math.round(v * 100) / 100}`);
  return (body?.counters ?? []).filter((c) => c.value != null).map((c) => ({
    counter: c.counter, value: `${c.value}`, rate: num(c.rate_per_min), threshold: num(c.threshold_per_min),
    above: Boolean(c.above)})).sort((p, q) => q.above - p.above);
}

/**
 * The re-cablings a history answer lists for either direction, one per time, oldest first.
 * @param {object|null} body {recabled, reverse_recabled: [{t, from, to}]}, ends {guid, port, node}
 * @returns {{t: number, text: string}[]} text "recabled: <from> → <to>"
 */
export function recablingMarks(body) {
  const name = (end) => (end ? `${end.node ?? end.guid} port ${end.port}` : "nothing");
  const byTime = new Map();
  for (const r of [...(body?.recabled ?? []), ...(body?.reverse_recabled ?? [])]) {
    const change = `${name(r.from)} → ${name(r.to)}`;
    byTime.set(r.t, byTime.has(r.t) ? `${byTime.get(r.t)}; ${change}` : change);
  }
  return [...byTime].sort((p, q) => p[0] - q[0]).map(([t, text]) => ({t, text: `recabled: ${text}`}));
}

/** The port panel's live choice: the history ring of the last `seconds` (the other choices read the store). */
export const LIVE = {key: "live", label: "Live (5 min)"};

/**
 * The panel's series from the stored history of a cable's two ends (issue 40), in the shape of the live history
 * answer so one drawing serves both: bin centres, each end's transmit utilization (its direction), a bin down
 * where either end's link state was below 1, and the cable swaps of either end as marks.
 * @param {object|null} a the cable's first end's `utilization` answer (the a -> b direction)
 * @param {object|null} b the other end's (b -> a)
 * @param {object|null} upA the first end's `link_up` answer (null: not stored)
 * @param {object|null} upB the other end's
 * @returns {{t: number[], tick_s: number, util: (number|null)[], reverse_util: (number|null)[], down: boolean[],
 *   reverse_down: boolean[], marks: {t: number, text: string}[]}}
 */
export function storedSeries(a, b, upA, upB) {
  const base = a ?? b;
  const n = base?.t?.length ?? 0;
  const isDown = (up, i) => up?.values?.[i] != null && up.values[i] < 1;
  const byTime = new Map();
  for (const body of [a, b]) {
    for (const m of swapMarks(body)) {
      const text = `${body.node} port ${body.port}: ${m.text}`;
      byTime.set(m.t, byTime.has(m.t) ? `${byTime.get(m.t)}; ${text}` : text);
    }
  }
  return {
    t: n ? binCenters(base) : [],
    tick_s: n ? (base.end - base.start) / n : 1,
    util: Array.from({length: n}, (_, i) => a?.values?.[i] ?? null),
    reverse_util: Array.from({length: n}, (_, i) => b?.values?.[i] ?? null),
    down: Array.from({length: n}, (_, i) => isDown(upA, i)),
    reverse_down: Array.from({length: n}, (_, i) => isDown(upB, i)),
    marks: [...byTime].sort((p, q) => p[0] - q[0]).map(([t, text]) => ({t, text})),
  };
}

/**
 * The detail panel: `selection.call(detail().context(ctx).api(client))`.
 * @returns {function} the chart, with chained accessors context, api, health, seconds, refreshMs and read-out state()
 */
export function detail() {
  let ctx = null;
  let client = null;
  let health = null; // the link health source (health-source.js), or null
  let healthShown = []; // [{end, rows}] of the selected cable's listed ends
  let healthNote = "";
  const trends = new Map(); // "node:port" -> {at: the report's t asked for, body: the port API's answer or null}
  let seconds = 300;
  let refreshMs = 5000;
  let storedRefreshMs = 60000; // a stored range's window slides: asked again this often
  let range = {key: LIVE.key};
  let stored = null; // the per-port history client, made from the API client's base and fabric
  let cable = -1;
  let series = null;
  let rollups = [];
  let error = "";
  let fetchedAt = -Infinity;
  let pending = false;
  let generation = 0;
  let width = 0;
  let height = 0;

  function chart(selection) {
    const panel = selection.classed("ibweb-detail", true).attr("aria-label", "Port detail");
    const head = panel.append("div").attr("class", "ibweb-panel-head");
    const title = head.append("h2").text("Port detail");
    const picker = rangePicker().compact(true).extra([LIVE]).value(range).on("change", (r) => {
      range = r;
      series = null;
      error = "";
      fetchedAt = -Infinity;
      ++generation;
      showLink();
      refresh();
      render();
    });
    head.append("span").attr("class", "ibweb-detail-range").call(picker);
    const historyLink = head.append("a").attr("class", "ibweb-detail-history").text("History").property("hidden", true);
    head.append("button").attr("type", "button").attr("aria-label", "Close the port detail").text("×")
      .on("click", () => ctx.select(null));
    const info = panel.append("div").attr("class", "ibweb-detail-info");
    const area = panel.append("div").attr("class", "ibweb-detail-chart");
    const svg = area.append("svg").attr("role", "img");
    const x = scaleTime();
    const y = scaleLinear();
    const plot = svg.append("g").attr("transform", "translate(40,8)");
    const xAxis = plot.append("g").attr("class", "ibweb-axis");
    const yAxis = plot.append("g").attr("class", "ibweb-axis");
    const paths = plot.selectAll("path.ibweb-series").data([0, 1]).join("path").attr("class", "ibweb-series")
      .attr("fill", "none").attr("stroke-width", 1.5).attr("stroke", (i) => COLORS[i]);
    const downs = plot.append("g").attr("class", "ibweb-down");
    const marks = plot.append("g").attr("class", "ibweb-recabled");
    const keys = panel.append("div").attr("class", "ibweb-detail-keys");
    const rollup = panel.append("div").attr("class", "ibweb-detail-rollup");
    // telemetry-fed fabrics: both ends' error counters, folded unless one is above its threshold (room for the chart)
    const errors = panel.append("details").attr("class", "ibweb-detail-counters").style("display", "none");
    const errorsHead = errors.append("summary");
    const errorTables = errors.append("div").attr("class", "ibweb-detail-counter-tables");
    // link health (issue 37): the report's findings on either end of the cable, open when it lists one
    const healthBox = panel.append("details").attr("class", "ibweb-detail-health").style("display", "none");
    const healthHead = healthBox.append("summary");
    const healthTables = healthBox.append("div").attr("class", "ibweb-detail-health-tables");
    const message = panel.append("div").attr("class", "ibweb-detail-message").attr("aria-live", "polite");
    silencePanel(panel, ctx, client); // "Silence…" for the selected port or switch (issue 39), who may silence
    devicePanel(panel, ctx, client); // a switch's vitals (issue 38)

    new ResizeObserver(() => {
      const box = area.node().getBoundingClientRect();
      (width = box.width), (height = box.height);
      render();
    }).observe(area.node());

    function open(item) {
      ++generation;
      series = null;
      error = "";
      fetchedAt = -Infinity;
      cable = -1;
      rollup.text("");
      rollups = [];
      errors.style("display", "none").property("open", false);
      errorTables.selectAll("*").remove();
      trends.clear();
      if (item?.kind === "link") cable = item.index;
      else if (item?.kind === "node" && ctx.fabric.nodes.isHost[item.index]) cable = hostCable(item.index);
      panel.classed("ibweb-empty", cable < 0);
      showLink();
      if (cable < 0) {
        title.text("Port detail");
        info.selectAll("div").data(item?.kind === "node" ? nodeLines(ctx.fabric, item.index) : ["Click a link on the map, "
          + "in the matrix or in the hotspots to see its history."]).join("div").text((d) => d);
        keys.text("");
        render();
        return;
      }
      const {L} = ctx.fabric;
      title.text(`Port detail: ${ctx.fabric.nodes.name[ctx.fabric.links.a[cable]]} ⇄ ${ctx.fabric.nodes.name[ctx.fabric.links.b[cable]]}`);
      keys.selectAll("span").data([cable, cable + L]).join("span").attr("data-series", (_, i) => i)
        .text((d) => directedLabel(ctx.fabric, d));
      showLink();
      live();
      refresh();
      const mine = generation;
      const directions = [cable, cable + L];
      Promise.all(directions.map((d) => client.linkRollups(d, 60).catch(() => null))).then((bodies) => {
        if (mine !== generation) return;
        rollups = bodies.map((body, i) => `last hour, ${directionLine(body, directedLabel(ctx.fabric, directions[i]))}`);
        rollup.selectAll("div").data(rollups).join("div").text((line) => line);
      });
      if (ctx.fabric.mode === "telemetry" && client.portCounters) showCounters(mine);
      if (health) showHealth(), health.get();
    }

    /** The health section anew: folded unless an end is graded error (a new cable or report). */
    function showHealth() {
      drawHealth(true);
    }

    /** The health section's tables (fold: also fold or open it, as showHealth; a trend answered leaves it be). */
    function drawHealth(fold) {
      healthShown = [];
      healthNote = "";
      if (cable < 0 || !health) return void healthBox.style("display", "none");
      const report = health.report();
      if (report) {
        healthShown = cableEntries(report, ctx.fabric, cable).map(({end, entry}) => {
          const key = `${entry.node}:${entry.port}`;
          const kept = trends.get(key);
          if (client.healthPort && entry.kind && kept?.at !== report.t) askTrend(key, entry, report.t); // a known node
          const body = kept?.body ?? null;
          return {end, rows: [...healthRows(entry), ...trendRows(body)], trend: body ? sparkline(body, SPARK) : null};
        });
        if (!healthShown.length) healthNote = "no health finding for this port";
      } else healthNote = health.problem() || "loading link health…";
      // folded (room for the chart) unless an end is graded error; the summary names each listed end's grade
      const said = healthShown.length ? healthShown.map((s) => `${s.end}: ${s.rows[0][1]}`).join("; ") : healthNote;
      healthBox.style("display", null);
      if (fold) healthBox.property("open", healthShown.some((s) => s.rows[0][2] === "error"));
      healthHead.text(`Link health: ${said}`);
      healthTables.selectAll("table").data(healthShown).join((enter) => {
        const t = enter.append("table").attr("class", "ibweb-counters ibweb-health");
        t.append("caption");
        t.append("tbody");
        const foot = t.append("tfoot").append("tr").attr("class", "ibweb-health-trend");
        foot.append("td").text("BER trend");
        const svg = foot.append("td").append("svg").attr("width", SPARK.width + 4).attr("height", SPARK.height + 4)
          .attr("role", "img");
        svg.append("path").attr("fill", "none").attr("stroke", "currentColor").attr("stroke-width", 1)
          .attr("transform", "translate(2,2)");
        svg.append("g").attr("transform", "translate(2,2)");
        return t;
      })
        .call((t) => t.select("caption").text((s) => s.end))
        .call((t) => t.select("tbody").selectAll("tr").data((s) => s.rows).join("tr")
          .attr("data-grade", (r) => r[2])
          .selectAll("td").data((r) => [r[0], r[1]]).join("td").text((d) => d))
        .call((t) => t.select("tfoot").style("display", (s) => (s.trend?.dots.length ? null : "none")))
        .call((t) => t.select("tfoot svg").attr("aria-label", (s) => s.trend?.label ?? "")
          .call((svg) => svg.select("path").attr("d", (s) => s.trend?.d ?? ""))
          .call((svg) => svg.select("g").selectAll("circle").data((s) => s.trend?.dots ?? []).join((enter) => enter
            .append("circle").attr("r", 1.8).call((c) => c.append("title")))
            .attr("cx", (p) => p.x).attr("cy", (p) => p.y).attr("fill", (p) => p.color)
            .attr("data-grade", (p) => p.grade).call((c) => c.select("title").text((p) => p.title))));
    }

    function askTrend(key, entry, at) {
      trends.set(key, {at, body: trends.get(key)?.body ?? null});
      const mine = generation;
      client.healthPort(entry.node, entry.port).then((body) => body, () => null).then((body) => {
        trends.set(key, {at, body});
        if (mine === generation) drawHealth(false);
      });
    }

    function showCounters(mine) {
      const {a, b, aPort, bPort} = ctx.fabric.links;
      const ends = [[a[cable], aPort[cable]], [b[cable], bPort[cable]]].map(([n, p]) => [ctx.fabric.nodes.name[n], p]);
      Promise.all(ends.map(([node, port]) => client.portCounters(node, port).catch(() => null))).then((bodies) => {
        if (mine !== generation) return;
        const shown = bodies.map((body, i) => ({end: `${ends[i][0]} port ${ends[i][1]}`, body, rows: counterRows(body)}))
          .filter((s) => s.body);  // a port the view may not see (404) is left out
        const above = shown.reduce((n, s) => n + s.rows.filter((r) => r.above).length, 0);
        errors.style("display", shown.length ? null : "none").property("open", above > 0);
        errorsHead.text(`Error counters (${shown.length} port${shown.length > 1 ? "s" : ""}): `
          + (above ? `${above} above threshold` : "none above threshold"));
        errorTables.selectAll("table").data(shown).join((enter) => {
          const t = enter.append("table").attr("class", "ibweb-counters");
          t.append("caption");
          t.append("thead").append("tr").selectAll("th").data(["error counter", "value", "rate/min", "threshold/min"])
            .join("th").attr("scope", "col").text((d) => d);
          t.append("tbody");
          return t;
        })
          .call((t) => t.select("caption").text((s) => `${s.end}: ${s.rows.length ? "error counters, newest sweep"
            : "no error counters read in the newest sweep"}`))
          .call((t) => t.select("thead").style("display", (s) => (s.rows.length ? null : "none")))
          .call((t) => t.select("tbody").selectAll("tr").data((s) => s.rows).join("tr")
            .classed("ibweb-above", (r) => r.above).attr("title", (r) => (r.above ? "above its threshold" : null))
            .selectAll("td").data((r) => [r.counter, r.value, r.rate, r.above ? `${r.threshold} ⚠` : r.threshold])
            .join("td").text((d) => d));
      });
    }

    function hostCable(h) {
      const {a, b} = ctx.fabric.links;
      for (let c = 0; c < ctx.fabric.L; ++c) if (a[c] === h || b[c] === h) return c;
      return -1;
    }

    function live() {
      if (cable < 0 || !ctx.frame) return;
      const {L} = ctx.fabric;
      const {rate, util} = ctx.frame;
      info.selectAll("div").data([cable, cable + L]).join("div")
        .text((d) => `${directedLabel(ctx.fabric, d)}  ${formatRate(rate[d])}  ${formatUtil(util[d])}`);
    }

    /** The cable's two ends: [[node name, port], [node name, port]]. */
    function ends() {
      const {a, b, aPort, bPort} = ctx.fabric.links;
      return [[a[cable], aPort[cable]], [b[cable], bPort[cable]]].map(([n, p]) => [ctx.fabric.nodes.name[n], p]);
    }

    /** The History page on the cable's two ports over the panel's range (the live ring: the last hour). */
    function showLink() {
      if (cable < 0 || !client?.fabric) return void historyLink.property("hidden", true);
      const query = new URLSearchParams({...rangeParams(range.key === LIVE.key ? {key: "1h"} : range),
        ports: ends().map(([node, port]) => `${node}:${port}`).join(",")});
      historyLink.property("hidden", false).attr("title", "the cable's two ports on the History page")
        .attr("href", `/fabrics/${encodeURIComponent(client.fabric())}/history/?${query}`);
    }

    /** Both ends' stored utilization and link state over the picked range. */
    function refreshStored() {
      stored ??= tsdbClient().base(client.base()).fabric(client.fabric()).fetch(client.fetch()).limit(4);
      pending = true;
      const mine = generation;
      fetchedAt = performance.now();
      const window = rangeWindow(range, Date.now() / 1000);
      const ask = ([node, port], name) => stored.portSeries(node, port, name, {...window, points: pointsFor(width - 52)});
      const [a, b] = ends();
      Promise.all([ask(a, "utilization"), ask(b, "utilization").catch(() => null),
        ask(a, "link_up").catch(() => null), ask(b, "link_up").catch(() => null)]).then(([ua, ub, upA, upB]) => {
        if (mine !== generation) return;
        series = storedSeries(ua, ub, upA, upB);
        error = series.util.some((v) => v != null) || series.reverse_util.some((v) => v != null) ? ""
          : `nothing stored for this cable over the ${rangeLabel(range)}`;
        render();
      }).catch((e) => {
        if (mine === generation) (series = null), (error = `stored history unavailable: ${e.message}`), render();
      }).finally(() => (pending = false));
    }

    function refresh() {
      if (cable < 0 || pending) return;
      if (range.key !== LIVE.key) return refreshStored();
      pending = true;
      const mine = generation;
      fetchedAt = performance.now();
      client.linkHistory(cable, seconds).then((body) => {
        if (mine !== generation) return;
        series = body;
        error = body.t.length ? "" : "no history yet: the engine keeps it from its next ticks";
        render();
      }).catch((e) => {
        if (mine === generation) (error = `history unavailable: ${e.message}`), render();
      }).finally(() => (pending = false));
    }

    function render() {
      svg.attr("width", width).attr("height", height);
      const w = Math.max(10, width - 52);
      const h = Math.max(10, height - 30);
      message.text(error);
      const points = series && cable >= 0 ? series.t.length : 0;
      const over = range.key === LIVE.key ? `the last ${seconds} s` : `the ${rangeLabel(range)} (stored)`;
      svg.attr("aria-label", points ? `Utilization of both directions over ${over}, ${points} points` : "No data");
      if (!points) {
        paths.attr("d", null);
        marks.selectAll("*").remove();
        downs.selectAll("*").remove();
        xAxis.selectAll("*").remove();
        yAxis.selectAll("*").remove();
        return;
      }
      const gapped = withGaps(series);
      const t = gapped.t.map((s) => new Date(s * 1000));
      const data = [gapped.util, series.reverse_util ? gapped.reverse_util : []];
      x.domain(extent(t)).range([0, w]);
      y.domain([0, Math.max(1, max(data.flat()) ?? 1)]).range([h, 0]).nice();
      const span = (t[t.length - 1] - t[0]) / 1000;
      const when = timeFormat(span > 2 * 86400 ? "%b %d" : span > 3600 ? "%H:%M" : "%H:%M:%S");
      xAxis.attr("transform", `translate(0,${h})`).call(axisBottom(x).ticks(Math.max(2, w / 90)).tickFormat(when));
      yAxis.call(axisLeft(y).ticks(4).tickFormat(percent));
      paths.attr("d", (i) => line().defined((v) => v != null).x((_, j) => x(t[j])).y((v) => y(v))(data[i]));
      const [t0, t1] = x.domain().map((d) => d / 1000);
      downs.selectAll("rect").data(downSpans(series)).join((enter) => enter.append("rect").attr("fill", DOWN)
        .call((r) => r.append("title").text("cable down")))
        .attr("x", (s) => x(new Date(s.t0 * 1000))).attr("y", 0).attr("height", h)
        .attr("width", (s) => Math.max(1, x(new Date(Math.min(s.t1, t1) * 1000)) - x(new Date(s.t0 * 1000))));
      marks.selectAll("g").data((series.marks ?? recablingMarks(series)).filter((m) => m.t >= t0 && m.t <= t1), (m) => m.t)
        .join((enter) => {
          const g = enter.append("g");
          g.append("line").attr("stroke", RECABLED).attr("stroke-dasharray", "3,3");
          g.append("text").attr("x", 3).attr("y", 10).attr("fill", RECABLED).text("recabled");
          g.append("title");
          return g;
        })
        .attr("transform", (m) => `translate(${x(new Date(m.t * 1000))},0)`)
        .call((g) => g.select("line").attr("y2", h))
        .call((g) => g.select("title").text((m) => m.text));
    }

    ctx.on("select.detail", open);
    ctx.on("snapshot.detail", () => open(null));
    ctx.on("frame.detail", live);
    ctx.on("clock.detail", (now) => {
      if (cable >= 0 && now - fetchedAt > (range.key === LIVE.key ? refreshMs : storedRefreshMs)) refresh();
      if (cable >= 0 && health) health.get(); // at most one request per the source's maxAgeMs
    });
    health?.on("detail", showHealth);
    open(null);
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.api = function (_) {
    return arguments.length ? ((client = _), chart) : client;
  };
  /** The link health source (health-source.js) whose report the panel shows the cable's ends from. */
  chart.health = function (_) {
    return arguments.length ? ((health = _), chart) : health;
  };
  /** Seconds of history shown. */
  chart.seconds = function (_) {
    return arguments.length ? ((seconds = _), chart) : seconds;
  };
  chart.refreshMs = function (_) {
    return arguments.length ? ((refreshMs = _), chart) : refreshMs;
  };
  /** How often a stored range is asked again, ms. */
  chart.storedRefreshMs = function (_) {
    return arguments.length ? ((storedRefreshMs = _), chart) : storedRefreshMs;
  };
  /** {cable, rollups (the read-out's lines), range (the picker's: "live", a preset or "custom"), points (history
   * points drawn: ticks of the ring, or stored bins), recabled (markers), down (shaded
   * stretches), error, health: [{end, rows: [[label, value, grade]], trend: sparkline or null}] of the listed
   * ends, healthNote}. */
  chart.state = () => ({cable, rollups, range: range.key, points: series && cable >= 0 ? series.t.length : 0,
    recabled: series && cable >= 0 ? (series.marks ?? recablingMarks(series)).length : 0,
    down: series && cable >= 0 ? downSpans(series).length : 0, error, health: healthShown, healthNote});
  return chart;
}
