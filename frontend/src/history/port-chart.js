// Draws a port's history chart (issue 40) into an SVG from its model (port-panes.js chartModel): the panes with
// their y ticks and lines, the time axis under the last, the down stretches shaded and the cable swaps marked
// across all of them. Attributes only (no inline style: the page runs under a strict content security policy).
import {select} from "d3";

const DOWN = "rgba(255, 107, 107, 0.18)";
const SWAP = "#ff6b6b";
const MUTED = "#8a93a0";
const LINE = "#2a313b";

/**
 * Draw `model` into `svg` (a DOM element or d3 selection), replacing what was drawn.
 * @param {Element|object} svg
 * @param {object} model from chartModel
 * @param {string} label what the chart shows, for its accessible name
 */
export function drawPortChart(svg, model, label) {
  const root = (svg.node ? svg : select(svg)).attr("width", model.width).attr("height", model.height)
    .attr("viewBox", `0 0 ${model.width} ${model.height}`).attr("role", "img")
    .attr("aria-label", `${label}: ${model.points} bins with data${model.swaps.length ? `, ${model.swaps.length} cable swap${model.swaps.length > 1 ? "s" : ""}` : ""}`)
    .attr("data-points", model.points).attr("data-swaps", model.swaps.length).attr("data-downs", model.downs.length);
  const plot = root.selectAll("g.ibweb-plot").data([model]).join("g").attr("class", "ibweb-plot")
    .attr("transform", `translate(${model.left},0)`);
  const bottom = model.height - 22;
  plot.selectAll("g.ibweb-pane").data(model.panes, (p) => p.key).join((enter) => {
    const g = enter.append("g").attr("class", "ibweb-pane");
    g.append("text").attr("class", "ibweb-pane-title").attr("x", 0).attr("y", -4).attr("fill", MUTED)
      .attr("font-size", 11);
    g.append("g").attr("class", "ibweb-pane-ticks");
    g.append("g").attr("class", "ibweb-pane-lines");
    g.append("text").attr("class", "ibweb-pane-empty").attr("y", 20).attr("fill", MUTED).attr("font-size", 11);
    return g;
  }).attr("data-pane", (p) => p.key).attr("transform", (p) => `translate(0,${p.y0})`)
    .call((g) => g.select(".ibweb-pane-title").text((p) => [p.title, ...p.lines.map((l) => l.text).filter(Boolean)].join("   ")))
    .call((g) => g.select(".ibweb-pane-empty").attr("x", model.plotWidth / 2).attr("text-anchor", "middle")
      .text((p) => (p.empty ? "nothing stored in this window" : "")))
    .call((g) => g.select(".ibweb-pane-ticks").selectAll("g").data((p) => p.ticks).join((enter) => {
      const t = enter.append("g");
      t.append("line").attr("stroke", LINE).attr("x1", 0);
      t.append("text").attr("x", -4).attr("dy", "0.32em").attr("text-anchor", "end").attr("fill", MUTED)
        .attr("font-size", 10);
      return t;
    }).attr("transform", (t) => `translate(0,${t.y})`)
      .call((t) => t.select("line").attr("x2", model.plotWidth))
      .call((t) => t.select("text").text((d) => d.text)))
    .call((g) => g.select(".ibweb-pane-lines").selectAll("path").data((p) => p.lines).join("path")
      .attr("fill", "none").attr("stroke-width", 1.4).attr("stroke", (l) => l.color).attr("d", (l) => l.d)
      .attr("data-series", (l) => l.series).attr("data-points", (l) => l.points));
  plot.selectAll("g.ibweb-time-axis").data([model]).join("g").attr("class", "ibweb-time-axis")
    .attr("transform", `translate(0,${bottom})`)
    .selectAll("text").data(model.xTicks).join("text").attr("x", (t) => t.x).attr("y", 14)
    .attr("text-anchor", "middle").attr("fill", MUTED).attr("font-size", 10).text((t) => t.text);
  plot.selectAll("g.ibweb-downs").data([model]).join("g").attr("class", "ibweb-downs")
    .selectAll("rect").data(model.downs).join((enter) => enter.append("rect").attr("fill", DOWN)
      .call((r) => r.append("title").text("link down")))
    .attr("x", (s) => s.x).attr("width", (s) => s.width).attr("y", 0).attr("height", bottom);
  plot.selectAll("g.ibweb-swaps").data([model]).join("g").attr("class", "ibweb-swaps")
    .selectAll("g").data(model.swaps, (s) => s.t).join((enter) => {
      const g = enter.append("g").attr("class", "ibweb-swap");
      g.append("line").attr("stroke", SWAP).attr("stroke-dasharray", "3,3").attr("y1", 0);
      g.append("text").attr("x", 3).attr("y", 10).attr("fill", SWAP).attr("font-size", 10).text("swap");
      g.append("title");
      return g;
    }).attr("transform", (s) => `translate(${s.x},0)`)
    .call((g) => g.select("line").attr("y2", bottom))
    .call((g) => g.select("title").text((s) => `${new Date(s.t * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC: ${s.text}`));
}
