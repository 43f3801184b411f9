// Totals panel: hosts, switches, cables, aggregate throughput and the hottest link (a button that selects it).
import {format} from "d3";
import {directedLabel, formatRate, formatUtil} from "../format.js";

const count = format(",d");

/**
 * The totals panel: `selection.call(totals().context(ctx))`; updated on every frame.
 * @returns {function} the chart, with chained accessor context
 */
export function totals() {
  let ctx = null;

  function chart(selection) {
    const panel = selection.classed("ibweb-totals", true).attr("aria-label", "Fabric totals");
    panel.append("h2").text("Totals");
    const list = panel.append("dl");
    const hottest = panel.append("button").attr("type", "button").attr("class", "ibweb-hottest").property("disabled", true);
    hottest.on("click", () => {
      const d = ctx.frame?.totals?.hottest?.link;
      if (Number.isInteger(d)) ctx.select({kind: "link", index: d % ctx.fabric.L});
    });

    ctx.on("frame.totals", (frame) => {
      const t = frame.totals ?? {};
      const rows = [
        ["hosts", "Hosts", count(t.hosts ?? 0)],
        ["switches", "Switches", count(t.switches ?? 0)],
        ["links", "Links", count(t.links ?? ctx.fabric.L)],
        ["throughput", "Delivered to hosts", formatRate(t.throughput_gbps ?? 0)],
        ["switched", "Between switches", formatRate(t.switch_gbps ?? 0)],
      ];
      list
        .selectAll("div")
        .data(rows, (row) => row[0])
        .join((enter) => {
          const div = enter.append("div");
          div.append("dt");
          div.append("dd");
          return div;
        })
        .call((div) => div.select("dt").text((row) => row[1]))
        .call((div) => div.select("dd").text((row) => row[2]));
      const hot = t.hottest;
      const known = hot && Number.isInteger(hot.link) && hot.link >= 0 && hot.link < 2 * ctx.fabric.L;
      hottest
        .property("disabled", !known)
        .text(known ? `Hottest: ${directedLabel(ctx.fabric, hot.link)} ${formatUtil(hot.util)}` : "Hottest: none")
        .attr("title", known ? "Select the hottest link" : null);
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  return chart;
}
