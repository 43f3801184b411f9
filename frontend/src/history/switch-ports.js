// A switch's ports side by side on the History page (issue 40), from `GET .../nodes/<node>/tsdb/` (every stored port
// of the node in the same bins): a heat strip, one row per port, one cell per bin, coloured by the series over the
// window the page's range picker sets, on the time axis of the port charts below (the same left margin and width),
// and a table of the ports (the cable's other end, the series over the window, a button charting the port).
// The strip is drawn on a canvas (a 64-port switch over 1,000 bins is 64,000 cells); the table is its text.
import {interpolateViridis, scaleLinear, scaleLog, select} from "d3";
import {FORMATS} from "./port-panes.js";
import {timeAxis, valueRange} from "./series-geometry.js";
import {pointsFor} from "./time-range.js";

/** Left margin (the port labels) and right margin of the strip, px: the port charts' (port-panes.js chartModel). */
const LEFT = 70;
const RIGHT = 10;
/** Colour of a bin where nothing was stored. */
export const EMPTY = "#2a313b";
const MUTED = "#8a93a0";

/**
 * How a series' values read: its format, a factor to apply first, and a fixed colour domain (null: the data's).
 * @param {{series: string, unit: string}} body
 * @returns {{format: function(number): string, factor: number, domain: [number, number]|null, log: boolean}}
 */
export function seriesReading({series, unit}) {
  if (unit === "bytes/s") return {format: FORMATS.gbps, factor: 8e-9, domain: null, log: false};
  if (series === "utilization") return {format: FORMATS.percent, factor: 1, domain: [0, 1], log: false};
  if (unit === "bool") return {format: (v) => (v >= 1 ? "up" : v <= 0 ? "down" : `${FORMATS.percent(v)} up`), factor: 1,
    domain: [0, 1], log: false};
  if (unit === "ratio") return {format: FORMATS.ber, factor: 1, domain: null, log: true};
  if (unit === "celsius") return {format: FORMATS.celsius, factor: 1, domain: null, log: false};
  if (unit === "dBm") return {format: (v) => `${v.toFixed(1)} dBm`, factor: 1, domain: null, log: false};
  return {format: FORMATS.perSecond, factor: 1, domain: null, log: false};
}

/**
 * Each row of values reduced over the window by the series' aggregation (mean of the bins with a value for `mean`),
 * null where none has one.
 * @param {(number|null)[]} values
 * @param {string} agg "mean", "max" or "min"
 * @returns {number|null}
 */
export function overWindow(values, agg) {
  let n = 0;
  let acc = agg === "max" ? -Infinity : agg === "min" ? Infinity : 0;
  for (const v of values ?? []) {
    if (v == null || !Number.isFinite(v)) continue;
    n += 1;
    acc = agg === "max" ? Math.max(acc, v) : agg === "min" ? Math.min(acc, v) : acc + v;
  }
  return n ? (agg === "mean" ? acc / n : acc) : null;
}

/**
 * The strip of a switch answer: a row per port, the time axis of the port charts, the colour of each value.
 * @param {object} body {node, series, unit, agg, start, end, t, ports: [{port, peer, values}]}
 * @param {{width: number, rowHeight?: number}} size px
 * @returns {{width: number, height: number, left: number, plotWidth: number, top: number, rowHeight: number,
 *   binWidth: number, xTicks: {x: number, text: string}[], rows: object[], color: function(number|null): string,
 *   domain: [number, number]|null, cells: number, reading: object}}
 */
export function stripModel(body, {width, rowHeight}) {
  const reading = seriesReading(body);
  const ports = body.ports ?? [];
  const rh = rowHeight ?? Math.max(6, Math.min(14, Math.floor(640 / Math.max(1, ports.length))));
  const plotWidth = Math.max(20, width - LEFT - RIGHT);
  const top = 4;
  const x = timeAxis(body.start, body.end, plotWidth);
  const scaled = ports.map((p) => (p.values ?? []).map((v) => (v == null ? null : v * reading.factor)));
  const known = valueRange(scaled, reading.log);
  const domain = reading.domain ?? (known && (reading.log ? known : [Math.min(0, known[0]), known[1]]));
  let scale = null;
  if (domain) {
    const [a, b] = domain[0] < domain[1] ? domain : reading.log ? [domain[0], domain[0] * 10] : [domain[0], domain[0] + 1];
    scale = (reading.log ? scaleLog() : scaleLinear()).domain([a, b]).range([0, 1]).clamp(true);
  }
  const color = (v) => (v == null || !scale || (reading.log && v <= 0) ? EMPTY : interpolateViridis(scale(v)));
  let cells = 0;
  const rows = ports.map((p, k) => {
    const values = scaled[k];
    cells += values.reduce((n, v) => n + (v != null), 0);
    const value = overWindow(values, body.agg);
    return {port: p.port, peer: p.peer ?? null, y: top + k * rh, values, value,
      text: value == null ? "–" : reading.format(value)};
  });
  const n = body.t?.length ?? 0;
  return {width, height: top + ports.length * rh + 22, left: LEFT, plotWidth, top, rowHeight: rh,
    binWidth: n ? plotWidth / n : plotWidth, xTicks: x.ticks(Math.max(2, Math.floor(plotWidth / 110))), rows, color,
    domain, cells, reading};
}

/**
 * Draw `model` on `canvas` (a DOM element), sized for the device's pixel ratio.
 * @param {HTMLCanvasElement} canvas
 * @param {object} model from stripModel
 * @param {string} label what the strip shows, for its accessible name
 */
