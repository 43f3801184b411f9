// Page header: the fabric's name and mode, from the snapshot (the page's slug until then).
/**
 * The header: `selection.call(header().context(ctx).title(slug))`.
 * @returns {function} the chart, with chained accessors context and title
 */
export function header() {
  let ctx = null;
  let title = "";

  function chart(selection) {
    const top = selection.classed("ibweb-header", true);
    const name = top.append("h1").text(title);
    const mode = top.append("span").attr("class", "ibweb-mode");
    ctx.on("snapshot.header", (fabric) => {
      name.text(fabric.name || title);
      mode.text(fabric.mode).property("hidden", !fabric.mode);
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.title = function (_) {
    return arguments.length ? ((title = _), chart) : title;
  };
  return chart;
}
