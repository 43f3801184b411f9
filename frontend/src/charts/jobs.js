// Jobs table: tenant, hosts, demanded vs achieved bandwidth, slowdown, spreading (with credit flow control: the part
// of the slowdown congestion spreading causes), SHARP (the pattern is in the row's title);
// a row selects the job, which highlights its hosts and the links its flows use on the map.
import {format} from "d3";
import {jobHighlight} from "../highlight.js";

const slow = format(".2f");
const whole = format(",.0f");
const tenth = format(",.1f");
/** A job's rate in the one unit of its column (Gb/s): whole numbers from 100 on, so rows compare at a glance. */
export const jobRate = (gbps) => (gbps >= 100 ? whole(gbps) : tenth(gbps));

/**
 * The jobs table: `selection.call(jobs().context(ctx))`.
 * @returns {function} the chart, with chained accessor context and read-out selected()
 */
export function jobs() {
  let ctx = null;
  let selected = null;
  let sharp = false;
  let spreading = false;

  function chart(selection) {
    const panel = selection.classed("ibweb-jobs-panel", true).attr("aria-label", "Jobs");
    panel.append("h2").text("Jobs");
    const wrap = panel.append("div").attr("class", "ibweb-scroll");
    const table = wrap.append("table").attr("class", "ibweb-table ibweb-jobs-table");
    table.append("caption").attr("class", "ibweb-sr").text("Jobs; press Enter or click a row to highlight its hosts and links");
    const headRow = table.append("thead").append("tr");
    const body = table.append("tbody");

    // [label, key, description, unit]: the unit sits under the label, so numbers need no suffix and never truncate.
    const columns = () => [["Job", "id"], ["Tenant", "tenant"], ["Hosts", "hosts"],
      ["Demand", "demand", "Demanded bandwidth, Gb/s", "Gb/s"], ["Achieved", "achieved", "Achieved bandwidth, Gb/s", "Gb/s"],
      ["Slowdown", "slowdown", "Slowdown: collective time now / alone", "×"],
      ...(spreading ? [["Spread", "spreading", "Slowdown due to congestion spreading: collective time with credit " +
        "flow control / with ideal congestion control (max-min), same tick", "×"]] : []),
      ...(sharp ? [["SHARP", "sharp"]] : [])];
    const cell = (job, key) => {
      switch (key) {
        case "demand": return jobRate(job.demand_gbps ?? 0);
        case "achieved": return jobRate(job.achieved_gbps ?? 0);
        case "slowdown": return job.slowdown == null ? (job.phase === "comm" ? "∞" : "–") : slow(job.slowdown);
        case "spreading": return job.spreading == null ? "–" : slow(job.spreading);
        case "sharp": return job.sharp == null ? "–" : job.sharp ? "on" : "off";
        case "pattern": return String(job.pattern ?? "").replace(/_/g, " ");
        default: return String(job[key] ?? "");
      }
    };

    const toggle = (id) => ctx.highlight(selected === id ? null : jobHighlight(ctx.fabric, ctx.catalog, ctx.frame.jobs, id));

    ctx.on("highlight.jobs", (h) => {
      selected = h && h.kind === "job" ? h.label : null;
      body.selectAll("tr").attr("aria-selected", (d) => String(d.id === selected)).classed("ibweb-selected", (d) => d.id === selected);
    });
    ctx.on("snapshot.jobs", () => (selected = null));
    ctx.on("frame.jobs", (frame) => {
      const hasSharp = frame.jobs.some((j) => j.sharp != null);
      const hasSpreading = frame.jobs.some((j) => j.spreading != null);
      if (hasSharp !== sharp || hasSpreading !== spreading || headRow.selectAll("th").empty()) {
        sharp = hasSharp;
        spreading = hasSpreading;
        const th = headRow.selectAll("th").data(columns()).join("th").attr("scope", "col")
          .attr("class", (d) => `ibweb-col-${d[1]}`).attr("title", (d) => d[2] ?? null).attr("aria-label", (d) => d[2] ?? null)
          .text((d) => d[0]);
        th.filter((d) => d[3]).append("span").attr("class", "ibweb-unit").attr("aria-hidden", "true").text((d) => d[3]);
      }
      const cols = columns();
      body.selectAll("tr").data(frame.jobs, (j) => j.id)
        .join((enter) => enter.append("tr").attr("tabindex", 0)
          .on("click", (event, d) => toggle(d.id))
          .on("keydown", (event, d) => {
            if (event.key === "Enter" || event.key === " ") (event.preventDefault(), toggle(d.id));
          }))
        .attr("aria-selected", (d) => String(d.id === selected))
        .classed("ibweb-selected", (d) => d.id === selected)
        .classed("ibweb-idle", (d) => !d.active)
        .attr("title", (d) => `${d.id} (${d.tenant ?? "no tenant"}): ${cell(d, "pattern")}, ${d.hosts} hosts`)
        .selectAll("td").data((d) => cols.map(([, key]) => [d, key])).join("td")
        .attr("class", ([, key]) => (["hosts", "demand", "achieved", "slowdown", "spreading"].includes(key) ? "ibweb-num" : null))
        .text(([d, key]) => cell(d, key));
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /** Id of the selected job, or null. */
  chart.selected = () => selected;
  return chart;
}
