// SHARP panel: trees in use against the subnet's limit, per-switch usage against the per-switch limit, per-job
// aggregation (on/off and why, bytes aggregated and kept off the wire, all-reduce speed-up) and the aggregation
// manager's recent events. A job row selects the job like the jobs table (a "job" highlight on the map).
import {format} from "d3";
import {formatBytes, formatDuration, formatRate, formatSpeedup} from "../format.js";
import {jobHighlight} from "../highlight.js";
import {sharpEventRows, sharpJobRows, sharpSummary, sharpSwitchRows} from "../sharp-rows.js";

const count = format(",d");
const clock = format(",.1f");
const SLOTS_W = 48;
const SLOTS_H = 10;
const GAP = 2;

/**
 * The SHARP panel: `selection.call(sharp().context(ctx))`; updated on every frame, fixed heights.
 * @returns {function} the chart, with chained accessor context and read-out rows()
 */
export function sharp() {
  let ctx = null;
  let selected = null;
  let drawn = {seq: -1, summary: sharpSummary(null), switches: [], jobs: [], events: []};
  let root = null;

  function chart(selection) {
    root = selection.classed("ibweb-sharp", true).attr("aria-label", "SHARP aggregation");
    root.append("h2").text("SHARP");
    const facts = root.append("dl").attr("class", "ibweb-facts");
    const switchBox = box(root, "Switches", "Trees per switch against the per-switch limit");
    const switchTable = switchBox.append("table").attr("class", "ibweb-table ibweb-sharp-switches");
    switchTable.append("caption").attr("class", "ibweb-sr").text("Switches holding SHARP trees: trees against the limit, ports, jobs");
    head(switchTable, ["Switch", "Trees", "Ports", "Jobs"]);
    const switchBody = switchTable.append("tbody");
    const jobBox = box(root, "Jobs", "SHARP per job");
    const jobTable = jobBox.append("table").attr("class", "ibweb-table ibweb-sharp-jobs");
    jobTable.append("caption").attr("class", "ibweb-sr")
      .text("Jobs asking for SHARP; press Enter or click a row to highlight the job's hosts and links");
    head(jobTable, [["Job"], ["SHARP"], ["Aggr.", "Bytes aggregated in the network"],
      ["Off wire", "Bytes kept off the wire"], ["Speed-up", "All-reduce alone: time without SHARP / with SHARP"]]);
    const jobBody = jobTable.append("tbody");
    const eventBox = box(root, "Events", "Aggregation manager events, newest first");
    const events = eventBox.append("ol").attr("class", "ibweb-sharp-events").attr("aria-label", "SHARP events, newest first");

    const toggle = (id) => ctx.highlight(selected === id ? null : jobHighlight(ctx.fabric, ctx.catalog, ctx.frame.jobs, id));
    const mark = () => jobBody.selectAll("tr").attr("aria-selected", (d) => String(d.id === selected))
      .classed("ibweb-selected", (d) => d.id === selected);

    ctx.on("highlight.sharp", (h) => {
      selected = h && h.kind === "job" ? h.label : null;
      mark();
    });
    ctx.on("snapshot.sharp", () => (selected = null));
    ctx.on("frame.sharp", (frame) => {
      const section = frame.sharp;
      const summary = sharpSummary(section);
      const switches = sharpSwitchRows(section);
      const jobs = sharpJobRows(section).map((r) => ({...r, cells: jobCells(r)}));
      const log = sharpEventRows(section);
      drawn = {seq: frame.seq, summary, switches, jobs, events: log};
      root.attr("data-state", summary.state);

      facts.selectAll("div").data(factRows(summary), (d) => d[0])
        .join((enter) => {
          const div = enter.append("div");
          div.append("dt");
          div.append("dd");
          return div;
        })
        .classed("ibweb-wide", (d) => !!d[4])
        .call((div) => div.select("dt").text((d) => d[1]))
        .call((div) => div.select("dd").text((d) => d[2]).attr("title", (d) => d[3] ?? null));

      const srows = switchBody.selectAll("tr").data(switches, (d) => d.id)
        .join((enter) => {
          const tr = enter.append("tr");
          tr.append("td").attr("class", "ibweb-name");
          const trees = tr.append("td").attr("class", "ibweb-num ibweb-trees");
          trees.append("svg").attr("class", "ibweb-slots").attr("width", SLOTS_W).attr("height", SLOTS_H)
            .attr("viewBox", `0 0 ${SLOTS_W} ${SLOTS_H}`).attr("aria-hidden", "true");
          trees.append("span");
          tr.append("td").attr("class", "ibweb-num ibweb-ports");
          tr.append("td").attr("class", "ibweb-jobnames");
          return tr;
        })
        .classed("ibweb-full", (d) => d.limit != null && d.trees >= d.limit);
      srows.select(".ibweb-name").text((d) => d.name).attr("title", (d) => (d.tier == null ? null : `tier ${d.tier}`));
      srows.select(".ibweb-trees").attr("aria-label", (d) => (d.limit == null ? `${d.trees} trees`
        : `${d.trees} of ${d.limit} trees`));
      srows.select(".ibweb-trees span").text((d) => (d.limit == null ? String(d.trees) : `${d.trees}/${d.limit}`));
      srows.select("svg").selectAll("rect").data(slots).join("rect")
        .attr("x", (d) => d.x).attr("width", (d) => d.w).attr("y", 0).attr("height", SLOTS_H)
        .attr("class", (d) => (d.used ? "ibweb-slot-used" : "ibweb-slot"));
      srows.select(".ibweb-ports").text((d) => count(d.ports));
      srows.select(".ibweb-jobnames").text((d) => d.jobs.join(", ")).attr("title", (d) => d.jobs.join(", "));
      srows.order();

      jobBody.selectAll("tr").data(jobs, (d) => d.id)
        .join((enter) => enter.append("tr").attr("tabindex", 0)
          .on("click", (event, d) => toggle(d.id))
          .on("keydown", (event, d) => {
            if (event.key === "Enter" || event.key === " ") (event.preventDefault(), toggle(d.id));
          }))
        .attr("data-job", (d) => d.id)
        .attr("data-on", (d) => String(d.on))
        .attr("aria-label", (d) => `${d.id}: SHARP ${d.on ? "on" : `off, ${d.reason}`}`)
        .order()
        .selectAll("td").data((d) => d.cells, (c) => c.key)
        .join("td")
        .attr("class", (c) => c.cls)
        .attr("colspan", (c) => c.span ?? null)
        .attr("title", (c) => c.title ?? null)
        .text((c) => c.text);
      jobBody.selectAll("tr").selectAll("td").order();
      mark();

      events.selectAll("li").data(log.length ? log : [{key: "none", t: null, text: summaryLine(summary)}], (d) => d.key)
        .join("li")
        .attr("data-kind", (d) => d.kind ?? null)
        .attr("title", (d) => d.text)
        .text((d) => (d.t == null ? d.text : `t ${clock(d.t)} s  ${d.text}`))
        .order();
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /**
   * What the panel draws: {seq, summary, switches, jobs (with their cell texts), events, drawn: {switches, jobs,
   * events} (rows in the page)}.
   */
  chart.rows = () => ({
    ...drawn,
    drawn: root ? {
      switches: root.selectAll(".ibweb-sharp-switches tbody tr").size(),
      jobs: root.selectAll(".ibweb-sharp-jobs tbody tr").size(),
      events: root.selectAll(".ibweb-sharp-events li[data-kind]").size(),
    } : {switches: 0, jobs: 0, events: 0},
  });
  return chart;
}

/** A titled scroll box of fixed height. */
function box(parent, title, label) {
  parent.append("h3").text(title);
  return parent.append("div").attr("class", "ibweb-box").attr("role", "region").attr("aria-label", label)
    .attr("tabindex", 0); // scrolls: reachable by keyboard
}

function head(table, columns) {
  table.append("thead").append("tr").selectAll("th").data(columns.map((c) => (Array.isArray(c) ? c : [c]))).join("th")
    .attr("scope", "col").text((d) => d[0]).attr("title", (d) => d[1] ?? null);
}

/** The per-switch limit as slots: one rect per allowed tree, the used ones filled. */
function slots(row) {
  const n = row.limit > 0 ? Math.min(row.limit, 16) : Math.max(1, row.trees);
  const w = (SLOTS_W - GAP * (n - 1)) / n;
  return Array.from({length: n}, (_, i) => ({x: i * (w + GAP), w, used: i < row.trees}));
}

function summaryLine(summary) {
  if (summary.state === "none") return "SHARP is not modelled on this fabric";
  if (summary.state === "disabled") return "SHARP is off on this fabric";
  return "no event yet";
}

/** Summary facts: [key, label, text, title, wide]. */
function factRows(s) {
  if (s.state !== "enabled") return [["state", "SHARP", summaryLine(s), null, true]];
  const portLimit = s.perPort == null ? "no port limit" : `${s.perPort}/port`;
  return [
    ["generation", "Generation", s.label, s.generation ?? "no SHARP-capable generation", true],
    ["trees", "Trees in use", `${count(s.treesInUse)} / ${count(s.trees)}`, "Streaming-aggregation trees of the subnet"],
    ["aggregated", "Aggregated", formatBytes(s.bytesAggregated), "Bytes reduced by switches so far"],
    ["limits", "Limits", `${s.perSwitch ?? "–"}/switch, ${portLimit}`, "Active streaming trees per switch and port"],
    ["nodes", "Aggregation Nodes", s.aggregationSwitches == null ? "every switch (not listed)"
      : `${count(s.aggregationSwitches)} switches`, "Switches that can aggregate: those with a SHARP Aggregation Node"],
    ["tenants", "Tenants", s.allowedTenants == null ? "all" : s.allowedTenants.join(", ") || "none",
      "Tenants allowed to use SHARP"],
    ["saved", "Kept off wire", `${formatRate(s.keptGbps)} now, ${formatBytes(s.bytesKeptOffWire)} so far`,
      "Wire traffic SHARP saves compared with the jobs' own all-reduce", true],
  ];
}

/** The cells of a job row, keyed by column: an off job shows why instead of its savings. */
function jobCells(r) {
  const times = `All-reduce alone: ${formatDuration(r.sharpS)} with SHARP, ${formatDuration(r.withoutS)} without`;
  const cells = [{key: "id", text: r.id, cls: "ibweb-name", title: r.tenant ? `${r.id} (${r.tenant})` : null}];
  if (r.on) {
    cells.push({key: "on", text: "on", cls: "ibweb-sharp-on",
      title: r.root ? `tree rooted at ${r.root}, ${r.switches} switches` : null});
    cells.push({key: "agg", text: formatBytes(r.bytesAggregated), cls: "ibweb-num"});
    cells.push({key: "wire", text: formatBytes(r.bytesKeptOffWire), cls: "ibweb-num"});
    cells.push({key: "speedup", text: formatSpeedup(r.speedup), cls: "ibweb-num", title: times});
  } else {
    cells.push({key: "off", text: "off", cls: "ibweb-sharp-off"});
    cells.push({key: "reason", text: r.reason, cls: "ibweb-reason", span: 2, title: r.reason});
    cells.push({key: "could", text: r.speedup == null ? "–" : `(${formatSpeedup(r.speedup)})`, cls: "ibweb-num ibweb-muted",
      title: `${times}: it would gain this with SHARP`});
  }
  return cells;
}
