// Hotspots: the most congested directed links of a frame. Pure.

/**
 * The `count` directed links of highest value, highest first (ties: lower index first); zeros left out.
 * One pass with a small sorted buffer: O(N * count) worst case, O(N) typical.
 * @param {Float32Array} values per directed link
 * @param {number} count
 * @returns {Int32Array}
 */
export function topLinks(values, count) {
  const top = [];
  let floor = 0;
  for (let d = 0; d < values.length; ++d) {
    const v = values[d];
    if (!(v > floor) && top.length >= count) continue;
    if (!(v > 0)) continue;
    let j = top.length;
    while (j > 0 && values[top[j - 1]] < v) --j;
    top.splice(j, 0, d);
    if (top.length > count) top.pop();
    if (top.length >= count) floor = values[top[top.length - 1]];
  }
  return Int32Array.from(top);
}

/**
 * The hotspot rows of a frame: the engine's ranked `hotspots` when the frame has them, else the links of
 * highest utilization. Jobs come from the hotspot, else from `byLink` (jobs API: the jobs that can use the
 * link), except where the engine measured what no known job sent (`unattributed_gbps`, a telemetry-fed
 * fabric's twin): there the hotspot's jobs are the whole answer, even none.
 * @param {object} frame decoded frame buffers (util, hotspots)
 * @param {number} count
 * @param {Map<number, string[]>} [byLink] directed link -> job ids
 * @returns {{link: number, util: number, congestion: number, xmitWait: number|null, jobs: string[],
 *   unattributed: number|null}[]}
 */
export function hotspotRows(frame, count, byLink = new Map()) {
  const given = Array.isArray(frame.hotspots) && frame.hotspots.length ? frame.hotspots : null;
  if (given) {
    return given.slice(0, count).map((h) => ({
      link: h.link,
      util: h.util ?? frame.util[h.link],
      congestion: h.congestion ?? h.util ?? frame.util[h.link],
      xmitWait: h.xmit_wait ?? null,
      jobs: Array.isArray(h.jobs) && (h.jobs.length || typeof h.unattributed_gbps === "number")
        ? h.jobs.map((j) => (typeof j === "string" ? j : j.id)) : byLink.get(h.link) ?? [],
      unattributed: typeof h.unattributed_gbps === "number" ? h.unattributed_gbps : null,
    }));
  }
  return Array.from(topLinks(frame.util, count), (d) => ({
    link: d, util: frame.util[d], congestion: frame.util[d], xmitWait: null, jobs: byLink.get(d) ?? [],
    unattributed: null,
  }));
}
