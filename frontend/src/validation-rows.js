// The fabric validation report (issue 38) as text: KPIs, each check's status, the findings with their evidence, the
// isolation advice with what cutting each port does to the running jobs and what to do (isolate, or replace a port
// failing again after an isolation), the ports isolated now, the daily digest. Pure: what the Health
// pages' Validation section (pages/validation.js) draws and the tests read.

const pct = (share) => (share == null ? "–" : `${(Math.round(share * 1000) / 10).toFixed(1)}%`);
const count = (n) => (n == null ? "–" : Number(n).toLocaleString("en-US"));

/** Names of the checks, in report order, as people read them. */
export const CHECK_NAMES = {
  link_below_expected: "Links below their expected width or speed",
  duplicate_ids: "Duplicate GUIDs and LIDs",
  sm_mastership: "Subnet manager mastership",
  pkey_mismatch: "P_Key mismatches across a link",
  firmware: "Firmware compliance",
  device_vitals: "Fans, PSUs and temperatures",
  asic_suspected: "Switches with most ports unhealthy (ASIC suspected)",
  duplicate_guid: "Duplicate GUID",
  duplicate_lid: "Duplicate LID",
  fan: "Fan",
  psu: "Power supply",
  temperature: "Temperature",
  device_errors: "Device errors",
};

/**
 * The KPI tiles: [{key, label, value, detail, grade}] (grade: "normal" at 100%, "warning" under, "error" under 99%
 * for endpoints and links; "unknown" without a figure).
 * @param {object} kpis the report's kpis
 * @returns {{key: string, label: string, value: string, detail: string, grade: string}[]}
 */
export function kpiTiles(kpis) {
  const grade = (share, floor = 0.99) => (share == null ? "unknown" : share >= 1 ? "normal" : share >= floor ? "warning" : "error");
  const c = kpis?.connected_endpoints;
  const t = kpis?.topology_correctness;
  const h = kpis?.healthy_links;
  return [
    {key: "connected_endpoints", label: "Connected endpoints", value: pct(c?.share),
      detail: c ? `${count(c.connected)} of ${count(c.expected)} hosts cabled` : "–", grade: grade(c?.share)},
    {key: "topology_correctness", label: "Topology correctness", value: t ? pct(t.share) : "–",
      detail: t ? `planned cables as planned, of ${count(t.planned_cables)}` : "no cabling plan to compare with",
      grade: t ? grade(t.share) : "unknown"},
    {key: "healthy_links", label: "Healthy links", value: pct(h?.share),
      detail: h ? `${count(h.healthy)} of ${count(h.links)} links` + (h.below_expected ? `; ${count(h.below_expected)} below expected rate` : "")
        : "–", grade: grade(h?.share)},
  ];
}

/**
 * One row per check: [name, status text, status].
 * @param {object} checks the report's checks {name: {status, findings, why?}}
 * @returns {[string, string, string][]}
 */
export function checkRows(checks) {
  return Object.entries(checks ?? {}).map(([name, c]) => {
    const text = c.status === "skipped" ? `skipped: ${c.why ?? "no input"}`
      : c.status === "fail" ? `${c.findings} finding${c.findings === 1 ? "" : "s"}` : "passed";
    return [CHECK_NAMES[name] ?? name, text, c.status];
  });
}

/**
 * A finding's evidence in one line: "key: value; ..." (lists joined, nested objects as JSON, at most `most` chars).
 * @param {object} evidence
 * @param {number} [most]
 * @returns {string}
 */
export function evidenceText(evidence, most = 240) {
  const value = (v) => (Array.isArray(v) ? v.map(value).join(", ") : v && typeof v === "object" ? JSON.stringify(v)
    : v == null ? "–" : String(v));
  const text = Object.entries(evidence ?? {}).map(([k, v]) => `${k.replaceAll("_", " ")}: ${value(v)}`).join("; ");
  return text.length > most ? `${text.slice(0, most - 1)}…` : text;
}

/**
 * The cells of a finding's row: severity, check, subject, message, evidence; and its map link.
 * @param {object} f a finding of the shown report
 * @returns {{cells: string[], severity: string, mapUrl: string|null, plane: string|null}}
 */
export function findingRow(f) {
  return {cells: [f.severity, CHECK_NAMES[f.check] ?? f.check, f.subject, f.message, evidenceText(f.evidence)],
    severity: f.severity, mapUrl: f.map_url ?? null, plane: f.plane_name ?? null};
}

/**
 * What cutting an advised port does to the running jobs, in one line, from its jobs and its cable what-if.
 * @param {object} a an advised port of the joined advice
 * @returns {string}
 */
