// Colour legend: the utilization scale as an SVG ramp with a 0%..100% axis, the congested mark, how the map draws
// cables that are down (red, dashed) or degraded (dashed, in their colour), and the congestion tree of the credit flow
// control model (its roots and the cables held back).
import {axisBottom, format, range, scaleLinear} from "d3";
import {utilColor} from "../colors.js";
import {HELD_DASH, TREE_KEYS} from "../congestion-tree.js";

let legends = 0;

/**
 * The legend chart: `selection.call(legend())`; with a context, the congestion tree's keys show only while the
 * newest frame carries a tree (the credit flow control model), else always.
 * @returns {function} the chart, with chained accessors width, title and context
 */
export function legend() {
  let width = 240;
  let title = "Link utilization";
  let ctx = null;
  const id = `ibweb-ramp-${++legends}`;

  function chart(selection) {
    const ramp = 12;
    const congested = 56;
    const x = scaleLinear().domain([0, 1]).range([0, width - congested - 8]);
    const conditions = 96;
    const tree = 140;
    const svg = selection
      .append("svg")
      .attr("class", "ibweb-legend")
      .attr("width", width + 24 + conditions + tree)
      .attr("height", 46)
      .attr("role", "img")
      .attr("aria-label", `${title}: colour from 0% to 100%; congested links (over 100%) drawn dashed; cables down drawn ` +
        "dashed red, degraded cables (narrower or slower than before) dashed in their colour; with credit flow control, " +
        "congestion roots drawn thick orange and cables held back by credits dashed violet");
    svg.append("text").attr("class", "ibweb-legend-title").attr("x", 8).attr("y", 11).text(title);
    const body = svg.append("g").attr("transform", "translate(8,16)");
    body
      .append("defs")
      .append("linearGradient")
      .attr("id", id)
      .selectAll("stop")
      .data(range(0, 1.0001, 0.1))
      .join("stop")
      .attr("offset", (u) => u)
      .attr("stop-color", (u) => utilColor(u));
    body.append("rect").attr("width", x(1)).attr("height", ramp).attr("fill", `url(#${id})`);
    body
      .append("g")
      .attr("class", "ibweb-axis")
      .attr("transform", `translate(0,${ramp})`)
      .call(axisBottom(x).ticks(4).tickFormat(format(".0%")).tickSizeOuter(0));
    const over = body.append("g").attr("transform", `translate(${x(1) + 16},0)`);
    over.append("line").attr("y1", ramp / 2).attr("y2", ramp / 2).attr("x2", congested - 12)
      .attr("stroke", utilColor(1)).attr("stroke-width", 3);
    over.append("line").attr("y1", ramp / 2).attr("y2", ramp / 2).attr("x2", congested - 12)
      .attr("stroke", "#0e1217").attr("stroke-width", 3).attr("stroke-dasharray", "4 4");
    over.append("text").attr("class", "ibweb-legend-over").attr("y", ramp + 14).text(">100%");
    // Down and degraded cables (condition alerts), as topology.js draws them: dashes over a gap of the background.
    const keys = body.append("g").attr("class", "ibweb-legend-conditions").attr("transform", `translate(${width},0)`);
    [["down", "#e5534b", 2], ["degraded", utilColor(0.6), 22]].forEach(([label, color, y]) => {
      const key = keys.append("g").attr("transform", `translate(0,${y})`);
      key.append("line").attr("x2", 24).attr("stroke", color).attr("stroke-width", 2).attr("stroke-dasharray", "6 4");
      key.append("text").attr("x", 30).attr("y", 4).text(label);
    });
    // The congestion tree (credit flow control), as topology.js draws it.
    const treeKeys = body.append("g").attr("class", "ibweb-legend-tree").attr("transform", `translate(${width + conditions},0)`);
    TREE_KEYS.forEach(([label, color, dashed], j) => {
      const key = treeKeys.append("g").attr("transform", `translate(0,${2 + 20 * j})`);
      key.append("line").attr("x2", 24).attr("stroke", color).attr("stroke-width", dashed ? 2 : 4)
        .attr("stroke-dasharray", dashed ? HELD_DASH.join(" ") : null);
      key.append("text").attr("x", 30).attr("y", 4).text(label);
    });
    if (ctx) {
      let shown = null;
      const show = (on) => {
        if (on === shown) return;
        shown = on;
        treeKeys.attr("display", on ? null : "none");
        svg.attr("width", width + 24 + conditions + (on ? tree : 0));
      };
      show(false);
      ctx.on(`frame.legend-${id}`, (frame) => show(Boolean(frame.congestionTree)));
    }
  }

  chart.width = function (_) {
    return arguments.length ? ((width = _), chart) : width;
  };
  /** The dashboard's context (frames): the tree's keys follow the newest frame. */
  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.title = function (_) {
    return arguments.length ? ((title = _), chart) : title;
  };
  return chart;
}
