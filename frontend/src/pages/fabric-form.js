// The new-fabric form's pure parts: parameters from the fields, the API call, the preview's text, the lines
// around a file error. The page (new-fabric.js) wires them to the DOM.
import {format} from "d3";

const count = format(",d");
const fixed1 = format(",.1f");

/**
 * A generator's parameters from the form's values, typed by its schema; empty fields and defaults are left out
 * (the generator fills them in), as the server does.
 * @param {object} generator schema entry ({params: [{name, kind, default, required, choices}]})
 * @param {function(string): string} valueOf the field's text by parameter name
 * @returns {{params: object, missing: string[], invalid: string[]}}
 */
export function collectParams(generator, valueOf) {
  const params = {};
  const missing = [];
  const invalid = [];
  for (const p of generator.params) {
    const raw = String(valueOf(p.name) ?? "").trim();
    if (raw === "") {
      if (p.required) missing.push(p.name);
      continue;
    }
    let value = raw;
    if (p.kind === "int" || p.kind === "float") {
      value = Number(raw);
      if (!Number.isFinite(value) || (p.kind === "int" && !Number.isInteger(value))) {
        invalid.push(p.name);
        continue;
      }
    }
    if (value !== p.default || p.required) params[p.name] = value;
  }
  return {params, missing, invalid};
}

/** `text` quoted for a POSIX shell. */
export function shellQuote(text) {
  return `'${String(text).replace(/'/g, "'\\''")}'`;
}

/**
 * The curl command that creates the same fabric through the REST API (token auth).
 * @param {string} origin e.g. "https://ibweb.example"
 * @param {object} fields {name, slug, description, routing_engine, tick_s, congestion_model}
 * @param {object} source {topology} for a generated design, or {file: "name.txt"} for an upload
 * @param {object} background the scenario's background traffic (the page's default)
 * @returns {{command: string, body: object|null}} body: the JSON sent (null for an upload)
 */
export function apiCall(origin, fields, source, background) {
  const url = `${origin}/api/fabrics/fabrics/`;
  const auth = '-H "Authorization: Token $IBWEB_TOKEN"';
  if (source.file) {
    const form = Object.entries(fields).filter(([, v]) => v !== "" && v != null)
      .map(([k, v]) => `  -F ${shellQuote(`${k}=${v}`)}`);
    return {command: [`curl -X POST ${shellQuote(url)} ${auth} \\`, ...form.map((f) => `${f} \\`),
      `  -F ${shellQuote(`topology_file=@${source.file}`)}`].join("\n"), body: null};
  }
  const body = {...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== "" && v != null)),
    spec: {topology: source.topology, jobs: [], background}};
  return {command: `curl -X POST ${shellQuote(url)} ${auth} \\\n  -H "Content-Type: application/json" \\\n` +
    `  -d ${shellQuote(JSON.stringify(body))}`, body};
}

