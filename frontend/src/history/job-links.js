// A job's links over its run on the History page (issue 40), from `GET .../jobs/<job>/tsdb/` (the per-port history
// of the out ports its flows crossed, the hottest first, over its run or a window): one chart of the links' series
// in the chart model of port-panes.js (so port-chart.js draws it) and a table of the links, each chartable.
import {schemeTableau10, select} from "d3";
import {FORMATS} from "./port-panes.js";
import {drawPortChart} from "./port-chart.js";
import {paneGeometry, timeAxis} from "./series-geometry.js";
import {pointsFor, toUtcInput} from "./time-range.js";

/** Links of a job drawn (the API ranks them). */
export const JOB_LINKS = 20;

/**
 * The chart model (port-panes.js chartModel's shape) of a job answer: one pane, a line per link.
 * @param {object} body {job, series, unit, start, end, t, links: [{node, port, values}]}
 * @param {{width: number, height?: number}} size px
 * @returns {object} {width, height, left, plotWidth, xTicks, panes, downs, swaps, points}
 */
export function jobChartModel(body, {width, height = 160}) {
  const left = 70;
  const plotWidth = Math.max(20, width - left - 10);
  const x = timeAxis(body.start, body.end, plotWidth);
  const format = body.unit === "ratio" && body.series === "utilization" ? FORMATS.percent
    : body.unit === "bytes/s" ? FORMATS.gbps : FORMATS.perSecond;
  const factor = body.unit === "bytes/s" ? 8e-9 : 1;
  const answers = (body.links ?? []).map((l) => ({t: body.t, start: body.start, end: body.end, values: l.values}));
  const g = paneGeometry(answers, {x, height, format, factor});
  const lines = g.lines.map((l, i) => {
    const link = body.links[i];
    const name = `${link.node ?? link.guid} port ${link.port}`;
    return {...l, series: `${link.node ?? link.guid}:${link.port}`, name, color: schemeTableau10[i % 10],
      text: i < 3 ? `${name}: ${link.value == null ? "–" : format(link.value * factor)}` : ""};
  });
  const title = `${body.series} of the ${lines.length} hottest of ${body.count} links`;
  const pane = {key: "job", title, y0: 16, height, ticks: g.ticks, empty: g.empty, lines};
  return {width, height: 16 + height + 8 + 22, left, plotWidth, xTicks: x.ticks(Math.max(2, Math.floor(plotWidth / 110))),
    panes: [pane], downs: [], swaps: [], points: lines.reduce((n, l) => n + l.points, 0)};
}

/**
 * The words of a job's run: "running since 2026-12-06 22:10 UTC", "ran 2026-12-06 20:00 – 21:30 UTC".
 * @param {object} body the job answer
 * @returns {string}
 */
export function runText(body) {
  const at = (s) => `${toUtcInput(s).replace("T", " ")}`;
  if (body.running) return body.first == null ? "running (first noted now)" : `running since ${at(body.first)} UTC`;
  return body.first == null ? "not running" : `ran ${at(body.first)} – ${at(body.last)} UTC`;
}

/**
 * Wire the job section of the History page.
 * @param {Element} root the page's main element
 * @param {object} options {client: tsdbClient, window: function returning the picked window {start, end},
 *   chart: function({node, port}) charting a link below, jobs: function returning a promise of the catalog's jobs,
 *   shown: function(job) told of each job asked}
 * @returns {{show: function(string, boolean): Promise<void>}}
 */
export function jobLinks(root, {client, window, chart, jobs, shown: told = () => {}}) {
  const section = select(root).select(".history-job");
  const form = section.select("#history-job");
  const note = section.select("#history-job-note");
  const svg = section.select("#history-job-chart");
  const table = section.select("#history-job-links");
  let generation = 0;
  let shown = null;

  form.select("input[name=job]").on("focus", function listJobs() {
    select(this).on("focus", null);
    jobs().then((list) => section.select("#history-jobs").selectAll("option").data(list).join("option")
      .attr("value", (j) => j.id).text((j) => `${j.id}${j.tenant ? ` (${j.tenant})` : ""}`), () => null);
  });
  form.on("submit", (event) => {
    event.preventDefault();
    const job = form.select("input[name=job]").property("value").trim();
    if (job) show(job, form.select("input[name=run]").property("checked"));
  });

  function width() {
    return Math.max(300, section.node().clientWidth || 900);
  }

  async function show(job, overRun = true) {
    const mine = ++generation;
    told(job);
    form.select("input[name=job]").property("value", job);
    form.select("input[name=run]").property("checked", overRun);
    section.attr("data-state", "loading");
    note.text(`Loading job ${job}…`);
    const params = {points: pointsFor(width() - 80), n: JOB_LINKS, ...(overRun ? {} : window())};
    let body;
    try {
      body = await client.jobLinks(job, params);
    } catch (e) {
      if (mine !== generation) return;
      shown = null;
      svg.selectAll("*").remove();
      table.property("hidden", true).select("tbody").selectAll("tr").remove();
      section.attr("data-state", "error");
      note.text(`Job ${job}: ${e.message}`);
      return;
    }
    if (mine !== generation) return;
    shown = body;
    draw();
    note.text(`Job ${body.job}${body.tenant ? ` of ${body.tenant}` : ""}: ${runText(body)}; ${body.count} link`
      + `${body.count === 1 ? "" : "s"} used, ${overRun ? "over its run" : "over the window above"}.`);
    table.property("hidden", false).select("tbody").selectAll("tr").data(body.links, (l) => `${l.node}:${l.port}`).join((enter) => enter.append("tr")
      .call((tr) => {
        tr.append("td").attr("class", "num");
        tr.append("td");
        tr.append("td");
        tr.append("td").attr("class", "num");
        tr.append("td").append("button").attr("type", "button").text("Chart")
          .on("click", (_, l) => chart({node: l.node ?? l.guid, port: l.port}));
      }))
      .attr("data-node", (l) => l.node).attr("data-port", (l) => l.port)
      .call((tr) => tr.select("td:nth-child(1)").text((_, i) => i + 1))
      .call((tr) => tr.select("td:nth-child(2)").text((l) => `${l.node ?? l.guid} port ${l.port}`))
      .call((tr) => tr.select("td:nth-child(3)").text((l) => (l.peer ? `${l.peer.node} port ${l.peer.port}` : "–")))
      .call((tr) => tr.select("td:nth-child(4)").text((l) => (l.value == null ? "–"
        : body.series === "utilization" ? FORMATS.percent(l.value) : FORMATS.perSecond(l.value))))
      .call((tr) => tr.select("button").attr("aria-label", (l) => `Chart ${l.node ?? l.guid} port ${l.port}`));
    section.attr("data-state", "drawn").attr("data-job", body.job).attr("data-links", body.links.length);
  }

  function draw() {
    if (!shown) return;
    drawPortChart(svg, jobChartModel(shown, {width: width()}), `Links of job ${shown.job}`);
  }

  return {show, draw};
}
