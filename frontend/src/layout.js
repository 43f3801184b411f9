// Tiered layout of a fat tree (or Dragonfly+): pure, deterministic, in abstract units.
//
// x is in host slots (one slot per host, at least one per leaf); y is a row index, 0 for the top tier.
// Hosts sit under the leaf they are cabled to, each leaf centred over its hosts; spines and cores are spread
// evenly, ordered by the mean x of the nodes they connect to below. Switches with group >= 0 (Dragonfly+
// groups, scalable units) are laid out group by group, side by side, with a gap between groups. A SHARP
// Aggregation Node (a CA inside its switch, never a host) sits on its switch, in the switch's row.
//
// keepLayout lays out the next topology of the same fabric (a cable cut, a node gone or new, nodes listed in
// another order) keeping every node that was there before where it was, by node GUID: only new nodes are placed,
// each in the free slot of its row nearest to its neighbours.

const NONE = -1;

// What the layout needs of the cabling: the tier each node is drawn in, Aggregation Nodes' switches, hosts' leaves.
function structure(fabric) {
  const {n, L} = fabric;
  const {isHost, tier} = fabric.nodes;
  const isAN = fabric.nodes.isAggregation ?? new Uint8Array(n);
  const {a, b} = fabric.links;
  const tierOf = Int8Array.from(tier, (t, i) => (isHost[i] ? 0 : Math.max(1, t)));
  const switchOf = new Int32Array(n).fill(NONE); // an Aggregation Node's switch
  for (let c = 0; c < L; ++c) {
    if (isAN[a[c]] && !isHost[b[c]]) switchOf[a[c]] = b[c];
    else if (isAN[b[c]] && !isHost[a[c]]) switchOf[b[c]] = a[c];
  }
  for (let i = 0; i < n; ++i) if (switchOf[i] !== NONE) tierOf[i] = tierOf[switchOf[i]];

  // A host's leaf: the lowest-index tier-1 switch it is cabled to.
  const leafOf = new Int32Array(n).fill(NONE);
  const attach = (h, s) => {
    if (isHost[h] && !isAN[h] && tierOf[s] === 1 && (leafOf[h] === NONE || s < leafOf[h])) leafOf[h] = s;
  };
  for (let c = 0; c < L; ++c) attach(a[c], b[c]), attach(b[c], a[c]);
  const cableLeaf = new Int32Array(L).fill(NONE);
  for (let c = 0; c < L; ++c) {
    if (isHost[a[c]] && leafOf[a[c]] === b[c]) cableLeaf[c] = b[c];
    else if (isHost[b[c]] && leafOf[b[c]] === a[c]) cableLeaf[c] = a[c];
  }
  return {tierOf, switchOf, leafOf, cableLeaf};
}

// Row of each tier drawn: the tiers present, top (highest) first.
function rowsOf(tiers) {
  const present = [...tiers].sort((p, q) => q - p);
  const rowOf = new Int8Array(4);
  present.forEach((t, r) => (rowOf[t] = r));
  return {rows: present.length, rowOf};
}

/**
 * Lay out a decoded fabric.
 * @param {object} fabric from decodeSnapshot
 * @returns {object} {x, y: Float64Array(n), width, rows, tierOf: Int8Array(n) (tier drawn: 0 for hosts),
 *   leafOf: Int32Array(n) (a host's leaf, else -1), cableLeaf: Int32Array(L) (leaf of a host-to-its-leaf cable,
 *   else -1), leaves: Int32Array (tier-1 switches in x order), hostCount: Int32Array(n) (hosts under each leaf),
 *   spanStart, spanEnd: Float64Array(n) (x range of a leaf's hosts, NaN for other nodes), switchOf: Int32Array(n)
 *   (an Aggregation Node's switch, else -1), kept: 0 (nodes placed where a previous layout had them, see keepLayout)}
 */
