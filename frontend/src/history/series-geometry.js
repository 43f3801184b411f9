// Geometry of stored per-port series (issue 40), pure: an answer of the port series API (`{t, values, start, end}`,
// `points` bins of equal width, null where nothing was stored) as SVG path data on a UTC time axis, the stretches
// a link was down (a `link_up` series below 1), cable-swap marks, and a sparkline. Missing is never drawn as 0:
// the line breaks at a null bin.
import {line, scaleLinear, scaleLog, scaleUtc} from "d3";

/**
 * The time axis of a window: seconds since the epoch -> pixels.
 * @param {number} start s
 * @param {number} end s
 * @param {number} width px
 * @returns {function(number): number} with .ticks(n) -> [{x, text}]
 */
export function timeAxis(start, end, width) {
  const scale = scaleUtc().domain([new Date(start * 1000), new Date(end * 1000)]).range([0, width]);
  const x = (seconds) => scale(new Date(seconds * 1000));
  const text = scale.tickFormat();
  x.ticks = (n) => scale.ticks(n).map((d) => ({x: scale(d), text: text(d)}));
  return x;
}

/**
 * Bin centres of an answer, s.
 * @param {{t: number[], start: number, end: number}} body
 * @returns {number[]}
 */
export function binCenters(body) {
  const n = body?.t?.length ?? 0;
  const half = n ? (body.end - body.start) / n / 2 : 0;
  return (body?.t ?? []).map((t) => t + half);
}

const known = (v) => v != null && Number.isFinite(v);

/**
 * The value range of series over their non-null values.
 * @param {((number|null)[])[]} columns
 * @param {boolean} [positive] only values above 0 (a log scale)
 * @returns {[number, number]|null} null when nothing is known
 */
export function valueRange(columns, positive = false) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const column of columns) {
    for (const v of column) {
      if (!known(v) || (positive && v <= 0)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return hi >= lo ? [lo, hi] : null;
}

/** At most four powers of ten from `lo` to `hi`, evenly spaced, both ends included. */
function decades([lo, hi]) {
  const a = Math.round(Math.log10(lo));
  const b = Math.round(Math.log10(hi));
  const step = Math.max(1, Math.ceil((b - a) / 3));
  const out = [];
  for (let e = a; e < b; e += step) out.push(10 ** e);
  return [...out, 10 ** b];
}

/**
 * One pane of a chart: a line per answer on a shared y scale (from 0, or log10 for `log`), and its y ticks.
 * @param {object[]} bodies port series answers of one window, one per line (a missing answer: null)
 * @param {{x: function(number): number, height: number, log?: boolean, factor?: number,
 *   format?: function(number): string}} options factor: each value times it (bytes/s -> Gb/s)
 * @returns {{lines: {d: string, points: number, last: number|null, max: number|null}[], empty: boolean,
 *   ticks: {y: number, text: string}[], domain: [number, number]}}
 */
export function paneGeometry(bodies, {x, height, log = false, factor = 1, format = String}) {
  const columns = bodies.map((b) => (b?.values ?? []).map((v) => (known(v) ? v * factor : null)));
  const range = valueRange(columns, log);
  let y;
  if (log) {
    const lo = range ? 10 ** Math.floor(Math.log10(range[0])) : 1e-15;
    const hi = range ? Math.max(lo * 10, 10 ** Math.ceil(Math.log10(range[1]))) : 1e-3;
    y = scaleLog().domain([lo, hi]).range([height, 0]).clamp(true);
  } else {
    y = scaleLinear().domain([0, range && range[1] > 0 ? range[1] : 1]).range([height, 0]).nice(3);
  }
  const ticks = (log ? decades(y.domain()) : y.ticks(3)).map((v) => ({y: y(v), text: format(v)}));
  const lines = bodies.map((body, i) => {
    const column = columns[i];
    const centres = binCenters(body ?? {});
    // a log scale has no 0: a bin that measured 0 (no error at all) sits at the bottom of the pane
    const yOf = (v) => (log && v <= 0 ? height : y(v));
    const d = line().defined((v) => v != null).x((_, j) => x(centres[j])).y(yOf)(column) ?? "";
    const values = column.filter((v) => v != null);
    return {d, points: values.length, last: values.length ? values[values.length - 1] : null,
      max: values.length ? Math.max(...values) : null};
  });
  return {lines, empty: lines.every((l) => !l.points), ticks, domain: y.domain()};
}

/**
 * The stretches of a `link_up` answer (a `min` series: 0 in a bin the link was down at all) that were down,
 * adjacent bins merged.
 * @param {{t: number[], values: (number|null)[], start: number, end: number}|null} body
 * @returns {{t0: number, t1: number}[]} oldest first, s
 */
export function downStretches(body) {
  const n = body?.t?.length ?? 0;
  if (!n) return [];
  const w = (body.end - body.start) / n;
  const out = [];
  body.values.forEach((v, i) => {
    if (!(known(v) && v < 1)) return;
    const t0 = body.t[i];
    const last = out[out.length - 1];
    if (last && Math.abs(last.t1 - t0) < w * 1e-6) last.t1 = t0 + w;
    else out.push({t0, t1: t0 + w});
  });
  return out;
}

/**
 * The cable swaps a port series answer lists within its window (`swaps`, or `recabled` as the live history
 * names them): `{t, from, to}` with from/to a module serial or a far end {node, port}.
 * @param {object|null} body
 * @returns {{t: number, text: string}[]} oldest first
 */
export function swapMarks(body) {
  const name = (end) => (end == null ? "nothing" : typeof end === "object"
    ? `${end.node ?? end.guid ?? "?"}${end.port != null ? ` port ${end.port}` : ""}${end.sn ? ` (SN ${end.sn})` : ""}`
    : String(end));
  const list = body?.swaps ?? body?.cable_swaps ?? body?.recabled ?? [];
  const start = body?.start ?? -Infinity;
  const end = body?.end ?? Infinity;
  return list.filter((s) => known(s?.t) && s.t >= start && s.t <= end)
    .map((s) => ({t: s.t, text: `cable swapped: ${name(s.from)} → ${name(s.to)}`}))
    .sort((a, b) => a.t - b.t);
}

/**
 * A sparkline of one answer: its path (gaps where null; log10 for `log`, where 0 sits at the bottom), the down
 * stretches of a `link_up` answer as x spans, and a read-out.
 * @param {object|null} body the series
 * @param {{width?: number, height?: number, log?: boolean, up?: object|null, format?: function(number): string}} [options]
 * @returns {{d: string, points: number, downs: {x: number, width: number}[], label: string}}
 */
export function seriesSpark(body, {width = 120, height = 24, log = false, up = null, format = String} = {}) {
  const start = body?.start ?? up?.start ?? 0;
  const end = body?.end ?? up?.end ?? 1;
  const x = timeAxis(start, end, width);
  const pane = paneGeometry([body], {x, height, log, format});
  const downs = downStretches(up).map((s) => ({x: x(s.t0), width: Math.max(1, x(s.t1) - x(s.t0))}));
  const l = pane.lines[0];
  const down = downs.length ? `, down in ${downs.length} stretch${downs.length > 1 ? "es" : ""}` : "";
  const label = l.points ? `${l.points} bins, highest ${format(l.max)}, last ${format(l.last)}${down}`
    : `nothing stored in the window${down}`;
  return {d: l.d, points: l.points, downs, label};
}
