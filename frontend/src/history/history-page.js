// The History page of a fabric (issue 40; ibweb/dashboard/templates/dashboard/history.html): the range picker,
// the hottest and the most erroring ports over the window (top-N of the per-port history API), and a chart per
// chosen port, a switch's ports side by side (switch-ports.js). The address keeps the choice (`?range=7d` or
// `?from=&to=` in UTC, `ports=leaf01:3,spine02:1`, `errors=<series>`, `job=<id>`: its links over its run,
// `switch=<node>&switch_series=<series>`); without ports the hottest few are charted. The charts' series come in one
// request for all the ports (the API's several-ports endpoint; a few when its caps split them). `root.dataset` tells
// the tests and the bench how far it got: state, charts (drawn), firstChartMs and allChartsMs (from the navigation's
// start).
import {select} from "d3";
import {chartModel, chartPanes, chartSeries, defaultErrorSeries, errorLabel, errorSeries, FORMATS} from "./port-panes.js";
import {jobLinks} from "./job-links.js";
import {switchPorts} from "./switch-ports.js";
import {drawPortChart} from "./port-chart.js";
import {rangePicker} from "./range-picker.js";
import {parseRange, rangeLabel, rangeParams, rangeWindow, pointsFor} from "./time-range.js";
import {tsdbClient} from "./tsdb-client.js";

/** Ports charted when the address names none: the hottest this many. */
export const AUTO_PORTS = 4;
/** Ports charted at most. */
export const MAX_PORTS = 32;
/** Rows of each top-N table. */
export const TOP_N = 10;

/**
 * The ports the address names: `ports=leaf01:3,0x0002c9:1` (the last colon splits node and port), unreadable
 * entries and repeats left out, at most MAX_PORTS.
 * @param {string} search location.search
 * @returns {{node: string, port: number}[]}
 */
export function parsePorts(search) {
  const raw = new URLSearchParams(search ?? "").get("ports") ?? "";
  const out = [];
  for (const item of raw.split(",")) {
    const at = item.lastIndexOf(":");
    const node = item.slice(0, at).trim();
    const port = Number(item.slice(at + 1));
    if (at < 1 || !node || !Number.isInteger(port) || port < 1 || port > 255) continue;
    if (!out.some((p) => p.node === node && p.port === port)) out.push({node, port});
  }
  return out.slice(0, MAX_PORTS);
}

/**
 * The page's address for a state (the inverse of parseRange and parsePorts).
 * @param {{range: object, ports: {node: string, port: number}[]|null, errors: string|null, job?: string|null,
 *   switchNode?: string|null, switchSeries?: string|null}} state ports null: auto
 * @returns {string} "?range=24h&ports=…"
 */
export function pageQuery({range, ports, errors, job = null, switchNode = null, switchSeries = null}) {
  const q = new URLSearchParams(rangeParams(range));
  if (ports?.length) q.set("ports", ports.map((p) => `${p.node}:${p.port}`).join(","));
  if (errors) q.set("errors", errors);
  if (job) q.set("job", job);
  if (switchNode) q.set("switch", switchNode);
  if (switchNode && switchSeries && switchSeries !== "utilization") q.set("switch_series", switchSeries);
  return `?${q.toString().replace(/%3A/g, ":").replace(/%2C/g, ",")}`;
}

/**
 * Each port of a several-ports answer as the charts take it: the port's answer of each series in the shape of the
 * single-port endpoint's ({node, port, series, unit, agg, start, end, t, values, swaps}), or its error.
 * @param {object} answer {start, end, t, series: {name: {unit, agg}}, ports: [{node, port, values, swaps, error}]}
 * @param {string[]} names the series asked
 * @returns {({bodies: Object<string, object>}|{error: string})[]} in the order of answer.ports
 */
export function portBodies(answer, names) {
  return (answer.ports ?? []).map((p) => (p.error ? {error: p.error.detail ?? `HTTP ${p.error.status}`} : {
    bodies: Object.fromEntries(names.map((n) => [n, {node: p.node, port: p.port, series: n, ...answer.series?.[n],
      start: answer.start, end: answer.end, t: answer.t, values: p.values?.[n] ?? [], swaps: p.swaps ?? []}])),
  }));
}

