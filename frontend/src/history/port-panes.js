// What a port's history chart shows (issue 40), pure: its panes (rates both ways, utilization, XmitWait, an
// error counter's rate and the effective BER, each of these two where any was stored) stacked on one time axis, the down stretches
// shaded across them and the cable swaps marked; the error counters the store keeps; numbers as text.
import {format} from "d3";
import {formatRate} from "../format.js";
import {downStretches, paneGeometry, swapMarks, timeAxis} from "./series-geometry.js";

const si = format(".3~s");

/** Text of a value by the pane's format. */
export const FORMATS = {
  gbps: (v) => formatRate(v),
  percent: (v) => `${Math.round(v * 100)}%`,
  perSecond: (v) => `${si(v)}/s`,
  ber: (v) => (v === 0 ? "0" : v.toExponential(0)),
  celsius: (v) => `${format(".1f")(v)} °C`,
};

/** The panes, top to bottom: series asked (the errors pane's is chosen), their names, colours, scale, format. */
export const PANES = [
  {key: "rate", title: "Rate", series: ["tx_bytes_per_s", "rx_bytes_per_s"], names: ["out", "in"],
    colors: ["#7cb7ff", "#ffb86b"], factor: 8e-9, format: "gbps"},
  {key: "utilization", title: "Utilization (out)", series: ["utilization"], names: ["out"], colors: ["#7cb7ff"],
    format: "percent"},
  {key: "xmit_wait", title: "XmitWait", series: ["xmit_wait_per_s"], names: ["ticks/s"], colors: ["#b48cff"],
    format: "perSecond"},
  {key: "errors", title: "Errors", series: [], names: ["errors/s"], colors: ["#ff6b6b"], format: "perSecond",
    error: true, optional: true},
  {key: "ber", title: "Effective BER", series: ["effective_ber"], names: ["effective"], colors: ["#e5b53b"],
    format: "ber", log: true, optional: true},
];
/** A total of the error counters by its name: a word of its own ("errors_total_per_s"; not "LocalLink..."). */
const TOTAL = /(^|_)(total|all|sum)(_|$)/i;
/** The series whose down bins are shaded across the panes. */
export const UP_SERIES = "link_up";

/**
 * An error series' words: "error_SymbolErrorCounter_per_s" -> "SymbolErrorCounter".
 * @param {string} name
 * @returns {string}
 */
export function errorLabel(name) {
  return String(name).replace(/^errors?_/, "").replace(/_per_s$/, "").replace(/_/g, " ");
}

/**
 * The catalog's error-rate series, any total of them first, then by name.
 * @param {{name: string}[]} catalog the page's series catalog
 * @returns {{name: string, label: string}[]}
 */
export function errorSeries(catalog) {
  const total = (n) => (TOTAL.test(n) ? 0 : 1);
  return (catalog ?? []).map((s) => s.name).filter((n) => /^errors?_/.test(n))
    .sort((a, b) => total(a) - total(b) || a.localeCompare(b)).map((name) => ({name, label: errorLabel(name)}));
}

/**
 * The error series shown when the address names none: a total of them, else the symbol errors, else the first.
 * @param {{name: string}[]} catalog
 * @returns {string|null}
 */
export function defaultErrorSeries(catalog) {
  const all = errorSeries(catalog).map((s) => s.name);
  return all.find((n) => TOTAL.test(n)) ?? all.find((n) => /SymbolError/.test(n)) ?? all[0] ?? null;
}

/**
 * The panes of a chart for the catalog: a series the store does not keep is left out (a pane without any,
 * too); the errors pane shows `error`.
 * @param {{name: string}[]} catalog
 * @param {string|null} error the error series
 * @returns {object[]} PANES entries with their series resolved
 */
export function chartPanes(catalog, error) {
  const kept = new Set((catalog ?? []).map((s) => s.name));
  return PANES.map((p) => {
    const series = (p.error ? [error] : p.series).filter((n) => n && kept.has(n));
    const title = p.error && series.length ? `Errors: ${errorLabel(series[0])}` : p.title;
    return {...p, title, series, names: p.names.slice(0, series.length)};
  }).filter((p) => p.series.length);
}

/**
 * Every series a chart of `panes` asks for, the down state last.
 * @param {object[]} panes from chartPanes
 * @param {{name: string}[]} catalog
 * @returns {string[]}
 */
export function chartSeries(panes, catalog) {
  const up = (catalog ?? []).some((s) => s.name === UP_SERIES) ? [UP_SERIES] : [];
  return [...new Set([...panes.flatMap((p) => p.series), ...up])];
}

/**
 * The geometry of a port's chart: stacked panes on one time axis.
 * @param {Object<string, object|null>} bodies port series answers by series name (null: not answered)
 * @param {object[]} panes from chartPanes
 * @param {{start: number, end: number, width: number, paneHeight?: number}} size the window (s) and px
 * @returns {{width: number, height: number, left: number, plotWidth: number, xTicks: {x: number, text: string}[],
 *   panes: object[], downs: {x: number, width: number, t0: number, t1: number}[],
 *   swaps: {x: number, t: number, text: string}[], points: number}}
 */
export function chartModel(bodies, panes, {start, end, width, paneHeight = 56}) {
  const left = 70;
  const title = 16;
  const plotWidth = Math.max(20, width - left - 10);
  const x = timeAxis(start, end, plotWidth);
  let y0 = 0;
  const out = [];
  for (const p of panes) {
    const answers = p.series.map((n) => bodies[n] ?? null);
    const g = paneGeometry(answers, {x, height: paneHeight, log: p.log, factor: p.factor ?? 1, format: FORMATS[p.format]});
    if (p.optional && g.empty) continue; // the BER or errors where none was stored (an emulated fabric's errors)
    out.push({key: p.key, title: p.title, y0: y0 + title, height: paneHeight, ticks: g.ticks, empty: g.empty,
      lines: g.lines.map((l, i) => ({...l, series: p.series[i], name: p.names[i], color: p.colors[i],
        text: l.last == null ? `${p.names[i]}: –` : `${p.names[i]}: last ${FORMATS[p.format](l.last)}, `
          + `highest ${FORMATS[p.format](l.max)}`}))});
    y0 += title + paneHeight + 8;
  }
  const inside = (t) => t >= start && t <= end;
  const downs = downStretches(bodies[UP_SERIES] ?? null).map((s) => ({...s, x: x(s.t0),
    width: Math.max(1, x(Math.min(s.t1, end)) - x(s.t0))}));
  const seen = new Set();
  const swaps = Object.values(bodies).flatMap((b) => swapMarks(b)).filter((s) => inside(s.t)
    && !seen.has(`${s.t}`) && seen.add(`${s.t}`)).map((s) => ({...s, x: x(s.t)}));
  const points = out.reduce((n, p) => n + p.lines.reduce((m, l) => m + l.points, 0), 0);
  return {width, height: y0 + 22, left, plotWidth, xTicks: x.ticks(Math.max(2, Math.floor(plotWidth / 110))),
    panes: out, downs, swaps, points};
}