export function layout(fabric) {
  const {n, L} = fabric;
  const {isHost, group} = fabric.nodes;
  const {a, b} = fabric.links;
  const {tierOf, switchOf, leafOf, cableLeaf} = structure(fabric);

  // Groups in ascending order (-1, no group, first); nodes of each group by tier, in index order.
  const hostsOf = new Map();
  const unattached = [];
  const groups = new Map();
  for (let i = 0; i < n; ++i) {
    if (switchOf[i] !== NONE) continue;
    if (isHost[i]) {
      if (leafOf[i] === NONE) unattached.push(i);
      else if (hostsOf.has(leafOf[i])) hostsOf.get(leafOf[i]).push(i);
      else hostsOf.set(leafOf[i], [i]);
      continue;
    }
    const g = group[i] >= 0 ? group[i] : NONE;
    if (!groups.has(g)) groups.set(g, [[], [], [], []]);
    groups.get(g)[tierOf[i]].push(i);
  }
  const order = [...groups.keys()].sort((p, q) => p - q);
  const ledGroups = order.filter((g) => groups.get(g)[1].length > 0);
  const leafWidth = (s) => Math.max(1, hostsOf.get(s)?.length ?? 0);
  const groupWidth = (g) => {
    const [, leaves, spines, cores] = groups.get(g);
    const hosts = leaves.reduce((sum, s) => sum + leafWidth(s), 0);
    return Math.max(hosts, spines.length, cores.length);
  };

  const x = new Float64Array(n);
  const spanStart = new Float64Array(n).fill(NaN);
  const spanEnd = new Float64Array(n).fill(NaN);
  const hostCount = new Int32Array(n);
  const groupSpan = new Map();
  const widths = ledGroups.map(groupWidth);
  const gap = ledGroups.length > 1 ? Math.max(1, Math.round((0.15 * widths.reduce((s, w) => s + w, 0)) / widths.length)) : 0;
  let cursor = 0;
  ledGroups.forEach((g, k) => {
    const leaves = groups.get(g)[1];
    const used = leaves.reduce((sum, s) => sum + leafWidth(s), 0);
    let at = cursor + (widths[k] - used) / 2;
    for (const s of leaves) {
      const hosts = hostsOf.get(s) ?? [];
      hosts.forEach((h, j) => (x[h] = at + j + 0.5));
      hostCount[s] = hosts.length;
      spanStart[s] = at;
      spanEnd[s] = at + leafWidth(s);
      x[s] = at + leafWidth(s) / 2;
      at += leafWidth(s);
    }
    groupSpan.set(g, [cursor, cursor + widths[k]]);
    cursor += widths[k] + gap;
  });
  if (unattached.length) {
    unattached.forEach((h, j) => (x[h] = cursor + j + 0.5));
    cursor += unattached.length;
  } else {
    cursor -= gap;
  }

  // Spines and cores: inside their group's span if it has leaves, else across the whole width.
  const global = [[], [], [], []];
  for (const g of order) {
    if (!groupSpan.has(g)) groups.get(g).forEach((nodes, t) => global[t].push(...nodes));
  }
  const width = Math.max(cursor, 1, global[2].length, global[3].length);
  for (const t of [2, 3]) {
    const sum = new Float64Array(n);
    const count = new Int32Array(n);
    for (let c = 0; c < L; ++c) {
      if (tierOf[a[c]] === t && tierOf[b[c]] < t) (sum[a[c]] += x[b[c]]), ++count[a[c]];
      if (tierOf[b[c]] === t && tierOf[a[c]] < t) (sum[b[c]] += x[a[c]]), ++count[b[c]];
    }
    const center = (i) => (count[i] ? sum[i] / count[i] : Infinity);
    const spread = (nodes, x0, x1) => {
      const sorted = [...nodes].sort((p, q) => center(p) - center(q) || p - q);
      const step = (x1 - x0) / sorted.length;
      sorted.forEach((i, j) => (x[i] = x0 + (j + 0.5) * step));
    };
    for (const [g, [x0, x1]] of groupSpan) spread(groups.get(g)[t], x0, x1);
    spread(global[t], 0, width);
  }

  for (let i = 0; i < n; ++i) if (switchOf[i] !== NONE) x[i] = x[switchOf[i]];
  const {rows, rowOf} = rowsOf(new Set(tierOf));
  const y = Float64Array.from(tierOf, (t) => rowOf[t]);
  const leaves = Int32Array.from(ledGroups.flatMap((g) => groups.get(g)[1]));
  return {x, y, width, rows, tierOf, leafOf, cableLeaf, leaves, hostCount, spanStart, spanEnd, switchOf, kept: 0};
}

