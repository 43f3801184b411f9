// Status line: feed status, last frame's sequence number and age, refreshed on every clock tick.
import {format} from "d3";

const seconds = format(".1f");

/**
 * The status line: `selection.call(status().context(ctx))`.
 * @returns {function} the chart, with chained accessor context
 */
export function status() {
  let ctx = null;

  function chart(selection) {
    const line = selection.classed("ibweb-status", true);
    const state = line.append("span").attr("class", "ibweb-state").attr("role", "status");
    const seq = line.append("span").attr("class", "ibweb-seq");
    const age = line.append("span").attr("class", "ibweb-age");

    const update = (now) => {
      state.attr("data-status", ctx.status).text(ctx.detail ? `${ctx.status} (${ctx.detail})` : ctx.status);
      const frame = ctx.frame;
      seq.text(frame && frame.seq >= 0 ? `seq ${frame.seq}` : "seq –");
      age.text(Number.isFinite(ctx.receivedAt) ? `${seconds(Math.max(0, now - ctx.receivedAt) / 1000)} s ago` : "");
    };
    ctx.on("status.status", () => update(performance.now())).on("clock.status", update);
    update(performance.now());
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  return chart;
}
