// Analyses of the fabric (eBB, what-if): the pure helpers the panel draws with (requests: api().analyses()).

const pct = (x) => `${(100 * x).toFixed(1)}%`;

const RANK = {queued: 0, running: 1, done: 2, failed: 2};

/**
 * Put an analysis into the list (newest first) unless the list already knows a later state of it
 * (answers and feed messages may arrive in any order). Returns a new array.
 * @param {object[]} rows
 * @param {object} a an analysis as the API gives it, or a partial one from a progress message
 * @returns {object[]}
 */
export function mergeAnalysis(rows, a) {
  const known = rows.find((r) => r.id === a.id);
  if (!known) return [a, ...rows].sort((x, y) => y.id - x.id);
  const [was, is] = [RANK[known.status] ?? 0, RANK[a.status] ?? 0];
  if (is < was || (is === was && is === 1 && (a.progress ?? 0) < (known.progress ?? 0))) return rows;
  // a final answer from the API (with its result) wins over a final feed message (without it)
  if (is === was && is === 2 && known.result && !a.result) return rows;
  return rows.map((r) => (r.id === a.id ? {...known, ...a} : r));
}

/**
 * Fold a `progress` feed message into the analyses known (newest first); the result is a new array.
 * An analysis not known yet (started by someone else) gets a row of its own.
 * @param {object[]} rows analyses as the API gives them
 * @param {{task: string, id: number, kind: string, fraction: number, status: string, message: string}} msg
 * @returns {object[]}
 */
export function mergeProgress(rows, msg) {
  if (msg.task !== "analysis") return rows;
  const known = rows.find((r) => r.id === msg.id);
  const row = {...(known ?? {id: msg.id, kind: msg.kind, params: {}, result: null, error: ""}),
    status: msg.status, progress: msg.fraction, message: msg.message};
  if (msg.status === "failed") row.error = row.error || msg.message;
  return mergeAnalysis(rows, row);
}

/**
 * What an analysis found, as a few short lines (its result when done, its error when failed).
 * @param {object} a an analysis (API) or a row from mergeProgress
 * @returns {string[]}
 */
export function describe(a) {
  if (a.status === "failed") return [a.error || a.message || "failed"];
  if (a.status !== "done" || !a.result) return a.message ? [a.message] : [];
  const r = a.result;
  if (a.kind === "ebb") {
    return [`eBB ${pct(r.ebb)} (${r.engine}, ${r.patterns} ${r.pattern} patterns)`,
      `range ${pct(r.min)}–${pct(r.max)}, 90% within ${pct(r.p5)}–${pct(r.p95)}`];
  }
  if (a.kind === "whatif_roce") return describeRoce(r);
  if (a.kind === "whatif_congestion") return describeCongestion(r);
  const s = r.summary;
  const lines = [`${r.baseline.engine} → ${r.alternative.engine}` +
    (r.failed?.length ? ` without ${r.failed.map((f) => `${f.a}–${f.b}`).join(", ")}` : "")];
  if (s.ebb_delta != null) lines.push(`eBB ${pct(r.baseline.ebb)} → ${pct(r.alternative.ebb)}`);
  if (s.jobs) {
    lines.push(`${s.jobs_slower} of ${s.jobs} jobs slower, ${s.jobs_faster} faster` +
      (s.jobs_broken ? `, ${s.jobs_broken} without a route` : "") +
      (s.worst_job ? `; worst ${s.worst_job.id} ×${s.worst_job.comm_ratio.toFixed(2)}` : ""));
  }
  return lines;
}

/**
 * A RoCEv2-vs-InfiniBand comparison in a few lines: per side the link imbalance and collisions, then the jobs'
 * collective times against InfiniBand's LFTs (the slowest job first).
 * @param {{params: object, sides: object[], summary: {id: string, vs_lft: number[]}[]}} r
 * @returns {string[]}
 */
export function describeRoce(r) {
  const p = r.params ?? {};
  const lines = [`${p.jobs} jobs, ${p.qps} QP/connection, ${p.same_seed ? "one hash seed (polarized)" : "a hash seed per switch"}`];
  for (const s of r.sides ?? []) {
    lines.push(`${s.label}: imbalance ${Number(s.imbalance).toFixed(2)}` +
      (s.collisions == null ? "" : `, ${s.collisions} collisions (max ${s.max_flows_on_link} on a link)`));
  }
  const jobs = (r.summary ?? []).filter((j) => j.vs_lft?.[2] != null)
    .sort((x, y) => y.vs_lft[2] - x.vs_lft[2]);
  if (jobs.length) {
    const w = jobs[0];
    lines.push(`slowest under ECMP: ${w.id} ×${w.vs_lft[2].toFixed(2)} the LFTs' time (adaptive ×${(w.vs_lft[1] ?? 1).toFixed(2)})`);
  }
  return lines;
}

const times = (x) => (x == null ? "n/a" : `×${Number(x).toFixed(2)}`);

/**
 * A congestion what-if (ideal congestion control, credit flow control, VL separation, IB congestion control) in a
 * few lines: what was assumed, then per side the worst job against max-min and what is left of the congestion trees.
 * @param {{params: object, congestion_control: object, sides: object[]}} r
 * @returns {string[]}
 */
export function describeCongestion(r) {
  const p = r.params ?? {};
  const cc = r.congestion_control ?? {};
  const lines = [`${p.jobs} jobs, ${p.qos ? "the QoS lanes" : "one lane"} as configured; VL separation over ${p.vls} lanes; ` +
    `congestion control: ${cc.source ?? "default"} settings`];
  for (const s of r.sides ?? []) {
    if (s.key === "maxmin") continue;
    let line = `${s.label}: worst job ${times(s.worst_slowdown)} of ideal, ${s.roots} congestion roots, ${s.held} held links`;
    if (s.converged === false) line += ` (not converged after ${s.iterations} iterations)`;
    if (s.key === "congestion_control") {
      const h = s.held_by ?? {};
      line += `; ${Math.round(s.fecn_marks_per_s ?? 0)} FECN/s, ${Math.round(s.becn_per_s ?? 0)} BECN/s, ` +
        `${s.throttled_flows} flows throttled (${h.fair ?? 0} at their fair share, ${h.marking ?? 0} by sparse marking, ` +
        `${h.table ?? 0} by the table)`;
    }
    lines.push(line);
  }
  return lines;
}

/**
 * The jobs x sides table of a congestion what-if: per job and side the collective time, its slowdown against
 * max-min and the link that limits it.
 * @param {{sides: {key: string, label: string, jobs: {id: string, comm_s: ?number, slowdown: ?number,
 *   limiting_link: ?{link: number, label?: string}}[]}[]}} r
 * @returns {{head: string[], rows: {id: string, cells: {text: string, title: string}[]}[]}}
 */
export function congestionTable(r) {
  const sides = r.sides ?? [];
  const head = ["job", ...sides.map((s) => s.label)];
  const ids = (sides[0]?.jobs ?? []).map((j) => j.id);
  const rows = ids.map((id, k) => ({id, cells: sides.map((s) => {
    const j = s.jobs?.[k] ?? {};
    const secs = j.comm_s == null ? "never" : `${Number(j.comm_s).toPrecision(3)} s`;
    const link = j.limiting_link ? (j.limiting_link.label ?? `link ${j.limiting_link.link}`) : "";
    return {text: s.key === "maxmin" || j.comm_s == null ? secs : `${secs} ${times(j.slowdown)}`,
      title: link ? `limited by ${link}` : ""};
  })}));
  return {head, rows};
}
