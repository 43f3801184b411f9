// One port's raw BER per lane and its trend in the port panel (issue 37), from the health port API
// (`GET .../health/ports/<node>/<port>/`: {tracked, t, raw, grade, lanes}): the sparkline's geometry on a log10
// scale, each grading's dot coloured by its grade, and the lanes' line. Pure.
import {gradeColor} from "./health-rows.js";

const sci = (v) => (v == null ? "–" : v === 0 ? "0" : v.toExponential(1));

/**
 * The sparkline of a port's trend: a path through its gradings' raw BER (log10; gaps where not read), a dot per
 * grading coloured by its grade, the y range in decades and a one-line read-out.
 * @param {{t: number[], raw: (number|null)[], grade: (string|null)[]}} body the port API's answer
 * @param {{width?: number, height?: number}} [size] in pixels
 * @returns {{d: string, dots: {x: number, y: number, grade: string, color: string, title: string}[],
 *   low: number, high: number, label: string}} low/high: the decades at the bottom and the top
 */
export function sparkline(body, {width = 120, height = 24} = {}) {
  const t = body?.t ?? [];
  const raw = body?.raw ?? [];
  const logs = raw.map((v) => (v == null ? null : v > 0 ? Math.log10(v) : -18)); // 0: below any graded BER
  const known = logs.filter((v) => v != null);
  if (!known.length) return {d: "", dots: [], low: 0, high: 0, label: "no graded BER kept"};
  const low = Math.floor(Math.min(...known));
  const high = Math.max(low + 1, Math.ceil(Math.max(...known)));
  const n = t.length;
  const x = (i) => (n > 1 ? (i / (n - 1)) * width : width / 2);
  const y = (v) => height - ((v - low) / (high - low)) * height;
  let d = "";
  let pen = false;
  const dots = [];
  logs.forEach((v, i) => {
    if (v == null) return void (pen = false);
    d += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    pen = true;
    const grade = body.grade?.[i] ?? "unknown";
    dots.push({x: x(i), y: y(v), grade, color: gradeColor(grade), title: `${sci(raw[i])} (${grade})`});
  });
  const last = known.length ? raw[raw.length - 1] : null;
  const span = n > 1 ? Math.round(t[n - 1] - t[0]) : 0;
  const label = `raw BER over the last ${n} grading${n > 1 ? "s" : ""}${span ? ` (${span} s)` : ""}: `
    + `${sci(raw.find((v) => v != null))} → ${sci(last)}, 1e${low}..1e${high}`;
  return {d, dots, low, high, label};
}

/**
 * The port panel's rows of a port's lanes and trend: [label, value, null] (no grade of their own), as
 * health-rows.js's healthRows gives its rows.
 * @param {object|null} body the port API's answer (null: not answered)
 * @returns {[string, string, null][]}
 */
export function trendRows(body) {
  if (!body) return [];
  const lanes = body.lanes ?? [];
  const read = lanes.map((v, i) => [i, v]).filter(([, v]) => v != null);
  const rows = [["raw BER per lane", read.length ? read.map(([i, v]) => `${i}: ${sci(v)}`).join(", ")
    : body.tracked ? "no lane read (the tool reports the port's raw BER only)" : "not kept for ports graded normal",
  null]];
  if (!body.tracked) rows.push(["BER trend", "none kept: graded normal at every recent grading", null]);
  return rows;
}
