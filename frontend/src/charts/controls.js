// Zoom controls of the fabric map: a keyboard-reachable toolbar, with a toggle for the node names.
/**
 * The toolbar: `selection.call(controls().target(topologyChart))`.
 * @returns {function} the chart, with chained accessor target (a topology chart)
 */
export function controls() {
  let target = null;

  function chart(selection) {
    const buttons = [
      ["+", "Zoom in", () => target.zoomBy(1.5)],
      ["−", "Zoom out", () => target.zoomBy(1 / 1.5)],
      ["Reset", "Reset the view", () => target.resetZoom()],
    ];
    const bar = selection
      .append("div")
      .attr("class", "ibweb-controls")
      .attr("role", "toolbar")
      .attr("aria-label", "Map view");
    bar
      .selectAll("button")
      .data(buttons)
      .join("button")
      .attr("type", "button")
      .attr("aria-label", (d) => d[1])
      .attr("title", (d) => d[1])
      .text((d) => d[0])
      .on("click", (event, d) => d[2]());
    if (!target?.labels) return;
    bar
      .append("button")
      .attr("type", "button")
      .attr("class", "ibweb-labels-toggle")
      .attr("aria-label", "Node names")
      .attr("title", "Show node names where they fit")
      .attr("aria-pressed", String(target.labels()))
      .text("Names")
      .on("click", (event) => {
        target.labels(!target.labels());
        event.currentTarget.setAttribute("aria-pressed", String(target.labels()));
      });
  }

  chart.target = function (_) {
    return arguments.length ? ((target = _), chart) : target;
  };
  return chart;
}