export function whatifText(a) {
  const on = a.jobs?.length ?? 0;
  const others = a.other_jobs ?? 0;
  const jobs = on + others === 0 ? "no running job crosses this cable"
    : `${on + others} running job${on + others === 1 ? "" : "s"} cross${on + others === 1 ? "es" : ""} it` +
      (on ? ` (${a.jobs.slice(0, 4).map((j) => j.id).join(", ")}${on > 4 ? ", …" : ""})` : "");
  const w = a.whatif;
  let what = "what-if not run";
  if (w?.status === "done") {
    const s = w.summary ?? {};
    const worst = (w.jobs ?? []).filter((j) => j.comm_ratio != null).reduce((m, j) => Math.max(m, j.comm_ratio), 1);
    what = `what-if: ${s.jobs_slower ?? 0} slower, ${s.jobs_broken ?? 0} cut off` +
      (worst > 1 + 1e-6 ? `, worst ${worst.toFixed(2)}× communication time` : "");
  } else if (w?.status === "failed") what = `what-if failed: ${w.error || "error"}`;
  else if (w) what = `what-if ${w.status}`;
  return `${jobs}; ${what}`;
}

/**
 * What to do with an advised port, as its badge reads: "replace" (isolated before and failing again: the cable or
 * transceiver, not another disable) or "isolate".
 * @param {object} a an advised port
 * @returns {{action: string, label: string, severity: string, title: string}}
 */
export function adviceAction(a) {
  if (a.action === "replace" || a.failing_again) {
    return {action: "replace", label: "replace", severity: "critical",
      title: "Isolated before and failing again: replace the cable or transceiver rather than disable it again"};
  }
  return {action: "isolate", label: "isolate", severity: "warning", title: "Take the port out of service, re-enable after a clean test"};
}

/**
 * The cells of an advised port's row: rank, port, action (its badge's text, adviceAction), grade, why (note), jobs
 * and what-if, the isolate command and the re-enable one.
 * @param {object} a an advised port
 * @returns {string[]}
 */
export function adviceCells(a) {
  const grade = a.failing_again ? `${a.grade}, failing again` : a.grade;
  return [String(a.rank), `${a.node} port ${a.port}`, adviceAction(a).label, grade, a.note, whatifText(a),
    a.commands?.isolate ?? "–", a.commands?.reenable ?? "replace first"];
}

/**
 * The cells of a port isolated now: port, isolated since, last seen disabled, what showed it.
 * @param {object} r an entry of the answer's isolated list
 * @param {(t: number) => string} [when]
 * @returns {string[]}
 */
export function isolatedCells(r, when = (t) => `${new Date(t * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`) {
  return [`${r.node} port ${r.port}`, r.isolated_at == null ? "–" : when(r.isolated_at),
    r.last_seen_at == null ? "–" : when(r.last_seen_at), r.source || "–"];
}

/**
 * One line on the ports isolated now.
 * @param {object[]|undefined} isolated the answer's isolated list
 * @returns {string}
 */
export function isolatedSummary(isolated) {
  const n = isolated?.length ?? 0;
  return n === 0 ? "No port is isolated now (none seen administratively disabled)."
    : `${n} port${n === 1 ? " is" : "s are"} isolated now (seen administratively disabled); each is listed until it is seen enabled again.`;
}

/**
 * One line on the advice as a whole.
 * @param {object|null} iso the report's isolation
 * @returns {string}
 */
export function adviceSummary(iso) {
  if (!iso) return "No isolation advice: the fabric's ports are not graded yet.";
  const n = iso.advised?.length ?? 0;
  if (!iso.candidates) return "No port is graded bad enough to take out of service.";
  const held = iso.candidates - n;
  return `${n} of ${iso.candidates} candidate port${iso.candidates === 1 ? "" : "s"} advised (at most ${iso.cap} at once` +
    `${held > 0 ? `; ${held} held back by the cap` : ""}). Never executed: the commands are yours to run, ` +
    `the re-enable after a clean test of ${Math.round((iso.clean_test_s ?? 7560) / 60)} minutes.`;
}

/**
 * The daily digest in one line.
 * @param {object|null} digest {since, new, resolved, changed, kpis}
 * @param {(t: number) => string} [when]
 * @returns {string}
 */
export function digestText(digest, when = (t) => new Date(t * 1000).toISOString().slice(0, 16).replace("T", " ")) {
  if (!digest) return "No earlier report to compare with yet.";
  const moved = Object.entries(digest.kpis ?? {}).filter(([, v]) => v.was !== v.now && v.was != null && v.now != null)
    .map(([k, v]) => `${k.replaceAll("_", " ")} ${pct(v.was)} → ${pct(v.now)}`);
  return `Since ${when(digest.since)} UTC: ${digest.new.length} new, ${digest.resolved.length} resolved, ` +
    `${digest.changed.length} changed severity${moved.length ? `; ${moved.join(", ")}` : ""}.`;
}
