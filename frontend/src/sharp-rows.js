// SHARP in-network aggregation: the rows the SHARP panel draws from a frame's `sharp` section. Pure.

/**
 * How much faster one all-reduce runs on a SHARP tree than with the job's own pattern, both alone on the idle
 * fabric.
 * @param {number|null} withSharp seconds with SHARP (`allreduce_s_sharp`)
 * @param {number|null} without seconds without (`allreduce_s_without`)
 * @returns {number|null} without / withSharp, or null when either is unknown or not positive
 */
export function speedup(withSharp, without) {
  if (!(withSharp > 0) || !(without > 0) || !Number.isFinite(withSharp) || !Number.isFinite(without)) return null;
  return without / withSharp;
}

/**
 * The panel's summary of a `sharp` section.
 * @param {object|null} section decoded `sharp` (decodeSharp)
 * @returns {{state: string, label: string, generation: string|null, treesInUse: number, trees: number|null,
 *   perSwitch: number|null, perPort: number|null, allowedTenants: string[]|null, keptGbps: number,
 *   bytesAggregated: number, bytesKeptOffWire: number, aggregationSwitches: number|null}} state "none" (not
 *   modelled), "disabled" or "enabled"; aggregationSwitches: switches with an Aggregation Node when the fabric
 *   lists them (a real capture), else null
 */
export function sharpSummary(section) {
  const state = section == null ? "none" : section.enabled ? "enabled" : "disabled";
  const on = state === "enabled";
  return {
    state,
    label: on ? section.label ?? section.generation ?? "no SHARP-capable switches" : "",
    generation: on ? section.generation ?? null : null,
    treesInUse: section?.trees_in_use ?? 0,
    trees: on ? section.trees : null,
    perSwitch: on ? section.per_switch : null,
    perPort: on ? section.per_port : null,
    allowedTenants: on ? section.allowed_tenants ?? null : null,
    keptGbps: section?.kept_off_wire_gbps ?? 0,
    bytesAggregated: section?.bytes_aggregated ?? 0,
    bytesKeptOffWire: section?.bytes_kept_off_wire ?? 0,
    aggregationSwitches: on ? section.aggregation_switches ?? null : null,
  };
}

/**
 * One row per switch holding trees, in the engine's order (node index), with its use of the per-switch limit.
 * @param {object|null} section decoded `sharp`
 * @returns {{id: string, node: number, name: string, tier: number|null, trees: number, limit: number|null,
 *   ports: number, jobs: string[], fraction: number}[]} id is the node index as text; fraction = trees / limit
 *   (0 when there is no limit)
 */
export function sharpSwitchRows(section) {
  return (section?.switches ?? []).map((s) => ({
    id: String(s.node),
    node: s.node,
    name: s.name,
    tier: s.tier ?? null,
    trees: s.trees,
    limit: s.limit,
    ports: s.ports,
    jobs: s.jobs,
    fraction: s.limit > 0 ? s.trees / s.limit : 0,
  }));
}

/**
 * One row per job that asks for SHARP or runs with it.
 * @param {object|null} section decoded `sharp`
 * @returns {{id: string, tenant: string, on: boolean, reason: string|null, root: string|null, switches: number,
 *   bytesAggregated: number, bytesKeptOffWire: number, sharpS: number|null, withoutS: number|null,
 *   speedup: number|null}[]} speedup: all-reduce time without / with SHARP (what the job gains when on, what it
 *   would gain when off)
 */
export function sharpJobRows(section) {
  return (section?.jobs ?? []).map((j) => ({
    id: j.id,
    tenant: j.tenant ?? "",
    on: j.on,
    reason: j.on ? null : j.reason ?? "no SHARP tree",
    root: j.tree?.root_name ?? null,
    switches: Array.isArray(j.tree?.switches) ? j.tree.switches.length : 0,
    bytesAggregated: j.bytes_aggregated,
    bytesKeptOffWire: j.bytes_kept_off_wire,
    sharpS: j.allreduce_s_sharp,
    withoutS: j.allreduce_s_without,
    speedup: speedup(j.allreduce_s_sharp, j.allreduce_s_without),
  }));
}

/**
 * One line for an aggregation manager event.
 * @param {{t: number, kind: string, job?: string, root?: string, switches?: number, reason?: string}} e
 * @returns {string} e.g. "allocated llama-70b: root spine01, 5 switches"
 */
export function sharpEventText(e) {
  const job = e.job ?? "";
  switch (e.kind) {
    case "allocated":
      return `allocated ${job}: root ${e.root ?? "?"}, ${e.switches ?? "?"} switch${e.switches === 1 ? "" : "es"}`;
    case "released":
      return `released ${job}`;
    case "fallback":
      return `fallback ${job}: ${e.reason ?? "no tree"}`;
    default:
      return `${String(e.kind).replace(/_/g, " ")} ${job}`.trim();
  }
}

/**
 * The newest events first, each with a stable key (events carry no id: time, kind and job, counted when repeated).
 * @param {object|null} section decoded `sharp`
 * @returns {{key: string, t: number, kind: string, text: string}[]}
 */
export function sharpEventRows(section) {
  const seen = new Map();
  const rows = (section?.events ?? []).map((e) => {
    const base = `${e.t}|${e.kind}|${e.job ?? ""}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return {key: `${base}|${n}`, t: e.t, kind: e.kind, text: sharpEventText(e)};
  });
  return rows.reverse();
}
