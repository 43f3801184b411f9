// Storage throughput and checkpoints: the rows the storage panel draws from a frame's `storage` section. Pure.

/**
 * Seconds left of a checkpoint being written: the engine's estimate at the tick's rate, else (the tick's rate being
 * unknown) the average rate so far.
 * @param {object|null} ck a job's `checkpoint`
 * @returns {number|null} seconds, or null when idle or not computable
 */
export function etaSeconds(ck) {
  if (!ck || ck.state !== "writing") return null;
  if (Number.isFinite(ck.eta_s)) return ck.eta_s;
  const p = ck.progress;
  if (p > 0 && p < 1 && ck.elapsed_s > 0) return (ck.elapsed_s * (1 - p)) / p;
  return null;
}

/**
 * One row per storage server: read served and write absorbed against what the server can do (the smaller of its
 * backend and its HCA ports), and what limits it.
 * @param {object|null} section decoded `storage`
 * @returns {{id: string, node: number, name: string, read: number, write: number, readCap: number,
 *   writeCap: number, network: number, readFraction: number, writeFraction: number,
 *   readBottleneck: string|null, writeBottleneck: string|null}[]} id is the node index as text; fractions 0..1
 */
export function serverRows(section) {
  const share = (x, cap) => (cap > 0 ? Math.min(1, Math.max(0, x / cap)) : 0);
  return (section?.servers ?? []).map((s) => {
    const readCap = Math.min(s.backend_read_gbps, s.network_gbps);
    const writeCap = Math.min(s.backend_write_gbps, s.network_gbps);
    return {
      id: String(s.node),
      node: s.node,
      name: s.name,
      read: s.read_gbps,
      write: s.write_gbps,
      readCap,
      writeCap,
      network: s.network_gbps,
      readFraction: share(s.read_gbps, readCap),
      writeFraction: share(s.write_gbps, writeCap),
      readBottleneck: s.read_bottleneck,
      writeBottleneck: s.write_bottleneck,
    };
  });
}

/**
 * What limits a server, in words.
 * @param {{readBottleneck: string|null, writeBottleneck: string|null}} row from serverRows
 * @returns {string} e.g. "write: backend", "read: network, write: backend", "" when not limited
 */
export function bottleneckText(row) {
  const parts = [];
  if (row.readBottleneck) parts.push(`read: ${row.readBottleneck}`);
  if (row.writeBottleneck) parts.push(`write: ${row.writeBottleneck}`);
  return parts.join(", ");
}

/**
 * Read/write throughput per tenant (`background`: background reads), in the engine's order.
 * @param {object|null} section decoded `storage`
 * @returns {{id: string, read: number, write: number}[]}
 */
export function tenantRows(section) {
  return (section?.tenants ?? []).map((t) => ({id: t.tenant, read: t.read_gbps, write: t.write_gbps}));
}

/**
 * One row per job that reads data or checkpoints, with its phase from the frame's jobs.
 * @param {object|null} section decoded `storage`
 * @param {object[]} [jobs] the frame's `jobs`
 * @returns {{id: string, tenant: string, read: number, write: number, phase: string|null,
 *   checkpoint: string}[]} checkpoint: "writing", "idle" or "" (the job does not checkpoint)
 */
export function storageJobRows(section, jobs = []) {
  const phase = new Map(jobs.map((j) => [j.id, j.phase ?? null]));
  return (section?.jobs ?? []).map((j) => ({
    id: j.id,
    tenant: j.tenant ?? "",
    read: j.read_gbps,
    write: j.write_gbps,
    phase: phase.get(j.id) ?? null,
    checkpoint: j.checkpoint ? j.checkpoint.state : "",
  }));
}

/**
 * One row per job that checkpoints: the checkpoint being written (progress, bytes, ETA) or the next one.
 * @param {object|null} section decoded `storage`
 * @param {object[]} [jobs] the frame's `jobs` (for the iteration count)
 * @returns {{id: string, writing: boolean, progress: number, bytesNow: number, bytesWritten: number, size: number,
 *   elapsed: number|null, eta: number|null, every: number, nextIteration: number, iterations: number|null,
 *   count: number, lastS: number|null, lastGpuS: number|null, gpuSTotal: number}[]} progress and bytesNow (of the
 *   checkpoint being written: progress x size) 0 when idle; bytesWritten: the engine's `bytes_written`, over all
 *   the job's checkpoints
 */
export function checkpointRows(section, jobs = []) {
  const iterations = new Map(jobs.map((j) => [j.id, Number.isInteger(j.iterations) ? j.iterations : null]));
  return (section?.jobs ?? []).filter((j) => j.checkpoint).map((j) => {
    const ck = j.checkpoint;
    const writing = ck.state === "writing";
    const progress = writing ? ck.progress ?? 0 : 0;
    return {
      id: j.id,
      writing,
      progress,
      bytesNow: progress * ck.size_bytes,
      bytesWritten: ck.bytes_written,
      size: ck.size_bytes,
      elapsed: writing ? ck.elapsed_s : null,
      eta: etaSeconds(ck),
      every: ck.every,
      nextIteration: ck.next_iteration,
      iterations: iterations.get(j.id) ?? null,
      count: ck.count,
      lastS: ck.last_s,
      lastGpuS: ck.last_gpu_s,
      gpuSTotal: ck.gpu_s_total,
    };
  });
}

/**
 * The log of finished checkpoints, newest first: adds the last checkpoint of every job whose `count` is not yet
 * logged (a client that connects late starts with each job's last one). Does not modify `log`.
 * @param {{key: string, job: string, count: number, s: number, gpuS: number|null}[]} log current log
 * @param {object|null} section decoded `storage`
 * @param {number} [keep] longest log
 * @returns {object[]} the new log (the same array when nothing was added)
 */
export function checkpointLog(log, section, keep = 10) {
  const known = new Set(log.map((e) => e.key));
  const added = [];
  for (const j of section?.jobs ?? []) {
    const ck = j.checkpoint;
    if (!ck || !(ck.count > 0) || ck.last_s == null) continue;
    const key = `${j.id}#${ck.count}`;
    if (!known.has(key)) added.push({key, job: j.id, count: ck.count, s: ck.last_s, gpuS: ck.last_gpu_s});
  }
  return added.length ? [...added, ...log].slice(0, keep) : log;
}
