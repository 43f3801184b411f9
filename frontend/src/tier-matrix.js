// Tier-to-tier utilization matrices (leaf x spine, spine x core) of a fat tree. Pure.

/**
 * The matrix of cables between two switch tiers. Tiers of more than maxSide switches are shown in bins of
 * neighbouring switches (by x: a scalable unit's switches sit together), so the matrix stays readable on a
 * 32,768-GPU fabric (1,024 leaves and spines: 256 x 256 cells of 4 x 4 switches).
 * @param {object} fabric from decodeSnapshot
 * @param {number} lower tier of the rows (1 leaf, 2 spine)
 * @param {number} upper tier of the columns (2 spine, 3 core)
 * @param {Float64Array} [x] node x positions (layout) to order rows and columns by; index order without
 * @param {number} [maxSide] most rows (and columns) shown; more switches are binned
 * @returns {object} {lower, upper, rows, cols: Int32Array of the first node of each row (column), rowsLast, colsLast:
 *   Int32Array of the last node of each, R, C, cell: Int32Array(L) (cell r * C + c of each cable between the tiers,
 *   else -1), up: Int32Array(L) (directed index of the cable's upward direction), cables: Uint32Array(R * C)
 *   (cables per cell)}
 */
export function tierMatrix(fabric, lower, upper, x = null, maxSide = 256) {
  const {n, L} = fabric;
  const {tier, isHost} = fabric.nodes;
  const {a, b} = fabric.links;
  const pick = (t) => {
    const ids = [];
    for (let i = 0; i < n; ++i) if (!isHost[i] && tier[i] === t) ids.push(i);
    if (x) ids.sort((p, q) => x[p] - x[q] || p - q);
    return Int32Array.from(ids);
  };
  const binned = (ids, slotOf) => {
    const per = Math.max(1, Math.ceil(ids.length / maxSide));
    ids.forEach((i, r) => (slotOf[i] = Math.floor(r / per)));
    const count = Math.ceil(ids.length / per);
    const first = Int32Array.from({length: count}, (_, k) => ids[k * per]);
    const last = Int32Array.from({length: count}, (_, k) => ids[Math.min(ids.length - 1, (k + 1) * per - 1)]);
    return [first, last];
  };
  const rowOf = new Int32Array(n).fill(-1);
  const colOf = new Int32Array(n).fill(-1);
  const [rows, rowsLast] = binned(pick(lower), rowOf);
  const [cols, colsLast] = binned(pick(upper), colOf);
  const R = rows.length;
  const C = cols.length;
  const cell = new Int32Array(L).fill(-1);
  const up = new Int32Array(L).fill(-1);
  const cables = new Uint32Array(R * C);
  for (let c = 0; c < L; ++c) {
    if (rowOf[a[c]] >= 0 && colOf[b[c]] >= 0) (cell[c] = rowOf[a[c]] * C + colOf[b[c]]), (up[c] = c);
    else if (rowOf[b[c]] >= 0 && colOf[a[c]] >= 0) (cell[c] = rowOf[b[c]] * C + colOf[a[c]]), (up[c] = c + L);
    if (cell[c] >= 0) ++cables[cell[c]];
  }
  return {lower, upper, rows, cols, rowsLast, colsLast, R, C, cell, up, cables};
}

/** Directions a matrix cell can show: the upward links, the downward links, or the larger of both. */
export const DIRECTIONS = ["max", "up", "down"];

/**
 * Cell values of a matrix for one frame: the highest utilization among the cell's cables in `direction`.
 * @param {object} m from tierMatrix
 * @param {Float32Array} util per directed link, length 2L
 * @param {string} direction "max", "up" or "down"
 * @param {Float32Array} [out] R * C values to fill; NaN where the cell has no cable
 * @returns {Float32Array} out
 */
export function matrixValues(m, util, direction = "max", out = new Float32Array(m.R * m.C)) {
  const L = m.cell.length;
  out.fill(-1);
  const {cell, up} = m;
  for (let c = 0; c < L; ++c) {
    const k = cell[c];
    if (k < 0) continue;
    const u = up[c];
    const d = u < L ? u + L : u - L; // downward direction
    const v = direction === "up" ? util[u] : direction === "down" ? util[d] : util[u] > util[d] ? util[u] : util[d];
    if (v > out[k]) out[k] = v;
  }
  for (let k = 0; k < out.length; ++k) if (!m.cables[k]) out[k] = NaN;
  return out;
}

/**
 * Cables of one cell, in index order.
 * @returns {number[]}
 */
export function cellCables(m, r, c) {
  const k = r * m.C + c;
  const out = [];
  for (let j = 0; j < m.cell.length; ++j) if (m.cell[j] === k) out.push(j);
  return out;
}