/** A GUID that names one node (not a hidden host's "hidden", not empty). */
const usable = (guid) => typeof guid === "string" && guid !== "" && guid !== "hidden";
// What a node is known by across topologies: its GUID, else (a hidden host) its name, else nothing.
const keyOf = (guid, name) => (usable(guid) ? guid : typeof name === "string" && name ? `name:${name}` : null);

/**
 * Lay out the next topology of a fabric, keeping the places a previous layout gave its nodes, by node GUID.
 *
 * A node whose GUID was in the previous fabric, drawn in the same tier, keeps its x (a hidden host, whose GUID reads
 * "hidden", is known by its name and its leaf's GUID when the previous names are given); every other node is placed,
 * top tier first, in the free slot of its row (at least one unit from every other node of the row) nearest to its
 * neighbours: a host near its leaf, a switch near the mean of the nodes it is cabled to below (else above). The width never shrinks, so kept nodes stay where they were on screen
 * unless a new node needs room beyond the right edge. When fewer than half of the nodes were there before (another
 * fabric), or there is no previous layout, this is layout(fabric).
 * @param {object} fabric from decodeSnapshot
 * @param {{guids: string[], names?: string[], layout: object}|null} previous the previous fabric's node GUIDs (and
 *   names) and its layout (from layout or keepLayout)
 * @returns {object} as layout(fabric); kept: the number of nodes that kept their place
 */
