// Link health on the map and in the port panel, from the health API's report (issue 37): grade colours, each
// listed port's cable graded by the worse of its two ends, the hot modules and ports with downs marked, the
// legend's keys and the port panel's rows. Pure. The report lists only its worst ports (at most 50): cables it
// does not list are normal or not reported.

/** Grade colours: colourblind-safe, apart from the utilization scale (Cividis blue to yellow). */
export const GRADE_COLORS = {normal: "#3fb950", warning: "#f2d024", error: "#ff4f6d", unknown: "#8a93a0"};
/** Colours of the port marks: a hot module (warning or alarm) and a port with downs. */
export const MARK_COLORS = {hot: "#ff7a1a", down: "#e5534b"};

const RANK = {unknown: -1, normal: 0, warning: 1, error: 2};

/**
 * Colour of a grade ("normal", "warning", "error", "unknown"; anything else is unknown).
 * @param {string} grade
 * @returns {string} CSS colour
 */
export function gradeColor(grade) {
  return GRADE_COLORS[grade] ?? GRADE_COLORS.unknown;
}

/**
 * The worse of two grades (error > warning > normal > unknown), as the report ranks a port's grades.
 * @param {string|null} p
 * @param {string|null} q
 * @returns {string}
 */
export function worseGrade(p, q) {
  const rp = RANK[p] ?? -1;
  const rq = RANK[q] ?? -1;
  return rp >= rq ? (p in RANK ? p : "unknown") : q;
}

/** Whether a report entry's module runs hot (its temperature at or above its warning threshold, or a module
 * warning or alarm). */
export function isHot(entry) {
  const m = entry?.module;
  if (!m?.present) return false;
  const over = m.temperature_c != null && m.temperature_warning_c != null && m.temperature_c >= m.temperature_warning_c;
  return over || m.status === "warning" || m.status === "alarm";
}

/** Whether a report entry's port is down now or went down in the last 24 h. */
export function hasDowns(entry) {
  return entry?.up === false || Boolean(entry?.downs && (entry.downs.down || entry.downs.downs_24h > 0));
}

const portIndex = new WeakMap(); // fabric -> Map("node:port" -> cable)

function portCables(fabric) {
  let index = portIndex.get(fabric);
  if (index) return index;
  index = new Map();
  const {a, b, aPort, bPort} = fabric.links;
  for (let c = 0; c < fabric.L; ++c) {
    index.set(`${a[c]}:${aPort[c]}`, c);
    index.set(`${b[c]}:${bPort[c]}`, c);
  }
  portIndex.set(fabric, index);
  return index;
}

/** Node index of a report's port end in `fabric`: its GUID where shown, else its index if the name agrees. */
function nodeOf(end, fabric) {
  const {guid, name} = fabric.nodes;
  if (end?.guid && end.guid !== "hidden") {
    const i = guid.indexOf(end.guid);
    if (i >= 0) return i;
  }
  const i = end?.node_index ?? -1;
  return i >= 0 && i < fabric.n && (name[i] === end.node || end.guid === "hidden") ? i : -1;
}

/**
 * The cable of a report's port end in `fabric` (-1: none).
 * @param {object} end {node, node_index, guid, port}
 * @param {object} fabric decoded snapshot
 * @returns {number}
 */
export function cableOf(end, fabric) {
  const node = nodeOf(end, fabric);
  return node < 0 ? -1 : portCables(fabric).get(`${node}:${end.port}`) ?? -1;
}

/**
 * The report on the map: each listed port's cable graded by the worse of its listed ends, and the marks.
 * @param {object|null} report the health API's answer {summary, worst: [entry]}
 * @param {object|null} fabric decoded snapshot
 * @returns {{cables: Map<number, {grade: string, entries: object[]}>, groups: Map<string, number[]>,
 *   marks: {node: number, cable: number, kind: "hot"|"down", color: string}[], listed: number, flagged: number,
 *   truncated: boolean}}
 *   groups: colour -> cables, mildest first (drawn in that order); flagged: ports graded warning or error in all
 */
export function healthCables(report, fabric) {
  const cables = new Map();
  const marks = [];
  const worst = report?.worst ?? [];
  for (const entry of fabric ? worst : []) {
    const c = cableOf(entry, fabric);
    if (c < 0) continue;
    const seen = cables.get(c);
    const entries = [...(seen?.entries ?? []), entry];
    cables.set(c, {grade: worseGrade(seen?.grade ?? "unknown", entry.grade), entries});
    const node = nodeOf(entry, fabric);
    if (isHot(entry)) marks.push({node, cable: c, kind: "hot", color: MARK_COLORS.hot});
    if (hasDowns(entry)) marks.push({node, cable: c, kind: "down", color: MARK_COLORS.down});
  }
  const groups = new Map();
  for (const grade of ["unknown", "normal", "warning", "error"]) {
    const listed = [...cables].filter(([, v]) => v.grade === grade).map(([c]) => c);
    if (listed.length) groups.set(gradeColor(grade), listed);
  }
  const g = report?.summary?.grades;
  const flagged = g ? (g.warning ?? 0) + (g.error ?? 0) : worst.length;
  return {cables, groups, marks, listed: worst.length, flagged, truncated: flagged > worst.length};
}

