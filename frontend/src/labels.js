// Which nodes of the map get a name label: pure, computed on a snapshot (labelIndex) and on zoom, pan or resize
// (visibleLabels), never per frame.
//
// A node is labelled when its label fits between it and its nearest neighbour in its row at the zoom shown, when it is
// on screen, and while fewer than `cap` labels are shown (top tier first: cores, spines, leaves, then hosts). Each
// row keeps its nodes in x order with the zoom each label needs, so a zoom costs a binary search and a walk over
// the nodes on screen of the rows whose labels can fit at all.

import {lowerBound} from "./layout.js";

/** Space kept between two labels of a row, px. */
export const LABEL_PAD = 4;

/**
 * The width of each node's name in px, from a per-character width (measured once per distinct character).
 * @param {string[]} names node names
 * @param {(ch: string) => number} charWidth width of one character in the label font, px
 * @returns {Float64Array} px per node
 */
export function labelWidths(names, charWidth) {
  const cache = new Map();
  return Float64Array.from(names, (name) => {
    let w = 0;
    for (const ch of name) {
      let cw = cache.get(ch);
      if (cw === undefined) cache.set(ch, (cw = charWidth(ch)));
      w += cw;
    }
    return w;
  });
}

/**
 * What labelling needs of a layout, per row: its nodes in x order and the scale (screen px per layout unit) from which
 * each node's label fits, its width plus LABEL_PAD over the distance to its nearest neighbour in the row.
 * Aggregation Nodes (drawn on their switch) get no label.
 * @param {object} lay from layout or keepLayout (x, tierOf, switchOf)
 * @param {ArrayLike<number>} widths label width per node, px (labelWidths)
 * @returns {{rows: Array<{tier: number, nodes: Int32Array, x: Float64Array, need: Float64Array, least: number,
 *   most: number}>}} rows top tier first, none empty; `least` and `most` are the smallest and the largest finite need
 *   of the row (the scale from which one label, and every label, of the row fits)
 */
export function labelIndex(lay, widths) {
  const n = lay.x.length;
  const rows = [];
  for (const tier of [3, 2, 1, 0]) {
    const ids = [];
    for (let i = 0; i < n; ++i) if (lay.tierOf[i] === tier && !(lay.switchOf?.[i] >= 0)) ids.push(i);
    ids.sort((p, q) => lay.x[p] - lay.x[q] || p - q);
    const nodes = Int32Array.from(ids);
    const x = Float64Array.from(ids, (i) => lay.x[i]);
    const need = new Float64Array(ids.length);
    let least = Infinity;
    let most = 0;
    for (let j = 0; j < ids.length; ++j) {
      const room = Math.min(j > 0 ? x[j] - x[j - 1] : Infinity, j + 1 < ids.length ? x[j + 1] - x[j] : Infinity);
      need[j] = room === Infinity ? 0 : room > 0 ? (widths[ids[j]] + LABEL_PAD) / room : Infinity;
      least = Math.min(least, need[j]);
      if (need[j] < Infinity) most = Math.max(most, need[j]);
    }
    if (ids.length) rows.push({tier, nodes, x, need, least, most});
  }
  return {rows};
}

/**
 * The nodes to label in a view: on screen, their label fitting at its scale, at most `cap`, top tier first.
 * @param {object} index from labelIndex
 * @param {{scale: number, x0: number, x1: number, hosts?: boolean}} view screen px per layout unit; the layout x
 *   range on screen; whether hosts may be labelled (not while they are drawn aggregated per leaf)
 * @param {number} cap most labels
 * @returns {Int32Array} node indices, row by row, in x order
 */
export function visibleLabels(index, {scale, x0, x1, hosts = true}, cap) {
  const out = [];
  for (const row of index.rows) {
    if (out.length >= cap) break;
    if ((row.tier === 0 && !hosts) || row.least > scale) continue;
    const end = lowerBound(row.x, x1 + 1e-9);
    for (let j = lowerBound(row.x, x0 - 1e-9); j < end && out.length < cap; ++j) {
      if (row.need[j] <= scale) out.push(row.nodes[j]);
    }
  }
  return Int32Array.from(out);
}
