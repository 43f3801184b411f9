// Highlights: a set of nodes and cables to stand out on the map (a job, a tenant, a routed path). Pure.

/**
 * A highlight from directed links and nodes.
 * @param {object} fabric from decodeSnapshot
 * @param {{kind: string, label: string, links?: number[], nodes?: number[]}} spec directed link indices (0..2L-1)
 *   and node indices; out-of-range values are ignored
 * @returns {object} {kind, label, cables: Int32Array (distinct cable indices, ascending), nodes: Int32Array,
 *   cableMask: Uint8Array(L), nodeMask: Uint8Array(n), links: Int32Array (the directed links given, in order)}
 */
export function makeHighlight(fabric, {kind, label, links = [], nodes = []}) {
  const {n, L} = fabric;
  const cableMask = new Uint8Array(L);
  const nodeMask = new Uint8Array(n);
  const kept = [];
  for (const d of links) {
    if (Number.isInteger(d) && d >= 0 && d < 2 * L) (cableMask[d % L] = 1), kept.push(d);
  }
  for (const i of nodes) if (Number.isInteger(i) && i >= 0 && i < n) nodeMask[i] = 1;
  const pick = (mask) => {
    const out = [];
    for (let i = 0; i < mask.length; ++i) if (mask[i]) out.push(i);
    return Int32Array.from(out);
  };
  return {kind, label, cables: pick(cableMask), nodes: pick(nodeMask), cableMask, nodeMask, links: Int32Array.from(kept)};
}

/**
 * The highlight of a job: its hosts and directed links from the jobs catalog, else (not in the catalog yet) the
 * limiting links the frame names. Shared by every panel that selects a job.
 * @param {object} fabric from decodeSnapshot
 * @param {object[]} catalog jobs API list ({id, hosts, links})
 * @param {object[]} live the frame's `jobs`
 * @param {string} id job id
 * @returns {object} makeHighlight of kind "job", labelled with the id
 */
export function jobHighlight(fabric, catalog, live, id) {
  const job = catalog.find((j) => j.id === id);
  const links = job ? job.links : live.find((j) => j.id === id)?.limiting_links ?? [];
  return makeHighlight(fabric, {kind: "job", label: id, links, nodes: job ? job.hosts : []});
}

/**
 * The hosts and directed links of a tenant: the union over its jobs.
 * @param {object[]} jobs from the jobs API: {id, tenant, hosts: number[], links: number[]}
 * @param {string} tenant
 * @returns {{jobs: string[], hosts: number[], links: number[]}}
 */
export function tenantUnion(jobs, tenant) {
  const hosts = new Set();
  const links = new Set();
  const ids = [];
  for (const job of jobs) {
    if (job.tenant !== tenant) continue;
    ids.push(job.id);
    for (const h of job.hosts) hosts.add(h);
    for (const d of job.links) links.add(d);
  }
  const sorted = (s) => [...s].sort((p, q) => p - q);
  return {jobs: ids, hosts: sorted(hosts), links: sorted(links)};
}

/**
 * The tenant's partitions and their member nodes, from the P_Key API (`/api/tenancy/fabrics/<slug>/pkeys/`).
 * @param {object} pkeys {"0x0101": {partition, tenant, guids: [{guid, membership, node}]}, ...}
 * @param {string} tenant
 * @returns {{partitions: string[], nodes: number[]}} partition names with P_Key, and member node indices
 */
export function tenantPartitions(pkeys, tenant) {
  const partitions = [];
  const nodes = new Set();
  for (const [pkey, p] of Object.entries(pkeys ?? {})) {
    if (p.tenant !== tenant) continue;
    partitions.push(`${p.partition} ${pkey}`);
    for (const g of p.guids ?? []) if (g.node != null) nodes.add(g.node);
  }
  return {partitions: partitions.sort(), nodes: [...nodes].sort((a, b) => a - b)};
}

/**
 * Which jobs use each directed link.
 * @param {object[]} jobs from the jobs API
 * @returns {Map<number, string[]>} directed link -> job ids
 */
export function jobsByLink(jobs) {
  const out = new Map();
  for (const job of jobs) {
    for (const d of job.links) {
      if (out.has(d)) out.get(d).push(job.id);
      else out.set(d, [job.id]);
    }
  }
  return out;
}
