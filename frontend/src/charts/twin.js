// The digital twin panel (telemetry-fed fabrics): expected against observed as a map overlay and a ranked list,
// the cabling plan's differences, each a click away from the map. Hidden on fabrics without a twin.
import {format} from "d3";
import {deviationRows, OVERLAY_COLORS, overlayCables} from "../twin-section.js";

const gbps = format(",.1f");
const REFRESH_MS = 5000;
const MODES = [["off", "Load", "Map coloured by utilization"],
  ["expected", "Expected", "Links far below their jobs (blue), or above them or carrying unexplained traffic (orange)"],
  ["plan", "Plan", "Cables miswired (red), not in the plan (orange), at the wrong speed or width (yellow)"]];

/**
 * The twin panel: `selection.call(twinPanel().context(ctx).map(topologyChart).api(client.twin()).planURL(url))`.
 * @returns {function} the chart, with chained accessors context, map, api, planURL, count and read-outs
 *   rows(), mode(), state()
 */
export function twinPanel() {
  let ctx = null;
  let map = null;
  let client = null;
  let planURL = "";
  let count = 10;
  let mode = "off";
  let rows = [];
  let fetched = {at: -Infinity, key: "", busy: false, error: ""};
  let analyses = null;

  function chart(selection) {
    const panel = selection.classed("ibweb-twin", true).attr("aria-label", "Expected against observed").property("hidden", true);
    panel.append("h2").text("Expected vs observed");
    const summary = panel.append("p").attr("class", "ibweb-twin-summary").attr("aria-live", "polite");
    const toolbar = panel.append("div").attr("class", "ibweb-twin-modes").attr("role", "radiogroup").attr("aria-label", "Map overlay");
    const buttons = toolbar.selectAll("button").data(MODES).join("button").attr("type", "button").attr("role", "radio")
      .attr("title", (d) => d[2]).text((d) => d[1]).on("click", (event, d) => setMode(d[0]));
    const legend = panel.append("div").attr("class", "ibweb-twin-legend");
    const wrap = panel.append("div").attr("class", "ibweb-scroll");
    const table = wrap.append("table").attr("class", "ibweb-table ibweb-twin-table");
    table.append("caption").attr("class", "ibweb-sr").text("Links whose traffic differs from what the known jobs should drive, worst first");
    table.append("thead").append("tr").selectAll("th").data(["Deviation", "Link", "Expected", "Observed", "Jobs"]).join("th")
      .attr("scope", "col").text((d) => d);
    const body = table.append("tbody");
    const plan = panel.append("p").attr("class", "ibweb-twin-plan");
    // What-if from the live state: today's jobs with a switch failed or another engine (an analysis task).
    const whatif = panel.append("form").attr("class", "ibweb-twin-whatif").attr("hidden", true)
      .attr("aria-label", "What-if from the live state: today's jobs with a switch failed or another routing engine");
    const switchPick = whatif.append("label").text("Fail ").append("select").attr("name", "switch");
    const enginePick = whatif.append("label").text(" route with ").append("select").attr("name", "engine");
    enginePick.selectAll("option").data([["", "the fabric's engine"], ["minhop", "minhop"], ["updn", "updn"],
      ["ftree", "ftree"], ["dfsssp", "dfsssp"]]).join("option").attr("value", (d) => d[0]).text((d) => d[1]);
    const runButton = whatif.append("button").attr("type", "submit").text("What-if");
    const said = whatif.append("output").attr("aria-live", "polite");
    whatif.on("submit", async (event) => {
      event.preventDefault();
      const params = {};
      if (switchPick.property("value")) params.failed_switches = [switchPick.property("value")];
      if (enginePick.property("value")) params.engine = enginePick.property("value");
      runButton.property("disabled", true);
      said.text(" starting…");
      try {
        const a = await analyses.create("whatif_live", params);
        said.text(` analysis ${a.id} started (see Analyses)`);
      } catch (error) {
        said.text(` ${error.message}`);
      } finally {
        runButton.property("disabled", false);
      }
    });
    if (analyses) analyses.canCreate().then((allowed) => whatif.attr("hidden", allowed ? null : true));

    function setMode(next) {
      mode = next;
      buttons.attr("aria-checked", (d) => String(d[0] === mode)).classed("ibweb-active", (d) => d[0] === mode);
      legend.selectAll("span").data(mode === "expected" ? [["below expected", OVERLAY_COLORS.below], ["above expected / unexplained", OVERLAY_COLORS.unexplained]]
        : mode === "plan" ? [["miswired", OVERLAY_COLORS.miswired], ["not in plan", OVERLAY_COLORS.extra], ["speed/width", OVERLAY_COLORS.wrong]] : [])
        .join("span").attr("class", "ibweb-twin-key").style("--key", (d) => d[1]).text((d) => d[0]);
      map.overlay(mode === "off" ? null : () => overlayCables(ctx.frame?.twin, ctx.fabric?.L ?? 0, mode));
    }

    function draw() {
      const shown = rows.slice(0, count);
      body.selectAll("tr").data(shown.length ? shown : [null]).join("tr")
        .attr("data-kind", (d) => d?.kind ?? null).classed("ibweb-alerted", (d) => !!d?.alert)
        .selectAll("td").data((d) => (d ? [d, d, d, d, d] : [null]).map((row, i) => [row, i])).join("td")
        .attr("colspan", ([row]) => (row ? null : 5))
        .attr("class", ([row, i]) => (row && (i === 2 || i === 3) ? "ibweb-num" : null))
        .each(function ([row, i]) {
          const td = this;
          td.replaceChildren();
          if (!row) {
            td.textContent = fetched.error || "No deviation: the links carry what the known jobs should drive.";
            return;
          }
          if (i === 0) td.textContent = `${row.alert ? "⚠ " : ""}${row.text}`;
          else if (i === 1) {
            if (row.link >= 0) {
              const button = document.createElement("button");
              button.type = "button";
              button.className = "ibweb-linkbutton";
              button.textContent = row.label;
              button.addEventListener("click", () => ctx.select({kind: "link", index: row.link % ctx.fabric.L}));
              td.append(button);
            } else td.textContent = row.label;
          } else if (i === 2) td.textContent = row.expected == null ? "–" : gbps(row.expected);
          else if (i === 3) td.textContent = row.observed == null ? "–" : gbps(row.observed);
          else td.textContent = row.jobs.join(", ");
        });
    }

    function refresh(key) {
      fetched.busy = true;
      client.expected().then((answer) => {
        rows = deviationRows(answer);
        fetched = {at: performance.now(), key, busy: false, error: ""};
        draw();
      }, (error) => {
        fetched = {at: performance.now(), key, busy: false, error: `Deviations not available: ${error.message}`};
        rows = [];
        draw();
      });
    }

    setMode("off");
    ctx.on("snapshot.twin", (fabric) => {
      const {name, isHost} = fabric.nodes;
      switchPick.selectAll("option").data([["", "nothing"], ...name.filter((_, i) => !isHost[i]).map((n) => [n, n])])
        .join("option").attr("value", (d) => d[0]).text((d) => d[1]);
      rows = [];
      fetched = {at: -Infinity, key: "", busy: false, error: ""};
    });
    ctx.on("frame.twin", (frame) => {
      const twin = frame.twin;
      panel.property("hidden", !twin);
      if (!twin) return;
      summary.text(`${twin.jobs} running job${twin.jobs === 1 ? "" : "s"} · ${twin.deviations} deviation${twin.deviations === 1 ? "" : "s"}` +
        ` · ${twin.alerts} alert${twin.alerts === 1 ? "" : "s"}`);
      plan.selectAll("*").remove();
      plan.append("span").text(twin.plan ? `Cabling: ${twin.plan.summary}` : "No cabling plan uploaded");
      if (planURL) plan.append("a").attr("href", planURL).text(twin.plan ? " · plan report" : " · upload one");
      const key = `${twin.deviations}|${twin.alerts}`;
      if (!fetched.busy && client && (key !== fetched.key || performance.now() - fetched.at > REFRESH_MS)) refresh(key);
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /** The topology chart whose overlay this panel sets. */
  chart.map = function (_) {
    return arguments.length ? ((map = _), chart) : map;
  };
  /** The twin API client (api().twin()). */
  chart.api = function (_) {
    return arguments.length ? ((client = _), chart) : client;
  };
  /** The analyses client (api().analyses()) the what-if form starts analyses with. */
  chart.analyses = function (_) {
    return arguments.length ? ((analyses = _), chart) : analyses;
  };
  /** URL of the fabric's plan page. */
  chart.planURL = function (_) {
    return arguments.length ? ((planURL = _), chart) : planURL;
  };
  /** Rows shown at most. */
  chart.count = function (_) {
    return arguments.length ? ((count = _), chart) : count;
  };
  /** The ranked rows last fetched: [{kind, text, link, label, expected, observed, jobs, alert}]. */
  chart.rows = () => rows;
  /** The map overlay mode: "off", "expected" or "plan". */
  chart.mode = () => mode;
  return chart;
}