export function drawStrip(canvas, model, label) {
  const ratio = globalThis.devicePixelRatio || 1;
  canvas.width = Math.round(model.width * ratio);
  canvas.height = Math.round(model.height * ratio);
  canvas.style.width = `${model.width}px`;
  canvas.style.height = `${model.height}px`;
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", `${label}: ${model.rows.length} ports, ${model.cells} bins with data`);
  canvas.dataset.ports = String(model.rows.length);
  canvas.dataset.cells = String(model.cells);
  const g = canvas.getContext("2d");
  if (!g) return;
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, model.width, model.height);
  g.font = "10px sans-serif";
  g.textBaseline = "middle";
  const labelEvery = Math.ceil(10 / model.rowHeight);
  for (const [k, row] of model.rows.entries()) { // a switch's ports: at most 255 rows
    const h = Math.max(1, model.rowHeight - 1);
    for (let i = 0; i < row.values.length; i += 1) { // its bins: at most 4,000
      g.fillStyle = model.color(row.values[i]);
      g.fillRect(model.left + i * model.binWidth, row.y, Math.ceil(model.binWidth), h);
    }
    if (k % labelEvery === 0) {
      g.fillStyle = MUTED;
      g.textAlign = "right";
      g.fillText(`port ${row.port}`, model.left - 4, row.y + model.rowHeight / 2);
    }
  }
  g.fillStyle = MUTED;
  g.textAlign = "center";
  g.textBaseline = "top";
  const bottom = model.top + model.rows.length * model.rowHeight;
  for (const t of model.xTicks) g.fillText(t.text, model.left + t.x, bottom + 6);
}

/**
 * Wire the switch section of the History page.
 * @param {Element} root the page's main element
 * @param {object} options {client: tsdbClient, window: function returning the picked window {start, end},
 *   catalog: the stored series, chart: function({node, port}) charting a port below, shown: function(node, series)
 *   told of each switch shown, node and series: the address's (a switch shown at once)}
 * @returns {{show: function(string, string=): Promise<void>, load: function(): Promise<void>|undefined,
 *   draw: function(): void}}
 */
export function switchPorts(root, {client, window, catalog, chart, shown: told = () => {}, node = null,
  series: asked = null} = {}) {
  const section = select(root).select(".history-switch");
  const form = section.select("#history-switch");
  const note = section.select("#history-switch-note");
  const canvas = section.select("#history-switch-strip");
  const table = section.select("#history-switch-ports");
  const pick = form.select("select[name=series]");
  const names = (catalog ?? []).map((s) => s.name);
  pick.selectAll("option").data(names).join("option").attr("value", (n) => n).text((n) => n.replace(/_/g, " "));
  pick.property("value", names.includes(asked) ? asked : names.includes("utilization") ? "utilization" : names[0] ?? "");
  let generation = 0;
  let current = null; // {node, series}
  let body = null;

  form.on("submit", (event) => {
    event.preventDefault();
    const name = form.select("input[name=node]").property("value").trim();
    if (name) show(name, pick.property("value"));
  });

  function width() {
    return Math.max(300, section.node().clientWidth || 900);
  }

  function show(name, series = pick.property("value")) {
    current = {node: name, series};
    form.select("input[name=node]").property("value", name);
    pick.property("value", series);
    told(name, series);
    return load();
  }

  async function load() {
    if (!current || !window()) return;
    const mine = ++generation;
    const {node: name, series} = current;
    section.attr("data-state", "loading");
    note.text(`Loading ${name}'s ports…`);
    try {
      body = await client.switchSeries(name, series, {...window(), points: pointsFor(width() - LEFT - RIGHT)});
    } catch (e) {
      if (mine !== generation) return;
      body = null;
      canvas.property("hidden", true);
      table.property("hidden", true).select("tbody").selectAll("tr").remove();
      section.attr("data-state", "error");
      note.text(`${name}: ${e.message}`);
      return;
    }
    if (mine !== generation) return;
    const model = draw();
    note.text(`${body.node}: ${body.ports.length} port${body.ports.length === 1 ? "" : "s"} stored, ${series.replace(/_/g, " ")}`
      + (model?.domain ? ` from ${model.reading.format(model.domain[0])} (dark) to ${model.reading.format(model.domain[1])} (yellow)` : "")
      + "; grey: nothing stored.");
    table.property("hidden", !body.ports.length).select("tbody").selectAll("tr").data(model?.rows ?? [], (r) => r.port)
      .join((enter) => enter.append("tr").call((tr) => {
        tr.append("td").attr("class", "num");
        tr.append("td");
        tr.append("td").attr("class", "num");
        tr.append("td").append("button").attr("type", "button").text("Chart")
          .on("click", (_, r) => chart({node: body.node, port: r.port}));
      }))
      .attr("data-port", (r) => r.port)
      .call((tr) => tr.select("td:nth-child(1)").text((r) => r.port))
      .call((tr) => tr.select("td:nth-child(2)").text((r) => (r.peer ? `${r.peer.node} port ${r.peer.port}` : "–")))
      .call((tr) => tr.select("td:nth-child(3)").text((r) => r.text))
      .call((tr) => tr.select("button").attr("aria-label", (r) => `Chart ${body.node} port ${r.port}`));
    section.attr("data-state", "drawn").attr("data-node", body.node);
  }

  function draw() {
    if (!body) return null;
    const model = stripModel(body, {width: width()});
    canvas.property("hidden", false);
    drawStrip(canvas.node(), model, `${body.series.replace(/_/g, " ")} of ${body.node}'s ports`);
    return model;
  }

  if (node) show(node, pick.property("value"));
  return {show, load, draw};
}
