// The fabric Health page's worst ports over a window (issue 40): a compact range picker over the table and, per
// port row (`#health-worst tr[data-node][data-port]`), a sparkline of its stored effective BER (log10; its
// module temperature where no BER was stored) with the stretches its link was down shaded, from the per-port
// history API. `root.dataset.sparklines` counts the rows answered (the tests read it).
import {select} from "d3";
import {FORMATS} from "./port-panes.js";
import {rangePicker} from "./range-picker.js";
import {seriesSpark} from "./series-geometry.js";
import {rangeLabel, rangeWindow} from "./time-range.js";
import {tsdbClient} from "./tsdb-client.js";

/** Size of a sparkline, px. */
export const SPARK = {width: 140, height: 26};
const DOWN = "rgba(255, 107, 107, 0.35)";

/**
 * What a row's sparkline shows of its answers: the BER where any was stored, else the module temperature.
 * @param {object|null} ber the effective_ber answer
 * @param {object|null} temperature the module_temperature_c answer (null: not asked)
 * @param {object|null} up the link_up answer
 * @returns {{series: string, spark: object}}
 */
export function rowSpark(ber, temperature, up) {
  const has = (b) => (b?.values ?? []).some((v) => v != null);
  if (has(ber) || !has(temperature)) {
    return {series: "effective BER", spark: seriesSpark(ber, {...SPARK, log: true, up, format: FORMATS.ber})};
  }
  return {series: "module temperature", spark: seriesSpark(temperature, {...SPARK, up, format: FORMATS.celsius})};
}

/**
 * Wire the Health page's sparklines: `healthSparklines(document.querySelector("[data-page=health]"))`.
 * @param {Element} root the page's main element (data-fabric)
 * @param {object} [options] {api: the API's base, fetch, now: function returning seconds}
 * @returns {{load: function(): Promise<void>}|null} null on a page without worst ports
 */
export function healthSparklines(root, {api = "/api/", fetch, now = () => Date.now() / 1000} = {}) {
  const table = root.querySelector("#health-worst");
  const rows = [...(table?.querySelectorAll("tbody tr[data-node][data-port]") ?? [])];
  if (!rows.length) return null;
  const client = tsdbClient().base(root.dataset.api ?? api).fabric(root.dataset.fabric ?? "").limit(4);
  if (fetch) client.fetch(fetch);
  let range = {key: "24h"};
  let generation = 0;

  const bar = select(table.parentNode).insert("div", () => table).attr("class", "health-window");
  bar.append("span").attr("class", "muted").text("Trend over ");
  bar.call(rangePicker().compact(true).value(range).now(now).on("change", (r) => ((range = r), load())));
  select(table).select("thead tr").append("th").attr("scope", "col").text("Trend (stored)");
  const cells = rows.map((tr) => {
    const td = select(tr).append("td").attr("class", "health-spark");
    const svg = td.append("svg").attr("width", SPARK.width).attr("height", SPARK.height).attr("role", "img")
      .attr("aria-label", "stored trend loading");
    svg.append("g").attr("class", "health-spark-downs");
    svg.append("path").attr("fill", "none").attr("stroke", "currentColor").attr("stroke-width", 1.2);
    return {tr, td, svg, node: tr.dataset.node, port: Number(tr.dataset.port)};
  });
  select(table).selectAll("tbody tr:not([data-node]) td[colspan]").attr("colspan", 11);

  async function load() {
    const mine = ++generation;
    const window = rangeWindow(range, now());
    const ask = (c, series) => client.portSeries(c.node, c.port, series, {...window, points: SPARK.width})
      .catch(() => null);
    root.dataset.sparklines = "0";
    await Promise.all(cells.map(async (c) => {
      c.td.attr("data-state", "loading");
      const [ber, up] = await Promise.all([ask(c, "effective_ber"), ask(c, "link_up")]);
      const temperature = (ber?.values ?? []).some((v) => v != null) ? null : await ask(c, "module_temperature_c");
      if (mine !== generation) return;
      const {series, spark} = rowSpark(ber, temperature, up);
      const label = ber || up ? `${series}, ${rangeLabel(range)}: ${spark.label}` : "no stored history";
      c.svg.attr("aria-label", label).attr("data-points", spark.points).attr("data-series", series)
        .call((s) => s.select("path").attr("d", spark.d))
        .call((s) => s.select(".health-spark-downs").selectAll("rect").data(spark.downs).join("rect")
          .attr("fill", DOWN).attr("x", (d) => d.x).attr("width", (d) => d.width).attr("y", 0).attr("height", SPARK.height));
      c.td.attr("title", label).attr("data-state", "drawn");
      root.dataset.sparklines = String(Number(root.dataset.sparklines) + 1);
    }));
  }

  load();
  return {load};
}
