// The Validation section of the Health pages (issue 38): the fabric's (or the cluster's planes') validation report
// from its API, drawn into the section's server-rendered frame: KPI tiles, the checks, the findings worst first with
// their evidence and a link to the map, the isolation advice with what cutting each port does to the running jobs
// (and, for who may start analyses, a button that runs the cable what-if) and a badge saying what to do ("replace"
// for a port failing again after an isolation), the ports isolated now, the daily digest. "Problems only" asks
// the API again with ?problems=1. Polled every minute while the tab is visible (the report is computed again on its
// own, slower interval). Text comes from validation-rows.js.
import {select} from "d3";
import {csrfToken} from "../api.js";
import {adviceAction, adviceCells, adviceSummary, checkRows, digestText, findingRow, isolatedCells, isolatedSummary, kpiTiles}
  from "../validation-rows.js";
import {pollPage} from "./poll.js";

/** Findings drawn at most (the CSV has them all). */
export const MOST_ROWS = 500;

/**
 * The API address with or without ?problems=1.
 * @param {string} base the section's data-api
 * @param {boolean} problems
 * @returns {string}
 */
export function withProblems(base, problems) {
  const url = new URL(base, "http://x");
  if (problems) url.searchParams.set("problems", "1");
  else url.searchParams.delete("problems");
  return url.pathname + url.search;
}

function rows(tbody, items, key, cells, decorate) {
  select(tbody).selectAll("tr").data(items, key).join("tr").each(function (d) {
    const tr = select(this);
    tr.selectAll("td").data(cells(d)).join("td").text((t) => t);
    if (decorate) decorate(tr, d);
  });
}

function link(td, href, text) {
  td.selectAll("a").data(href ? [href] : []).join("a").attr("href", (h) => h).text(text);
}

function drawKpis(root, kpis) {
  select(root.querySelector(".validation-kpis")).selectAll("div.validation-kpi").data(kpiTiles(kpis), (k) => k.key)
    .join((enter) => {
      const div = enter.append("div").attr("class", "validation-kpi");
      div.append("span").attr("class", "validation-kpi-label");
      div.append("strong").attr("class", "validation-kpi-value");
      div.append("small").attr("class", "validation-kpi-detail");
      return div;
    })
    .attr("data-kpi", (k) => k.key).attr("data-grade", (k) => k.grade)
    .call((div) => div.select(".validation-kpi-label").text((k) => k.label))
    .call((div) => div.select(".validation-kpi-value").text((k) => k.value))
    .call((div) => div.select(".validation-kpi-detail").text((k) => k.detail));
}

function drawFindings(root, findings, cluster) {
  const shown = findings.slice(0, MOST_ROWS);
  rows(root.querySelector(".validation-findings tbody"), shown, (f) => `${f.plane ?? ""}|${f.check}|${f.subject}`,
    (f) => {
      const r = findingRow(f);
      return cluster ? [r.cells[0], f.plane_name ?? f.plane, ...r.cells.slice(1), ""] : [...r.cells, ""];
    },
    (tr, f) => {
      tr.attr("data-severity", f.severity).attr("data-check", f.check);
      const last = select(tr.node().lastElementChild);
      link(last, f.map_url, "map");
    });
  const empty = root.querySelector(".validation-findings-none");
  if (empty) empty.hidden = findings.length > 0;
  const more = root.querySelector(".validation-findings-more");
  if (more) more.textContent = findings.length > MOST_ROWS ? `The first ${MOST_ROWS} of ${findings.length} findings; the CSV has them all.` : "";
}

