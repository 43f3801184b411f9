// Events between frames: what changed that an operator wants to read about. Pure.

/**
 * Events of the new frame compared with the previous one: jobs that start or stop, jobs whose phase changes
 * to "waiting"/"stopped", congestion that appears or clears, and alerts not in the previous frame.
 * @param {object|null} prev previous frame ({jobs, alerts, totals}) or null
 * @param {object} next this frame
 * @returns {{level: string, text: string}[]} level "info", "warning" or "error"
 */
export function frameEvents(prev, next) {
  const out = [];
  if (!prev) return out;
  const before = new Map((prev.jobs ?? []).map((j) => [j.id, j]));
  for (const job of next.jobs ?? []) {
    const was = before.get(job.id);
    if (!was) out.push({level: "info", text: `job ${job.id} (${job.tenant}) appeared`});
    else if (was.phase && job.phase && was.phase !== job.phase && (job.phase === "stopped" || was.phase === "waiting")) {
      out.push({level: "info", text: `job ${job.id}: ${was.phase} → ${job.phase}`});
    }
    if (was && Number.isFinite(job.slowdown) && job.slowdown >= 2 && !(was.slowdown >= 2)) {
      out.push({level: "warning", text: `job ${job.id} slowed down ×${job.slowdown.toFixed(1)}`});
    }
  }
  const congested = (f) => f.totals?.congested_links ?? 0;
  if (congested(next) > 0 && congested(prev) === 0) {
    out.push({level: "warning", text: `congestion: ${congested(next)} link(s) offered more than capacity`});
  } else if (congested(next) === 0 && congested(prev) > 0) {
    out.push({level: "info", text: "congestion cleared"});
  }
  const seen = new Set((prev.alerts ?? []).map(alertKey));
  for (const alert of next.alerts ?? []) {
    if (!seen.has(alertKey(alert))) out.push({level: alert.severity === "error" ? "error" : "warning", text: alertText(alert)});
  }
  return out;
}

/** A stable key of an alert: its kind and subject. */
export function alertKey(alert) {
  return `${alert.kind}|${alert.job ?? ""}|${alert.link ?? ""}|${alert.port ?? ""}|${alert.counter ?? ""}`;
}

/**
 * One line for an alert: its message if it has one, else its kind and fields.
 * @returns {string}
 */
export function alertText(alert) {
  if (typeof alert.message === "string" && alert.message) return alert.message;
  const rest = Object.entries(alert).filter(([k]) => k !== "kind" && k !== "severity").map(([k, v]) => `${k} ${v}`);
  return `${String(alert.kind ?? "alert").replace(/_/g, " ")}${rest.length ? `: ${rest.join(", ")}` : ""}`;
}
