// Hotspots panel: the most congested directed links, live, with the jobs that cross them.
import {directedLabel, formatUtil} from "../format.js";
import {jobsByLink} from "../highlight.js";
import {hotspotRows} from "../hotspot-rows.js";

/**
 * The hotspots table: `selection.call(hotspots().context(ctx))`. Always `count` rows, so frames never move the page.
 * @returns {function} the chart, with chained accessors context, count and read-out rows()
 */
/** A row's jobs, then the traffic no known job sent ("120 Gb/s from no known job"). */
function jobsText(row) {
  const unknown = row.unattributed > 0 ? `${+row.unattributed.toFixed(1)} Gb/s from no known job` : "";
  return [...row.jobs, unknown].filter(Boolean).join(", ");
}

export function hotspots() {
  let ctx = null;
  let count = 10;
  let byLink = new Map();
  let rows = [];

  function chart(selection) {
    const panel = selection.classed("ibweb-hotspots", true).attr("aria-label", "Hotspots");
    panel.append("h2").text("Hotspots");
    const table = panel.append("table").attr("class", "ibweb-table");
    table.append("caption").attr("class", "ibweb-sr").text("Most congested links: offered load over capacity, utilization, jobs");
    table.append("thead").append("tr").selectAll("th").data(["Link", "Load", "Util", "Jobs"]).join("th")
      .attr("scope", "col").text((d) => d);
    const body = table.append("tbody");
    const trs = body.selectAll("tr").data(Array.from({length: count}, (_, i) => i)).join("tr");
    trs.append("td").append("button").attr("type", "button").attr("class", "ibweb-linkbutton").property("disabled", true)
      .text("–").on("click", (event, i) => rows[i] && ctx.select({kind: "link", index: rows[i].link % ctx.fabric.L}));
    trs.append("td").attr("class", "ibweb-num ibweb-load");
    trs.append("td").attr("class", "ibweb-num ibweb-util");
    trs.append("td").attr("class", "ibweb-jobs");

    ctx.on("catalog.hotspots", (jobs) => (byLink = jobsByLink(jobs)));
    ctx.on("frame.hotspots", (frame) => {
      rows = hotspotRows(frame, count, byLink).filter((r) => r.link >= 0 && r.link < 2 * ctx.fabric.L);
      trs.each(function (i) {
        const row = rows[i];
        const tr = this;
        tr.classList.toggle("ibweb-congested", !!row && row.congestion > 1);
        const [link, load, util, jobs] = tr.children;
        const button = link.firstChild;
        button.disabled = !row;
        button.textContent = row ? directedLabel(ctx.fabric, row.link) : "–";
        button.setAttribute("aria-label", row ? `Select link ${directedLabel(ctx.fabric, row.link)}` : "No hotspot");
        load.textContent = row ? formatUtil(row.congestion) : "";
        util.textContent = row ? formatUtil(row.util) : "";
        jobs.textContent = row ? jobsText(row) : "";
      });
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.count = function (_) {
    return arguments.length ? ((count = _), chart) : count;
  };
  /** The rows shown: [{link, util, congestion, xmitWait, jobs, unattributed}]. */
  chart.rows = () => rows;
  return chart;
}
