// Tiered layout of a fat tree (or Dragonfly+): pure, deterministic, in abstract units.
//
// x is in host slots (one slot per host, at least one per leaf); y is a row index, 0 for the top tier.
// Hosts sit under the leaf they are cabled to, each leaf centred over its hosts; spines and cores are spread
// evenly, ordered by the mean x of the nodes they connect to below. Switches with group >= 0 (Dragonfly+
// groups, scalable units) are laid out group by group, side by side, with a gap between groups. A SHARP
// Aggregation Node (a CA inside its switch, never a host) sits on its switch, in the switch's row.

const NONE = -1;

/**
 * Lay out a decoded fabric.
 * @param {object} fabric from decodeSnapshot
 * @returns {object} {x, y: Float64Array(n), width, rows, tierOf: Int8Array(n) (tier drawn: 0 for hosts),
 *   leafOf: Int32Array(n) (a host's leaf, else -1), cableLeaf: Int32Array(L) (leaf of a host-to-its-leaf cable,
 *   else -1), leaves: Int32Array (tier-1 switches in x order), hostCount: Int32Array(n) (hosts under each leaf),
 *   spanStart, spanEnd: Float64Array(n) (x range of a leaf's hosts, NaN for other nodes)}
 */
export function layout(fabric) {
  const {n, L} = fabric;
  const {isHost, tier, group} = fabric.nodes;
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
  const present = [...new Set(tierOf)].sort((p, q) => q - p);
  const rowOf = new Int8Array(4);
  present.forEach((t, r) => (rowOf[t] = r));
  const y = Float64Array.from(tierOf, (t) => rowOf[t]);
  const leaves = Int32Array.from(ledGroups.flatMap((g) => groups.get(g)[1]));
  return {x, y, width, rows: present.length, tierOf, leafOf, cableLeaf, leaves, hostCount, spanStart, spanEnd};
}
