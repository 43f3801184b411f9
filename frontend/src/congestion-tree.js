// The congestion tree of a frame (docs/feed-protocol.md, `congestion_tree`): with the credit flow control model, the
// directed links where congestion trees start (roots: saturated, holding back the buffers that feed them) and those
// held back by credits (their branches, where victims wait); with congestion control, the ports that mark FECN; and
// whether the model settled this tick. Checked, and turned into the cables the map draws. Pure.
import {fail} from "./feed-error.js";

/** Colour of a congestion root's cable on the map and in the legend. */
export const ROOT_COLOR = "#ff8c1a";
/** Colour of a held-back cable (dashed) on the map and in the legend. */
export const HELD_COLOR = "#b48cff";
/** Dashes of a held-back cable. */
export const HELD_DASH = [3, 3];
/** The legend's keys: [label, colour, dashed]. */
export const TREE_KEYS = [["congestion root", ROOT_COLOR, false], ["held back (victim)", HELD_COLOR, true]];

const isLinks = (x, n) => Array.isArray(x) && x.every((d) => Number.isInteger(d) && d >= 0 && d < n);

/**
 * Check a frame's `congestion_tree` section and give its cables.
 * @param {object|null|undefined} section the frame's `congestion_tree`
 * @param {number} L the fabric's cables (directed links d and d + L are cable d's two directions)
 * @returns {{model: string, roots: Int32Array, held: Int32Array, marking: Int32Array, converged: boolean,
 *   iterations: number|null, averaged: number}|null} the cables of the roots, and the held cables that are not roots
 *   (a cable held one way and a root the other is drawn as a root), in cable order; the cables whose ports mark FECN
 *   (congestion control; empty without it); whether the model settled (true when the engine does not say), its
 *   iterations and how many of them its rates are the mean of (0: its last); null when absent (max-min: no
 *   congestion tree is modelled)
 * @throws {FeedFormatError} naming the field that does not follow the protocol
 */
export function decodeCongestionTree(section, L) {
  if (section == null) return null;
  if (typeof section !== "object" || Array.isArray(section)) fail("frame.congestion_tree: expected an object");
  if (typeof section.model !== "string") fail("frame.congestion_tree.model: expected a string");
  for (const key of ["roots", "held"]) {
    if (!isLinks(section[key], 2 * L)) fail(`frame.congestion_tree.${key}: expected directed link indices 0..${2 * L - 1}`);
  }
  if (section.marking !== undefined && !isLinks(section.marking, 2 * L)) {
    fail(`frame.congestion_tree.marking: expected directed link indices 0..${2 * L - 1}`);
  }
  if (section.converged !== undefined && typeof section.converged !== "boolean") {
    fail("frame.congestion_tree.converged: expected a boolean");
  }
  for (const key of ["iterations", "averaged"]) {
    if (section[key] !== undefined && !(Number.isInteger(section[key]) && section[key] >= 0)) {
      fail(`frame.congestion_tree.${key}: expected a count`);
    }
  }
  const cable = (d) => (d < L ? d : d - L);
  const roots = new Set(section.roots.map(cable));
  const held = new Set(section.held.map(cable).filter((c) => !roots.has(c)));
  const sorted = (s) => Int32Array.from([...s].sort((a, b) => a - b));
  return {model: section.model, roots: sorted(roots), held: sorted(held),
    marking: sorted(new Set((section.marking ?? []).map(cable))), converged: section.converged ?? true,
    iterations: section.iterations ?? null, averaged: section.averaged ?? 0};
}

const has = (sorted, c) => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo] === c;
};

/**
 * The tooltip line of cable c in a tree: "" when it is neither a root nor held back (or there is no tree).
 * @param {object|null} tree from decodeCongestionTree
 * @param {number} c cable
 * @returns {string}
 */
export function treeLine(tree, c) {
  if (!tree) return "";
  const marks = tree.marking && has(tree.marking, c) ? "; its port marks FECN (congestion control)" : "";
  if (has(tree.roots, c)) return `congestion root: saturated, holding back the buffers that feed it${marks}`;
  if (has(tree.held, c)) return `held back by credits: a branch of a congestion tree (victims wait here)${marks}`;
  return marks ? marks.slice(2) : "";
}

/**
 * What the map's description says of a tree: "" without one.
 * @param {object|null} tree from decodeCongestionTree
 * @returns {string}
 */
export function treeSummary(tree) {
  if (!tree) return "";
  const n = (k, one, many) => `${k} ${k === 1 ? one : many}`;
  const marking = tree.marking?.length ? ` Congestion control: ${n(tree.marking.length, "cable", "cables")} ` +
    "marking FECN." : "";
  const rates = tree.averaged > 1 ? `the mean of its last ${tree.averaged} iterates` : "its last iterate";
  const unsettled = tree.converged === false ? ` The model did not settle this tick (${tree.iterations ?? "?"} ` +
    `iterations): its rates are ${rates}.` : "";
  return ` Credit flow control: ${n(tree.roots.length, "congestion root", "congestion roots")}, ` +
    `${n(tree.held.length, "cable", "cables")} held back.${marking}${unsettled}`;
}