/** Seconds as text: "1.5 ms", "2.3 s", "4 min 10 s". */
export function duration(s) {
  if (s < 1) return `${fixed1(s * 1000)} ms`;
  if (s < 120) return `${fixed1(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

const parts = (obj) => Object.entries(obj ?? {}).map(([k, v]) => `${count(v)} ${k}`).join(", ");

/**
 * The preview's facts as text, from the preview API's answer.
 * @returns {object} {hosts, switches, cables, lids, lidsFraction, bisection, oversubscription, routing, read}
 *   read: what an uploaded capture said beyond the graph (SHARP Aggregation Nodes, chassis, host systems,
 *   loopback cables), "" when nothing
 */
export function previewFacts(s) {
  const rates = Object.entries(s.cables_by_rate ?? {}).map(([rate, v]) => `${count(v.links)} × ${rate} ${count(v.gbps_each)} Gb/s`);
  const est = s.routing?.estimate;
  const over = Object.entries(s.oversubscription ?? {}).map(([tier, r]) => `${tier} ${format(".2~f")(r)}:1`);
  return {
    hosts: `${count(s.hosts)}${s.host_roles && Object.keys(s.host_roles).length > 1 ? ` (${parts(s.host_roles)})` : ""}`,
    switches: `${count(s.switches)} (${parts(s.switch_tiers)})`,
    cables: `${count(s.cables)}${rates.length ? ` (${rates.join("; ")})` : ""}`,
    lids: `${count(s.lids)} of ${count(s.lids_max)} (${format(".1%")(s.lids / s.lids_max)})`,
    lidsFraction: s.lids / s.lids_max,
    bisection: s.bisection_gbps >= 1000 ? `${fixed1(s.bisection_gbps / 1000)} Tb/s` : `${fixed1(s.bisection_gbps)} Gb/s`,
    oversubscription: over.join(", ") || "–",
    routing: est ? `${s.routing.engine}: about ${duration(est.seconds)} (${duration(est.low)} to ${duration(est.high)})`
      : `${s.routing?.engine ?? "?"}: no estimate (no calibration of this engine)`,
    read: readFacts(s),
  };
}

function readFacts(s) {
  const out = [];
  if (s.sharp?.aggregation_nodes) {
    out.push(`${count(s.sharp.aggregation_nodes)} SHARP Aggregation Nodes on ${count(s.sharp.switches)} switches (not hosts)`);
  }
  if (s.host_systems != null) out.push(`${count(s.host_systems)} host systems`);
  for (const ch of s.chassis ?? []) out.push(`chassis ${ch.guid}: ${count(ch.switches.length)} ASICs`);
  if (s.loopbacks?.length) out.push(`${count(s.loopbacks.length)} loopback cables (not routed)`);
  const pm = s.topology?.counters;
  if (pm) {
    const worst = Object.entries(pm.errors ?? {}).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([c, n]) => `${c} on ${count(n)}`);
    out.push(`port counters of ${count(pm.ports)} ports, ${count(pm.with_errors)} with errors${worst.length ? ` (${worst.join(", ")})` : ""}`);
  }
  return out.join("; ");
}

/**
 * The reader's warnings as list items' text: "line 3: shell prompt skipped: [root@ufm01 ~]# ibnetdiscover".
 * @returns {string[]}
 */
export function warningLines(warnings) {
  return (warnings ?? []).map((w) => `line ${w.line}: ${w.reason}${w.text ? `: ${w.text}` : ""}`);
}

/**
 * The lines around line `line` (1-based) of `text`, for showing a file error where it is.
 * @returns {{first: number, lines: string[]}} first: the number of lines[0]
 */
export function errorContext(text, line, around = 2) {
  const lines = String(text).split(/\r?\n/);
  const first = Math.max(1, line - around);
  return {first, lines: lines.slice(first - 1, Math.min(lines.length, line + around))};
}

/**
 * The trial-sweep API's body from the collector fields: what the chosen way of reaching the tools uses, as typed
 * (the server splits the prefix and the NAME=value lines, and names the field of an error).
 * @param {function(string): string} valueOf a collector field's text by name without the form's "collector-" prefix
 *   (source, command_prefix, environment, drop_dir, lfts_path, timeout_s, interval_s)
 * @param {string} routingEngine what routes the fabric when there is no LFT dump
 * @returns {object}
 */
export function collectorBody(valueOf, routingEngine) {
  const text = (name) => String(valueOf(name) ?? "");
  const source = text("source") || "commands";
  const body = {source};
  if (source === "commands") Object.assign(body, {command_prefix: text("command_prefix").trim(), environment: text("environment")});
  if (source === "directory") body.drop_dir = text("drop_dir").trim();
  for (const name of ["lfts_path", "timeout_s", "interval_s"]) {
    const value = text(name).trim();
    if (value !== "") body[name] = value;
  }
  if (routingEngine) body.routing_engine = routingEngine;
  return body;
}

/** The curl command of a trial sweep (token auth), for scripts. */
export function trialCall(url, body) {
  return `curl -X POST ${shellQuote(url)} -H "Authorization: Token $IBWEB_TOKEN" \\\n  -H "Content-Type: application/json" \\\n` +
    `  -d ${shellQuote(JSON.stringify(body))}`;
}

const plural = (n, one, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

function countersText(c) {
  if (!c) return "not read (no discovery)";
  const ports = `${count(c.ports_read)} of ${count(c.ports_expected)} cabled switch ports`;
  const missing = c.ports_missing?.length ? `; no counters for ${c.ports_missing.join(", ")}${c.ports_expected - c.ports_read > c.ports_missing.length ? ", …" : ""}` : "";
  const unknown = c.ports_unknown ? `; ${plural(c.ports_unknown, "port")} not in the discovery` : "";
  if (c.files != null) return `${plural(c.files, "perfquery file")}: ${ports}${missing}${unknown}`;
  const limit = c.switches_total > c.switches_limit ? ` (a trial reads at most ${count(c.switches_limit)} of the ${count(c.switches_total)})` : "";
  return `${count(c.switches_read)} of ${plural(c.switches_tried, "switch", "switches")} read${limit}: ${ports}${missing}${unknown}`;
}

function lftText(l) {
  if (!l) return "–";
  if (!l.read) return l.path ? `${l.path}: ${l.found ? "found, " : ""}${l.note ?? ""}` : l.note ?? "none";
  const parts = [`${count(l.switches)} of ${plural(l.switches_total, "switch", "switches")}, ${plural(l.entries, "entry", "entries")}`];
  if (l.switches_missing?.length) parts.push(`no table for ${l.switches_missing.join(", ")}`);
  if (l.unmapped_entries) parts.push(`${count(l.unmapped_entries)} entries toward LIDs the discovery lacks`);
  if (l.dead_entries) parts.push(`${count(l.dead_entries)} entries through uncabled ports (an older cabling)`);
  return `${l.path}: ${parts.join("; ")}`;
}

/**
 * A trial sweep's report (POST /api/telemetry/trial-sweep/) as text.
 * @returns {{switches, cas, links, down, counters, lft, summary: string, errors: string[], warnings: string[]}}
 */
export function trialFacts(r) {
  const d = r.discovery;
  const errors = (r.errors ?? []).map((e) => `${e.stage}${e.target != null ? ` (LID ${e.target})` : ""}` +
    `${e.line != null ? `, line ${e.line}` : ""}: ${e.message}`);
  const warnings = (r.warnings ?? []).map((w) => `${w.source ? `${w.source}, ` : ""}line ${w.line}: ${w.reason}${w.text ? `: ${w.text}` : ""}`);
  const found = d ? `${plural(d.switches, "switch", "switches")}, ${plural(d.cas, "CA")}` +
    `${d.links != null ? `, ${plural(d.links, "link")}` : ""}` : "nothing discovered";
  const took = r.duration_s != null ? ` in ${duration(r.duration_s)}` : "";
  return {
    switches: d ? count(d.switches) : "–", cas: d ? count(d.cas) : "–", links: d?.links != null ? count(d.links) : "–",
    down: d ? count(d.ports_not_up) : "–", counters: countersText(r.counters), lft: lftText(r.lft),
    summary: `${r.ok ? "Test sweep passed" : "Test sweep found problems"}${took}: ${found}; nothing was saved.`,
    errors, warnings,
  };
}
