// Alerts and events: the frame's current alerts, and a log of what changed (jobs, congestion, feed status).
import {timeFormat} from "d3";
import {alertText, frameEvents} from "../frame-events.js";

const clock = timeFormat("%H:%M:%S");

/**
 * The alerts panel: `selection.call(alerts().context(ctx))`.
 * @returns {function} the chart, with chained accessors context, keep and read-out events()
 */
export function alerts() {
  let ctx = null;
  let keep = 50;
  const log = [];
  let previous = null;

  function chart(selection) {
    const panel = selection.classed("ibweb-alerts", true).attr("aria-label", "Alerts and events");
    panel.append("h2").text("Alerts and events");
    const current = panel.append("ul").attr("class", "ibweb-alert-list").attr("aria-label", "Current alerts");
    const events = panel.append("ol").attr("class", "ibweb-event-log ibweb-scroll").attr("aria-live", "polite")
      .attr("aria-label", "Event log, newest first").attr("tabindex", 0);

    const add = (level, text, t = Date.now() / 1000) => {
      log.unshift({level, text, t});
      if (log.length > keep) log.pop();
      events.selectAll("li").data(log).join("li").attr("data-level", (d) => d.level)
        .text((d) => `${clock(new Date(d.t * 1000))}  ${d.text}`);
    };

    ctx.on("status.alerts", (status, detail) => add(status === "live" ? "info" : "warning",
      `feed ${status}${detail ? ` (${detail})` : ""}`));
    ctx.on("snapshot.alerts", () => (previous = null));
    ctx.on("frame.alerts", (frame) => {
      const now = {jobs: frame.jobs, alerts: frame.alerts, totals: frame.totals};
      for (const e of frameEvents(previous, now)) add(e.level, e.text, frame.t);
      previous = now;
      current.selectAll("li").data(frame.alerts.length ? frame.alerts : [null]).join("li")
        .attr("data-level", (d) => (d ? (d.severity === "error" ? "error" : "warning") : "none"))
        .text((d) => (d ? alertText(d) : "No alert"));
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.keep = function (_) {
    return arguments.length ? ((keep = _), chart) : keep;
  };
  /** The event log, newest first: [{level, text, t}]. */
  chart.events = () => log;
  return chart;
}
