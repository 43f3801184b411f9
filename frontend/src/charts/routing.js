// Routing panel: the report of the routing the fabric runs on (engine used, fallback, unreachable entries,
// balance, credit loops), fetched from the API with every topology snapshot of the feed.
import {routingLines, routingRetryDelay} from "../routing-report.js";

/**
 * The routing panel: `selection.call(routingPanel().context(ctx).api(client))`.
 * @returns {function} the chart, with chained accessors context and api, and the last report()
 */
export function routingPanel() {
  let ctx = null;
  let client = null;
  let last = null;

  function chart(selection) {
    const panel = selection.classed("ibweb-routing", true).attr("aria-label", "Routing");
    panel.append("div").attr("class", "ibweb-panel-head").append("h2").text("Routing");
    // one line of fixed height (the full text in its title): the report arriving never moves the panels below
    const out = panel.append("output").attr("class", "ibweb-routing-out").attr("aria-live", "polite");
    const say = (text) => out.text(text).attr("title", text || null);
    const list = panel.append("ul").attr("class", "ibweb-routing-report").attr("aria-label", "Routing report")
      .attr("tabindex", 0); // scrolls: reachable by keyboard

    let timer = null;
    let asked = 0; // the newest request: an older one's answer or retry is dropped

    function load(attempt = 1, id = ++asked) {
      clearTimeout(timer);
      say(attempt > 1 ? "routing… (the engine has not published its routing yet)" : "computing the routing report…");
      client.routing().then((report) => {
        if (id !== asked) return;
        last = report;
        say("");
        list.selectAll("li").data(routingLines(report)).join("li")
          .attr("data-level", (d) => d.level).text((d) => d.text);
      }, (error) => {
        if (id !== asked) return;
        const wait = routingRetryDelay(error, attempt);
        if (wait == null) return void say(`no routing report: ${error.message}`);
        say("routing… (the engine has not published its routing yet)");
        timer = setTimeout(() => load(attempt + 1, id), wait);
      });
    }
    // The engine publishes the report with the routing, before the snapshot that announces it: ask then (and
    // again while it answers 503, as while a record is being replaced).
    ctx.on("snapshot.routing", () => load());
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.api = function (_) {
    return arguments.length ? ((client = _), chart) : client;
  };
  /** The last report shown (null before the first answer). */
  chart.report = () => last;
  return chart;
}