const portKey = (p) => `${p.node}:${p.port}`;
const portText = (p) => `${p.node} port ${p.port}`;

/**
 * Wire the History page.
 * @param {Element} root the page's main element (data-fabric, data-api, data-map)
 * @param {object} [options] {fetch, now: function returning seconds}
 * @returns {{load: function(): Promise<void>, state: function(): object}}
 */
export function historyPage(root, {fetch, now = () => Date.now() / 1000} = {}) {
  const page = select(root);
  const {fabric = "", api = "/api/", map = `/fabrics/${encodeURIComponent(fabric)}/`} = root.dataset;
  const client = tsdbClient().base(api).fabric(fabric);
  if (fetch) client.fetch(fetch);
  const catalog = JSON.parse(root.querySelector("#history-series")?.textContent ?? "[]");
  const errorChoices = errorSeries(catalog);
  const parsed = parseRange(location.search, now());
  const asked = new URLSearchParams(location.search).get("errors");
  const state = {
    range: parsed.range,
    ports: parsePorts(location.search),
    auto: false,
    errors: errorChoices.some((s) => s.name === asked) ? asked : defaultErrorSeries(catalog),
    hot: [], erroring: [], window: null, job: new URLSearchParams(location.search).get("job") || null,
    switchNode: new URLSearchParams(location.search).get("switch") || null,
    switchSeries: new URLSearchParams(location.search).get("switch_series") || null,
  };
  state.auto = !state.ports.length;
  const status = page.select(".history-status");
  const note = page.select("#history-charts-note");
  const charts = page.select("#history-charts");
  const drawn = new Map(); // port key -> {bodies, panes, window} of the chart's last answer
  let generation = 0;

  const picker = rangePicker().value(state.range).now(now).on("change", (range) => {
    state.range = range;
    load();
  });
  page.select("#history-range").call(picker);

  const pick = page.select("#history-error-series").property("disabled", !errorChoices.length)
    .on("change", function () {
      state.errors = this.value;
      load();
    });
  pick.selectAll("option").data(errorChoices.length ? errorChoices : [{name: "", label: "none stored"}])
    .join("option").attr("value", (s) => s.name).text((s) => s.label);
  pick.property("value", state.errors ?? "");

  page.select("#history-add").on("submit", function (event) {
    event.preventDefault();
    const node = this.elements.node.value.trim();
    const port = Number(this.elements.port.value);
    const error = page.select("#history-add-error");
    if (!node || !Number.isInteger(port) || port < 1 || port > 255) return void error.text("A node and a port from 1 to 255.");
    error.text("");
    toggle({node, port}, true);
    this.reset();
  });

  const job = jobLinks(root, {client, window: () => state.window, chart: (p) => toggle(p, true), jobs: () => client.jobs(),
    shown: (id) => ((state.job = id), remember())});
  const switches = switchPorts(root, {client, window: () => state.window, catalog, chart: (p) => toggle(p, true),
    node: state.switchNode, series: state.switchSeries,
    shown: (node, series) => ((state.switchNode = node), (state.switchSeries = series), remember())});
  new ResizeObserver(() => redraw()).observe(charts.node());

  function remember() {
    const query = pageQuery({range: state.range, ports: state.auto ? null : state.ports, job: state.job,
      switchNode: state.switchNode, switchSeries: state.switchSeries,
      errors: state.errors === defaultErrorSeries(catalog) ? null : state.errors});
    if (query !== location.search) history.replaceState(null, "", query);
  }

  /** Chart `port` (on) or stop charting it; the charted ports become the page's own choice. */
  function toggle(port, on) {
    const had = state.ports.some((p) => portKey(p) === portKey(port));
    if (on === had) return;
    state.auto = false;
    state.ports = on ? [...state.ports, port].slice(-MAX_PORTS) : state.ports.filter((p) => portKey(p) !== portKey(port));
    remember();
    drawTops();
    drawCards();
  }

  function topRows(table, rows, format, what) {
    const body = page.select(table).select("tbody");
    const message = typeof rows === "string" ? rows : rows.length ? null : `No port has ${what} stored in this window.`;
    if (message) {
      body.selectAll("tr").remove();
      body.append("tr").attr("class", "history-none").append("td").attr("colspan", 4).text(message);
      return;
    }
    body.selectAll("tr.history-none").remove();
    const charted = new Set(state.ports.map(portKey));
    body.selectAll("tr").data(rows.map((r, i) => ({...r, rank: i + 1, node: r.node ?? r.guid})), (r) => `${r.node}:${r.port}`)
      .join((enter) => enter.append("tr").call((tr) => {
        tr.append("td").attr("class", "num");
        tr.append("td").append("a");
        tr.append("td").attr("class", "num");
        tr.append("td").append("button").attr("type", "button").attr("class", "history-chart-toggle")
          .on("click", function (_, r) {
            toggle({node: r.node, port: r.port}, this.getAttribute("aria-pressed") !== "true");
          });
      }))
      .attr("class", null).attr("data-node", (r) => r.node).attr("data-port", (r) => r.port)
      .call((tr) => tr.select("td:nth-child(1)").text((r) => r.rank))
      .call((tr) => tr.select("a").attr("href", (r) => `${map}?focus=node:${encodeURIComponent(r.node)}`)
        .attr("title", "on the live map").text((r) => portText(r)))
      .call((tr) => tr.select("td:nth-child(3)").text((r) => (r.value == null ? "–" : format(r.value))))
      .call((tr) => tr.select("button").attr("aria-pressed", (r) => String(charted.has(portKey(r))))
        .attr("aria-label", (r) => `${charted.has(portKey(r)) ? "Charted" : "Chart"} ${portText(r)}`)
        .text((r) => (charted.has(portKey(r)) ? "Charted" : "Chart")));
  }

  function drawTops() {
    topRows("#history-hot", state.hot, FORMATS.percent, "utilization");
    topRows("#history-errors", state.errors ? state.erroring : "No error counter is stored.", FORMATS.perSecond,
      `${state.errors ? errorLabel(state.errors) : "error"} counts`);
  }

  function drawCards() {
    const ports = state.ports;
    note.text(!ports.length ? "No port charted: pick one in the tables or name it above."
      : state.auto ? `The ${ports.length} hottest port${ports.length > 1 ? "s" : ""} of the window; pick others in the tables.` : "");
    const cards = charts.selectAll("article.history-chart").data(ports, portKey).join((enter) => enter.append("article")
      .attr("class", "history-chart").call((a) => {
        const head = a.append("header");
        head.append("h3").text(portText);
        head.append("a").attr("href", (p) => `${map}?focus=node:${encodeURIComponent(p.node)}`)
          .attr("aria-label", (p) => `${p.node} on the live map`).text("map");
        head.append("button").attr("type", "button").attr("class", "link").attr("aria-label", (p) => `Remove ${portText(p)}`)
          .text("Remove").on("click", (_, p) => toggle(p, false));
        a.append("p").attr("class", "history-chart-message muted").attr("aria-live", "polite");
        a.append("svg");
      }))
      .attr("data-node", (p) => p.node).attr("data-port", (p) => p.port);
    const wanted = [];
    cards.each(function (p) {
      const kept = drawn.get(portKey(p));
      if (!kept || kept.window !== state.window) wanted.push({card: select(this), port: p});
    });
    if (wanted.length) chart(wanted, state.window);
    root.dataset.charted = String(ports.length);
  }

  /** The charts of `items` ({card, port}) over `window`: every series of every port in one request (or a few). */
  function chart(items, window) {
    const mine = generation;
    const panes = chartPanes(catalog, state.errors);
    const names = chartSeries(panes, catalog);
    const points = pointsFor(cardWidth(items[0].card) - 80);
    for (const {card, port} of items) { // the charts asked: at most MAX_PORTS
      drawn.set(portKey(port), {window, bodies: null, panes});
      card.attr("data-state", "loading").select(".history-chart-message").text(`Loading ${rangeLabel(state.range)}…`);
    }
    const current = ({port}) => mine === generation && drawn.get(portKey(port))?.window === window;
    return client.portsSeries(items.map((i) => i.port), names, {...window, points}).then((answer) => {
      for (const [k, got] of portBodies(answer, names).entries()) { // the ports asked, in their order
        if (!current(items[k])) continue;
        if (got.error) failed(items[k], got.error);
        else settled(items[k], window, got.bodies, panes);
      }
    }, (e) => items.filter(current).forEach((item) => failed(item, e.message)));
  }

  function failed({card, port}, message) {
    drawn.delete(portKey(port));
    card.attr("data-state", "error").select(".history-chart-message").text(`No history: ${message}`);
    card.select("svg").selectAll("*").remove();
  }

  function settled({card, port}, window, bodies, panes) {
    drawn.set(portKey(port), {window, bodies, panes});
    card.select(".history-chart-message").text("");
    draw(card, port);
    card.attr("data-state", "drawn");
    const done = charts.selectAll('article.history-chart[data-state="drawn"]').size();
    root.dataset.charts = String(done);
    if (!root.dataset.firstChartMs) root.dataset.firstChartMs = performance.now().toFixed(1);
    if (done === state.ports.length && !root.dataset.allChartsMs) root.dataset.allChartsMs = performance.now().toFixed(1);
  }

  /** The width inside a chart's card, px (its padding left out). */
  function cardWidth(card) {
    const node = card.node();
    const pad = parseFloat(getComputedStyle(node).paddingLeft) + parseFloat(getComputedStyle(node).paddingRight);
    return Math.max(200, (node.clientWidth || charts.node().clientWidth || 900) - (pad || 0));
  }

  function draw(card, port) {
    const kept = drawn.get(portKey(port));
    if (!kept?.bodies) return;
    const model = chartModel(kept.bodies, kept.panes, {...kept.window, width: cardWidth(card)});
    drawPortChart(card.select("svg"), model, `History of ${portText(port)}, ${rangeLabel(state.range)}`);
  }

  function redraw() {
    job.draw();
    switches.draw();
    charts.selectAll("article.history-chart").each(function (p) {
      draw(select(this), p);
    });
  }

  async function load() {
    const mine = ++generation;
    state.window = rangeWindow(state.range, now());
    const window = state.window;
    remember();
    root.dataset.state = "loading";
    status.text(`Loading ${rangeLabel(state.range)}…`);
    drawn.clear();
    charts.selectAll("article.history-chart").attr("data-state", "loading");
    // the rankings first in the queue, then the charts of the ports the address names
    const hot = client.top("utilization", {...window, n: TOP_N}).then((a) => a.ports, (e) => `Not ranked: ${e.message}`);
    const erroring = state.errors ? client.top(state.errors, {...window, n: TOP_N})
      .then((a) => a.ports, (e) => `Not ranked: ${e.message}`) : Promise.resolve([]);
    if (!state.auto) drawCards();
    switches.load();
    state.hot = await hot;
    if (mine !== generation) return;
    if (state.auto) {
      state.ports = Array.isArray(state.hot) ? state.hot.slice(0, AUTO_PORTS).map((r) => ({node: r.node ?? r.guid, port: r.port})) : [];
    }
    drawTops();
    drawCards();
    state.erroring = await erroring;
    if (mine !== generation) return;
    drawTops();
    status.text(typeof state.hot === "string" ? state.hot : `Over the ${rangeLabel(state.range)}.`);
    root.dataset.state = "ready";
    root.dataset.loads = String(Number(root.dataset.loads ?? 0) + 1);
  }

  if (parsed.error) status.text(parsed.error);
  load();
  if (state.job) job.show(state.job, true);
  return {load, state: () => ({...state, drawn: [...drawn.keys()]})};
}
