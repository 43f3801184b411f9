// Analyses panel: start an eBB analysis, a RoCEv2-vs-InfiniBand what-if or a congestion what-if, follow every analysis of the fabric (progress from the feed) and show
// what it found (eBB, what-if deltas) once done. The start form is shown only to visitors allowed to start one.
import {select} from "d3";
import {congestionTable, describe, mergeAnalysis, mergeProgress} from "../analysis.js";

const KINDS = {ebb: "eBB", whatif_links: "What-if: failed cables", whatif_engine: "What-if: routing engine",
  whatif_roce: "What-if: RoCEv2 ECMP", whatif_live: "What-if: today's jobs",
  whatif_congestion: "What-if: VL separation / congestion control"};
const KEEP = 20;
const final = (status) => status === "done" || status === "failed";

/**
 * The analyses panel: `selection.call(analyses().context(ctx).api(api().analyses()))`.
 * @returns {function} the chart, with chained accessors context, api and read-out rows()
 */
export function analyses() {
  let ctx = null;
  let client = null;
  let rows = [];
  let list = null;

  function chart(selection) {
    const panel = selection.classed("ibweb-analyses", true).attr("aria-label", "Analyses");
    const head = panel.append("div").attr("class", "ibweb-panel-head");
    head.append("h2").text("Analyses");
    const form = panel.append("form").attr("class", "ibweb-analysis-start").attr("hidden", true)
      .attr("aria-label", "Start an effective bisection bandwidth analysis");
    const patterns = form.append("label").text("Patterns ").append("input").attr("type", "number")
      .attr("name", "patterns").attr("min", 1).attr("max", 20000).attr("step", 1).attr("value", 1000)
      .attr("size", 6).attr("required", true);
    const button = form.append("button").attr("type", "submit").text("Run eBB");
    const roce = panel.append("form").attr("class", "ibweb-analysis-start ibweb-roce-start").attr("hidden", true)
      .attr("aria-label", "Run the jobs as RoCEv2 with ECMP hashing");
    const qps = roce.append("label").text("QPs/connection ").append("input").attr("type", "number")
      .attr("name", "qps").attr("min", 1).attr("max", 128).attr("step", 1).attr("value", 1).attr("size", 4)
      .attr("required", true);
    const roceButton = roce.append("button").attr("type", "submit").text("Run RoCE what-if");
    const cong = panel.append("form").attr("class", "ibweb-analysis-start ibweb-congestion-start").attr("hidden", true)
      .attr("aria-label", "Compare the jobs under credit flow control, VL separation and congestion control");
    const vls = cong.append("label").text("VLs ").append("input").attr("type", "number")
      .attr("name", "vls").attr("min", 1).attr("max", 15).attr("step", 1).attr("value", 4).attr("size", 3)
      .attr("required", true);
    const congButton = cong.append("button").attr("type", "submit").text("Run congestion what-if");
    const out = panel.append("output").attr("class", "ibweb-analysis-out").attr("aria-live", "polite");
    list = panel.append("div").attr("class", "ibweb-scroll").append("ol").attr("class", "ibweb-analysis-list")
      .attr("aria-label", "Analyses, newest first");

    form.on("submit", async (event) => {
      event.preventDefault();
      button.property("disabled", true);
      out.text("starting…");
      try {
        put(await client.create("ebb", {patterns: Number(patterns.property("value"))}));
        out.text("");
      } catch (error) {
        out.text(error.message);
      } finally {
        button.property("disabled", false);
      }
    });

    roce.on("submit", async (event) => {
      event.preventDefault();
      roceButton.property("disabled", true);
      out.text("starting…");
      try {
        put(await client.create("whatif_roce", {qps: Number(qps.property("value"))}));
        out.text("");
      } catch (error) {
        out.text(error.message);
      } finally {
        roceButton.property("disabled", false);
      }
    });

    cong.on("submit", async (event) => {
      event.preventDefault();
      congButton.property("disabled", true);
      out.text("starting…");
      try {
        put(await client.create("whatif_congestion", {vls: Number(vls.property("value"))}));
        out.text("");
      } catch (error) {
        out.text(error.message);
      } finally {
        congButton.property("disabled", false);
      }
    });

    ctx.on("progress.analyses", (msg) => {
      if (msg.task !== "analysis") return;
      rows = mergeProgress(rows, msg);
      draw();
      if (final(msg.status)) client.get(msg.id).then(put, (error) => out.text(error.message));
    });
    client.canCreate().then((allowed) => {
      form.attr("hidden", allowed ? null : true);
      roce.attr("hidden", allowed ? null : true);
      cong.attr("hidden", allowed ? null : true);
    });
    client.list(KEEP).then((answer) => {
      for (const a of answer) rows = mergeAnalysis(rows, a);
      draw();
    }, (error) => out.text(`no analyses: ${error.message}`));
  }

  function put(a) {
    rows = mergeAnalysis(rows, a);
    draw();
  }

  function draw() {
    const items = list.selectAll("li").data(rows.slice(0, KEEP), (d) => d.id)
      .join((enter) => {
        const li = enter.append("li");
        li.append("div").attr("class", "ibweb-analysis-title");
        li.append("progress").attr("max", 1);
        li.append("div").attr("class", "ibweb-analysis-result");
        return li;
      })
      .attr("data-id", (d) => d.id)
      .attr("data-status", (d) => d.status);
    items.select(".ibweb-analysis-title").text((d) => `#${d.id} ${KINDS[d.kind] ?? d.kind} · ${d.status}`);
    items.select("progress")
      .attr("hidden", (d) => (final(d.status) ? true : null))
      .attr("aria-label", (d) => `${KINDS[d.kind] ?? d.kind} #${d.id}: ${Math.round(100 * (d.progress ?? 0))}%`)
      .property("value", (d) => d.progress ?? 0);
    items.select(".ibweb-analysis-result").selectAll("div").data((d) => describe(d)).join("div").text((d) => d);
    items.each(function (d) { // a congestion what-if's jobs x sides, as a table
      const shown = d.kind === "whatif_congestion" && d.status === "done" && d.result ? [congestionTable(d.result)] : [];
      const table = select(this).selectAll("table.ibweb-congestion-table").data(shown).join((enter) => {
        const t = enter.append("table").attr("class", "data ibweb-congestion-table");
        t.append("caption").text("Collective time per job and side (× max-min's)");
        t.append("thead").append("tr");
        t.append("tbody");
        return t;
      });
      table.select("thead tr").selectAll("th").data((t) => t.head).join("th").attr("scope", "col").text((h) => h);
      const rows = table.select("tbody").selectAll("tr").data((t) => t.rows, (row) => row.id).join("tr");
      rows.selectAll("th").data((row) => [row.id]).join("th").attr("scope", "row").text((id) => id);
      rows.selectAll("td").data((row) => row.cells).join("td").attr("class", "num")
        .attr("title", (c) => c.title || null).text((c) => c.text);
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.api = function (_) {
    return arguments.length ? ((client = _), chart) : client;
  };
  /** The analyses shown, newest first. */
  chart.rows = () => rows.slice(0, KEEP);
  return chart;
}