function askWhatif(root, request, button) {
  const url = root.dataset.analyses;
  button.disabled = true;
  button.textContent = "what-if queued…";
  return fetch(url, {method: "POST", credentials: "same-origin", body: JSON.stringify(request),
    headers: {"Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken(document.cookie)}})
    .then((response) => {
      button.textContent = response.ok ? "what-if started" : `what-if refused (HTTP ${response.status})`;
      return response.ok;
    }, (error) => {
      button.textContent = `what-if not started: ${error.message}`;
      return false;
    });
}

function drawAdvice(root, iso, refresh) {
  const summary = root.querySelector(".validation-advice-summary");
  if (!summary) return;
  summary.textContent = adviceSummary(iso);
  const advised = iso?.advised ?? [];
  const canAsk = Boolean(root.dataset.analyses);
  rows(root.querySelector(".validation-advice tbody"), advised, (a) => `${a.node}|${a.port}`, (a) => [...adviceCells(a), ""],
    (tr, a) => {
      const act = adviceAction(a);
      tr.attr("data-node", a.node).attr("data-port", a.port).attr("data-failing-again", a.failing_again ? "1" : null)
        .attr("data-action", act.action);
      tr.selectAll("td").filter((_, i) => i === 6 || i === 7).classed("command", true);
      select(tr.node().children[2]).text(null).selectAll("span").data([act]).join("span")
        .attr("class", "badge validation-action").attr("data-severity", (d) => d.severity)
        .attr("data-action", (d) => d.action).attr("title", (d) => d.title).text((d) => d.label);
      const last = select(tr.node().lastElementChild);
      link(last, a.map_url, "map");
      const ask = canAsk && (!a.whatif || a.whatif.status === "failed") ? [a.whatif_request] : [];
      last.selectAll("button").data(ask).join("button").attr("type", "button").text("run what-if")
        .on("click", function (_, request) {
          askWhatif(root, request, this).then((ok) => ok && setTimeout(refresh, 3000));
        });
    });
  const all = root.querySelector(".validation-advice-all");
  if (all) {
    const request = iso?.whatif_all_request;
    const ask = canAsk && request && (!iso.whatif_all || iso.whatif_all.status === "failed") ? [request] : [];
    select(all).selectAll("button").data(ask).join("button").attr("type", "button")
      .text(`run the what-if of all ${advised.length} advised ports`)
      .on("click", function (_, r) {
        askWhatif(root, r, this).then((ok) => ok && setTimeout(refresh, 3000));
      });
  }
}

function drawIsolated(root, isolated) {
  const summary = root.querySelector(".validation-isolated-summary");
  if (!summary) return;
  summary.textContent = isolatedSummary(isolated);
  const list = isolated ?? [];
  const table = root.querySelector(".validation-isolated");
  if (table) table.hidden = list.length === 0;
  rows(root.querySelector(".validation-isolated tbody"), list, (r) => `${r.node}|${r.port}`, (r) => [...isolatedCells(r), ""],
    (tr, r) => {
      tr.attr("data-node", r.node).attr("data-port", r.port);
      link(select(tr.node().lastElementChild), r.map_url, "map");
    });
}

function drawPlanes(root, planes) {
  const body = root.querySelector(".validation-planes tbody");
  if (!body) return;
  rows(body, planes, (p) => p.slug, (p) => {
    const k = kpiTiles(p.kpis);
    const c = p.counts;
    return ["", ...(p.kpis ? k.map((t) => t.value) : ["–", "–", "–"]), // the name: a link, added below
      c ? String(c.error) : "–", c ? String(c.warning) : "–", p.problem ?? ""];
  }, (tr, p) => {
    tr.attr("data-plane", p.slug);
    link(select(tr.node().firstElementChild), p.health_url, p.name);
  });
}

/**
 * Draw one API answer into the section (also what the tests call).
 * @param {Element} root the section
 * @param {object} data the fabric's or the cluster's validation answer
 * @param {function} [refresh] asks the API again (after a what-if was started)
 */
export function drawValidation(root, data, refresh = () => {}) {
  const cluster = Array.isArray(data.planes);
  const report = cluster ? data : data.report;
  drawKpis(root, report.kpis);
  if (!cluster) {
    rows(root.querySelector(".validation-checks tbody"), checkRows(report.checks), (r) => r[0], (r) => r.slice(0, 2),
      (tr, r) => tr.attr("data-status", r[2]));
    drawAdvice(root, data.isolation, refresh);
    drawIsolated(root, data.isolated);
    const digest = root.querySelector(".validation-digest");
    if (digest) digest.textContent = digestText(data.digest);
  } else drawPlanes(root, data.planes);
  drawFindings(root, report.findings ?? [], cluster);
  const c = report.counts ?? {};
  const when = (data.t ? ` computed ${new Date(data.t * 1000).toISOString().slice(11, 19)} UTC,` : "") +
    (data.stale ? ` due again (${Math.round((data.age_s ?? 0) / 60)} min old),` : "");
  root.querySelector(".validation-status").textContent = `${c.error ?? 0} errors, ${c.warning ?? 0} warnings, ` +
    `${c.info ?? 0} notes;${when} ${cluster ? `${data.planes.length} planes` : `computed again every ${Math.round((data.interval_s ?? 300) / 60)} min`}.`;
  root.dataset.severities = JSON.stringify(c);
}

/**
 * Wire the section: `validationPage(document.querySelector("[data-page=validation]"))`.
 * @param {Element} root
 * @param {object} [options] {every: ms, fetch}
 * @returns {{refresh: function(): Promise<boolean>, stop: function()}}
 */
export function validationPage(root, options = {}) {
  const base = root.dataset.api;
  const problems = root.querySelector(".validation-problems");
  const csv = root.querySelector(".validation-csv");
  const setAddress = () => {
    const only = Boolean(problems?.checked);
    root.dataset.api = withProblems(base, only);
    if (csv) csv.setAttribute("href", withProblems(csv.dataset.base ?? csv.getAttribute("href"), only));
  };
  if (csv) csv.dataset.base = csv.getAttribute("href");
  setAddress();
  let poller = null;
  const refresh = () => poller?.refresh();
  poller = pollPage(root, (data) => drawValidation(root, data, refresh), {every: 60000, what: "validation section", ...options});
  problems?.addEventListener("change", () => {
    setAddress();
    poller.refresh();
  });
  return poller;
}
