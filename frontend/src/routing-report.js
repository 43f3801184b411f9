// The routing report (GET .../routing/) in words: what the routing panel shows, line by line.

/**
 * Lines describing a routing report: engine (and fallback), unreachable entries, balance, path lengths, loops.
 * @param {object} r the API's report
 * @returns {{text: string, level: string}[]} level "ok", "warn" or "bad"
 */
export function routingLines(r) {
  if (!r) return [];
  const lines = [];
  const engine = r.fallback ? `${r.requested_engine ?? r.engine} → ${r.engine_used} (fallback)` : r.engine_used;
  lines.push({text: `Engine: ${engine}`, level: r.fallback ? "warn" : "ok"});
  const bad = r.unreachable_entries ?? 0;
  const expected = r.unreachable_expected ?? 0; // switch-to-switch entries ftree leaves unrouted by design
  lines.push({text: `Unreachable (switch, LID) entries: ${bad.toLocaleString("en-US")} of `
    + `${(r.entries ?? 0).toLocaleString("en-US")}` + (bad ? ` (${r.unreachable_host_entries} towards hosts`
    + (expected ? `; ${expected.toLocaleString("en-US")} switch-to-switch, unrouted by design as OpenSM's ftree`
      + " leaves them" : "") + ")" : ""),
  level: bad > expected ? "bad" : "ok"});
  lines.push({text: `Unreachable host pairs: ${(r.unreachable_pairs ?? 0).toLocaleString("en-US")} of `
    + `${(r.host_pairs ?? 0).toLocaleString("en-US")}`, level: r.unreachable_pairs ? "bad" : "ok"});
  const p = r.ports ?? {};
  if (p.max != null) {
    const ratio = p.mean ? p.max / p.mean : 0;
    lines.push({text: `Destinations per switch port: min ${p.min}, max ${p.max}, mean ${Number(p.mean).toFixed(1)}`
      + ` (max/mean ${ratio.toFixed(2)})`, level: ratio > 1.5 ? "warn" : "ok"});
  }
  const hist = Object.entries(r.hop_histogram ?? {}).map(([k, v]) => `${k}: ${v.toLocaleString("en-US")}`);
  if (hist.length) lines.push({text: `Path lengths (links): ${hist.join(", ")}`, level: "ok"});
  const loops = r.credit_loops ?? {};
  lines.push({text: `Credit loops: ${loops.text ?? (loops.acyclic ? "none" : "found")}`,
    level: loops.acyclic === false ? "bad" : "ok"});
  for (const w of r.warnings ?? []) lines.push({text: `Warning: ${w}`, level: "warn"});
  return lines;
}

/** Attempts of the routing report while the engine has not published its routing (503), about a minute. */
export const ROUTING_RETRIES = 30;

/**
 * When to ask for the routing report again after a failed request: a 503 means the engine is still routing a
 * new fabric (or replacing its record), so ask again, a little later each time; anything else is final.
 * @param {{status?: number}} error the API error
 * @param {number} attempt attempts made so far (1 after the first)
 * @returns {number|null} milliseconds to wait, or null to stop and show the error
 */
export function routingRetryDelay(error, attempt) {
  if (error?.status !== 503 || attempt > ROUTING_RETRIES) return null;
  return Math.min(1000 * attempt, 5000);
}
