// The digital twin's frame section (telemetry-fed fabrics): decoding, map overlay colours, ranked rows. Pure.
import {fail} from "./feed-error.js";

/** Deviation codes of `twin.overlay.code` (docs/feed-protocol.md). */
export const CODE = {stale: -1, ok: 0, below: 1, unexplained: 2};
/** Plan status codes of `twin.plan.link_status`. */
export const PLAN = {ok: 0, miswired: 2, extra: 3, wrongSpeed: 4, wrongWidth: 5};

/** Overlay colours: colourblind-safe, apart from the utilization scale (Cividis blue to yellow). */
export const OVERLAY_COLORS = {
  below: "#4ea1ff", // far below what its jobs should drive
  unexplained: "#ff7a1a", // traffic no known job explains
  miswired: "#ff4f6d",
  extra: "#ff7a1a",
  wrong: "#f2d024", // wrong speed or width
};

function ints(values, n, where, low, high) {
  if (!Array.isArray(values) || values.length !== n) fail(`${where}: expected ${n} values`);
  const out = Int8Array.from(values);
  for (let i = 0; i < n; ++i) {
    if (!Number.isInteger(values[i]) || values[i] < low || values[i] > high) fail(`${where}[${i}]: invalid value ${JSON.stringify(values[i])}`);
  }
  return out;
}

function floats(values, n, where) {
  if (!Array.isArray(values) || values.length !== n) fail(`${where}: expected ${n} values`);
  const out = Float32Array.from(values);
  for (let i = 0; i < n; ++i) if (typeof values[i] !== "number" || !(out[i] === out[i])) fail(`${where}[${i}]: invalid value ${JSON.stringify(values[i])}`);
  return out;
}

/**
 * Check and decode a frame's `twin` section.
 * @param {object|null|undefined} section the frame's `twin`
 * @param {number} L cables of the fabric (the arrays have 2L values)
 * @returns {object|null} {expected, observed: Float32Array(2L), code: Int8Array(2L), deviations, alerts, jobs,
 *   plan: {summary, counts, linkStatus: Int8Array(2L)} | null}, or null when the fabric has no twin
 * @throws {FeedFormatError} naming the first field that does not follow the protocol
 */
export function decodeTwin(section, L) {
  if (section == null) return null;
  if (typeof section !== "object" || Array.isArray(section)) fail("frame.twin: expected an object");
  const o = section.overlay;
  if (!o || typeof o !== "object") fail("frame.twin.overlay: expected an object");
  const n = 2 * L;
  const out = {
    expected: floats(o.expected, n, "frame.twin.overlay.expected"),
    observed: floats(o.observed, n, "frame.twin.overlay.observed"),
    code: ints(o.code, n, "frame.twin.overlay.code", -1, 2),
    deviations: section.deviations ?? 0,
    alerts: section.alerts ?? 0,
    jobs: section.jobs ?? 0,
    plan: null,
  };
  for (const key of ["deviations", "alerts", "jobs"]) if (!Number.isInteger(out[key]) || out[key] < 0) fail(`frame.twin.${key}: expected a count`);
  const p = section.plan;
  if (p != null) {
    if (typeof p !== "object" || typeof p.summary !== "string" || !p.counts || typeof p.counts !== "object") fail("frame.twin.plan: expected {summary, counts, link_status}");
    out.plan = {summary: p.summary, counts: p.counts, linkStatus: ints(p.link_status, n, "frame.twin.plan.link_status", 0, 5)};
  }
  return out;
}

/**
 * The cables to draw over the map for an overlay mode, grouped by colour.
 * @param {object|null} twin decoded section (decodeTwin)
 * @param {number} L cables
 * @param {"expected"|"plan"|"off"} mode
 * @returns {Map<string, number[]>} colour -> cables (a cable takes the worse of its two directions)
 */
export function overlayCables(twin, L, mode) {
  const out = new Map();
  if (!twin || mode === "off" || (mode === "plan" && !twin.plan)) return out;
  const add = (color, c) => {
    let list = out.get(color);
    if (!list) out.set(color, (list = []));
    list.push(c);
  };
  for (let c = 0; c < L; ++c) {
    if (mode === "expected") {
      const codes = [twin.code[c], twin.code[c + L]];
      if (codes.includes(CODE.unexplained)) add(OVERLAY_COLORS.unexplained, c);
      else if (codes.includes(CODE.below)) add(OVERLAY_COLORS.below, c);
    } else {
      const s = Math.max(twin.plan.linkStatus[c], twin.plan.linkStatus[c + L]);
      if (s === PLAN.miswired) add(OVERLAY_COLORS.miswired, c);
      else if (s === PLAN.extra) add(OVERLAY_COLORS.extra, c);
      else if (s >= PLAN.wrongSpeed) add(OVERLAY_COLORS.wrong, c);
    }
  }
  return out;
}

const KIND_TEXT = {below: "below expected", above: "above expected", unexplained: "unexplained", down: "down",
  no_route: "no route"};

/**
 * Rows of the ranked deviation list from the expected API's answer.
 * @param {object} answer {deviations: [{kind, link, label, expected_gbps, observed_gbps, jobs}], alerts: [{key, deviation}]}
 * @returns {Array<object>} [{kind, text, link, label, expected, observed, jobs, alert}] in the API's order
 */
export function deviationRows(answer) {
  const alerted = new Set((answer?.alerts ?? []).map((a) => `${a.deviation}|${a.key}`));
  return (answer?.deviations ?? []).map((d) => ({
    kind: d.kind,
    text: KIND_TEXT[d.kind] ?? d.kind,
    link: Number.isInteger(d.link) ? d.link : -1,
    label: d.label ?? d.key,
    expected: d.expected_gbps ?? null,
    observed: d.observed_gbps ?? null,
    jobs: d.jobs ?? [],
    alert: alerted.has(`${d.kind}|${d.key}`),
  }));
}