/**
 * The legend of the health overlay: [{label, color, kind: "line"|"mark"|"note"}].
 * @param {object|null} shown healthCables' answer (null: no report)
 * @param {string} [problem] why there is no report ("no health report yet", ...)
 * @returns {{label: string, color: string|null, kind: string}[]}
 */
export function healthLegend(shown, problem = "") {
  if (!shown) return [{label: problem || "loading link health…", color: null, kind: "note"}];
  const count = (grade) => [...shown.cables.values()].filter((v) => v.grade === grade).length;
  const keys = ["error", "warning", "unknown"].map((grade) => ({label: `${grade} (${count(grade)})`,
    color: gradeColor(grade), kind: "line"}));
  keys.push({label: "module hot", color: MARK_COLORS.hot, kind: "mark"},
    {label: "downs in 24 h", color: MARK_COLORS.down, kind: "mark"});
  keys.push({label: "other cables: normal or not reported", color: null, kind: "note"});
  const n = shown.listed;
  keys.push({label: shown.truncated ? `worst ${n} shown of ${shown.flagged} ports graded warning or error`
    : `worst ${n} shown (every port graded warning or error)`, color: null, kind: "note"});
  return keys;
}

const sci = (v) => (v == null ? "–" : v === 0 ? "0" : v.toExponential(1));
const temp = (v) => (v == null ? "–" : `${Math.round(v * 10) / 10} °C`);
const span = (s) => (s == null ? "–" : s < 120 ? `${Math.round(s)} s`
  : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`);

/**
 * The port panel's health rows of one report entry: [[label, value, grade]] (grade: "normal", "warning", "error",
 * "unknown" or null where the value has none).
 * @param {object} entry an entry of the report's worst list
 * @param {(t: number) => string} [when] formats an episode's start (seconds since the epoch)
 * @returns {[string, string, string|null][]}
 */
export function healthRows(entry, when = (t) => new Date(t * 1000).toISOString().slice(11, 19)) {
  const why = entry.reasons?.length ? ` (${entry.reasons.join(", ")})` : "";
  const rows = [["grade", `${entry.grade}${why}`, entry.grade]];
  const ber = entry.ber;
  if (ber) {
    const window = ber.window_s == null ? "no window yet" : `over ${span(ber.window_s)}`;
    rows.push(["BER", `${ber.grade}, ${window}`, ber.grade],
      ["raw BER", sci(ber.raw), ber.raw_grade ?? null],
      ["effective BER", sci(ber.effective), ber.effective_grade ?? null],
      ["symbol BER", sci(ber.symbol), ber.symbol_grade ?? null]);
  }
  const m = entry.module;
  if (m?.present) {
    const limits = `warning ${temp(m.temperature_warning_c)}, alarm ${temp(m.temperature_alarm_c)}`;
    rows.push(["module", `${temp(m.temperature_c)} (${limits})`,
      m.status === "alarm" ? "error" : m.status === "warning" ? "warning" : "normal"]);
  } else rows.push(["module", "no module read", null]);
  const c = entry.cable;
  if (c) {
    const length = c.length_m == null ? "" : `, ${c.length_m} m`;
    rows.push(["cable", `${c.vendor || "–"} ${c.pn || "–"}, serial ${c.sn || "–"}${length}`, null]);
  }
  const d = entry.downs;
  if (d) {
    const counts = `${d.downs_24h} in 24 h, ${d.downs_7d} in 7 d; down ${span(d.downtime_24h_s)} in 24 h`;
    rows.push(["downs", `${d.down ? "down now; " : ""}${counts}${d.repeated ? ", repeated" : ""}`,
      d.down || d.critical_24h ? "error" : d.downs_24h ? "warning" : "normal"]);
    for (const e of d.episodes ?? []) {
      const length = e.open ? "still down" : span(e.duration_s);
      const more = `${e.downs > 1 ? `, ${e.downs} downs` : ""}${e.critical ? " (long enough to kill jobs)" : ""}`;
      const at = e.start == null ? "–" : when(e.start);
      rows.push(["down at", `${at}: ${length}${more}`, e.critical ? "error" : "warning"]);
    }
  } else if (entry.up === false) rows.push(["downs", "down now", "error"]);
  return rows;
}

/**
 * The report's entries of the two ends of a cable, each with its end's label: [{end, entry}] ([] if none listed).
 * @param {object|null} report
 * @param {object} fabric decoded snapshot
 * @param {number} cable
 * @returns {{end: string, entry: object}[]}
 */
export function cableEntries(report, fabric, cable) {
  return (report?.worst ?? []).filter((e) => cableOf(e, fabric) === cable)
    .map((entry) => ({end: `${entry.node} port ${entry.port}`, entry}));
}

/**
 * Why there is no report, from the API's error: 404 none yet, 403 not allowed.
 * @param {{status?: number, message?: string}} error
 * @returns {string}
 */
export function healthProblem(error) {
  if (error?.status === 404) return "no health report yet";
  if (error?.status === 403) return "link health: not allowed for this view";
  return `link health unavailable: ${error?.message ?? "error"}`;
}