export function keepLayout(fabric, previous) {
  if (!previous || !previous.layout) return layout(fabric);
  const {n, L} = fabric;
  const {guid, name, isHost, group} = fabric.nodes;
  const {a, b} = fabric.links;
  const {guids, names = [], layout: old} = previous;
  const {tierOf, switchOf, leafOf, cableLeaf} = structure(fabric);

  // Previous index per GUID (or hidden host's name); one listed twice names no node.
  const before = new Map();
  guids.forEach((g, j) => {
    const key = keyOf(g, names[j]);
    if (key !== null && (old.switchOf?.[j] ?? NONE) === NONE) before.set(key, before.has(key) ? NONE : j);
  });
  const x = new Float64Array(n).fill(NaN);
  let kept = 0;
  let placeable = 0;
  for (let i = 0; i < n; ++i) {
    if (switchOf[i] !== NONE) continue;
    ++placeable;
    const j = before.get(keyOf(guid[i], name[i]));
    if (j === undefined || j === NONE || old.tierOf[j] !== tierOf[i]) continue;
    // known by its name only (a hidden host): the same name must be under the same leaf
    if (!usable(guid[i]) && guids[old.leafOf[j]] !== guid[leafOf[i]]) continue;
    x[i] = old.x[j];
    ++kept;
  }
  if (2 * kept < placeable) return layout(fabric);

  // Kept x per row, sorted, to find free slots in.
  const taken = [[], [], [], []];
  for (let i = 0; i < n; ++i) if (switchOf[i] === NONE && x[i] === x[i]) taken[tierOf[i]].push(x[i]);
  taken.forEach((xs) => xs.sort((p, q) => p - q));
  let right = Math.max(old.width, ...taken.map((xs) => (xs.length ? xs[xs.length - 1] + 0.5 : 0)));

  // Neighbours of each new node, for the place it should be near.
  const fresh = [];
  for (let i = 0; i < n; ++i) if (switchOf[i] === NONE && x[i] !== x[i]) fresh.push(i);
  const wanted = new Set(fresh);
  const neighbours = new Map(fresh.map((i) => [i, []]));
  for (let c = 0; c < L; ++c) {
    if (wanted.has(a[c])) neighbours.get(a[c]).push(b[c]);
    if (wanted.has(b[c])) neighbours.get(b[c]).push(a[c]);
  }
  const mean = (nodes) => {
    let sum = 0;
    let count = 0;
    for (const j of nodes) if (x[j] === x[j]) (sum += x[j]), ++count;
    return count ? sum / count : NaN;
  };
  // Top tier first, so a new leaf is placed before its new hosts; in index order within a tier.
  fresh.sort((p, q) => tierOf[q] - tierOf[p] || p - q);
  for (const i of fresh) {
    const around = neighbours.get(i).filter((j) => switchOf[j] === NONE);
    let ideal = isHost[i] && leafOf[i] !== NONE ? x[leafOf[i]] : NaN;
    if (ideal !== ideal) ideal = mean(around.filter((j) => tierOf[j] < tierOf[i]));
    if (ideal !== ideal) ideal = mean(around.filter((j) => tierOf[j] > tierOf[i]));
    if (ideal !== ideal && group[i] >= 0) ideal = mean(fresh.filter((j) => group[j] === group[i] && !isHost[j]));
    if (ideal !== ideal) ideal = right + 0.5;
    const xs = taken[tierOf[i]];
    x[i] = freeSlot(xs, ideal);
    xs.splice(lowerBound(xs, x[i]), 0, x[i]);
    right = Math.max(right, x[i] + 0.5);
  }
  for (let i = 0; i < n; ++i) if (switchOf[i] !== NONE) x[i] = x[switchOf[i]];

  const tiers = new Set(tierOf);
  for (let j = 0; j < old.tierOf.length; ++j) tiers.add(old.tierOf[j]);
  const {rows, rowOf} = rowsOf(tiers);
  const y = Float64Array.from(tierOf, (t) => rowOf[t]);
  const hostCount = new Int32Array(n);
  const spanStart = new Float64Array(n).fill(NaN);
  const spanEnd = new Float64Array(n).fill(NaN);
  const leafList = [];
  for (let i = 0; i < n; ++i) {
    if (switchOf[i] !== NONE || isHost[i] || tierOf[i] !== 1) continue;
    leafList.push(i);
    spanStart[i] = x[i] - 0.5;
    spanEnd[i] = x[i] + 0.5;
  }
  const spanned = new Uint8Array(n);
  for (let h = 0; h < n; ++h) {
    const s = leafOf[h];
    if (s === NONE || switchOf[h] !== NONE) continue;
    ++hostCount[s];
    spanStart[s] = spanned[s] ? Math.min(spanStart[s], x[h] - 0.5) : x[h] - 0.5;
    spanEnd[s] = spanned[s] ? Math.max(spanEnd[s], x[h] + 0.5) : x[h] + 0.5;
    spanned[s] = 1;
  }
  leafList.sort((p, q) => x[p] - x[q] || p - q);
  return {x, y, width: right, rows, tierOf, leafOf, cableLeaf, leaves: Int32Array.from(leafList), hostCount,
    spanStart, spanEnd, switchOf, kept};
}

/**
 * First index of sorted `xs` whose value is >= `v`.
 * @param {ArrayLike<number>} xs sorted ascending
 * @param {number} v
 * @returns {number}
 */
export function lowerBound(xs, v) {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The position nearest to `ideal` (and at least 0.5) that is at least one unit from every value of `xs`.
 * @param {number[]} xs sorted positions taken in a row
 * @param {number} ideal where the node would best be
 * @returns {number}
 */
export function freeSlot(xs, ideal) {
  const p = Math.max(0.5, ideal);
  const r = lowerBound(xs, p);
  if ((r === xs.length || xs[r] - p >= 1) && (r === 0 || p - xs[r - 1] >= 1)) return p;
  let after = Infinity; // first free place right of p: one unit past a taken one, with a unit to spare before the next
  for (let j = lowerBound(xs, p - 1); j < xs.length; ++j) {
    const c = xs[j] + 1;
    if (c >= p && (j + 1 === xs.length || xs[j + 1] - c >= 1)) {
      after = c;
      break;
    }
  }
  let before = -Infinity; // the same leftwards, not below 0.5
  for (let j = Math.min(xs.length, lowerBound(xs, p + 1 + 1e-12)) - 1; j >= 0; --j) {
    const c = xs[j] - 1;
    if (c < 0.5 || p - c >= after - p) break;
    if (c <= p && (j === 0 || c - xs[j - 1] >= 1)) {
      before = c;
      break;
    }
  }
  return p - before <= after - p ? before : after;
}
