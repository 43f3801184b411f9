// The map's Health overlay: a toggle beside the map's controls; while on, the link health report (refreshed every
// refreshMs) colours each listed port's cable by the worse grade of its ends and marks hot modules and ports with
// downs, with a legend that says which cables are not reported.
import {healthCables, healthLegend} from "../health-rows.js";

/**
 * The overlay: `selection.call(healthOverlay().context(ctx).map(topologyChart).source(healthSource(...)))`.
 * @returns {function} the chart, with chained accessors context, map, source, refreshMs and read-outs on(),
 *   shown() (healthCables of the report drawn), legend() (its keys' labels)
 */
export function healthOverlay() {
  let ctx = null;
  let map = null;
  let source = null;
  let refreshMs = 10000;
  let on = false;
  let shown = null;
  let keys = healthLegend(null);
  let asked = -Infinity;
  const groups = () => shown?.groups ?? null;
  const marks = () => shown?.marks ?? [];

  function chart(selection) {
    const box = selection.append("div").attr("class", "ibweb-health-overlay");
    const button = box.append("button").attr("type", "button").attr("class", "ibweb-health-toggle")
      .attr("aria-pressed", "false").attr("title", "Colour the cables by their link health (BER, modules, downs)")
      .text("Health").on("click", () => setOn(!on));
    const legend = box.append("div").attr("class", "ibweb-health-legend").attr("aria-live", "polite")
      .property("hidden", true);

    function setOn(next) {
      on = next;
      button.attr("aria-pressed", String(on));
      legend.property("hidden", !on);
      map.overlay(on ? groups : null).marks(on ? marks : null);
      if (on) draw(), ask();
    }

    function ask() {
      asked = performance.now();
      source.refresh();
    }

    function update() {
      shown = source.report() ? healthCables(source.report(), ctx.fabric) : null;
      keys = healthLegend(shown, source.problem());
      if (on) draw();
    }

    function draw() {
      legend.selectAll("span").data(keys).join("span").attr("class", (d) => `ibweb-health-key ibweb-health-${d.kind}`)
        .style("--key", (d) => d.color).text((d) => d.label);
      map.overlay(groups); // redraws with the newest report
    }

    source.on("overlay", update);
    ctx.on("snapshot.health", update);
    ctx.on("clock.health", (now) => {
      if (!on) return;
      if (map.overlay() !== groups) setOn(false); // another overlay (the twin's) took the map
      else if (now - asked > refreshMs) ask();
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /** The topology chart coloured. */
  chart.map = function (_) {
    return arguments.length ? ((map = _), chart) : map;
  };
  /** The health source (health-source.js) shared with the port panel. */
  chart.source = function (_) {
    return arguments.length ? ((source = _), chart) : source;
  };
  /** Milliseconds between two reports asked while the overlay is on. */
  chart.refreshMs = function (_) {
    return arguments.length ? ((refreshMs = _), chart) : refreshMs;
  };
  /** Whether the overlay is on. */
  chart.on = () => on;
  /** The report as drawn: healthCables' answer, or null (no report). */
  chart.shown = () => shown;
  /** The legend's labels. */
  chart.legend = () => keys.map((d) => d.label);
  return chart;
}
