// Synthetic fabrics and frames in the feed protocol's shape (docs/feed-protocol.md), for tests and fake-feed.mjs.

const hex = (i) => "0x" + (0x0002c90300000000n + BigInt(i)).toString(16).padStart(16, "0");

/**
 * A fat tree (2 tiers, or 3 with cores and pods) or a Dragonfly+ fabric, as a snapshot's topology.
 * Leaves connect to every spine of their pod; spine j of each pod connects to the cores k with k % spinesPerPod ==
 * j % spinesPerPod. With dragonfly, pods are groups (switch `group` >= 0) and spine j of each group connects to
 * spine j of every other group.
 * @returns {object} {fabric, topology} as in a snapshot message
 */
export function synthetic({pods = 1, leavesPerPod = 4, spinesPerPod = 2, hostsPerLeaf = 4, cores = 0, dragonfly = false,
  slug = "demo"} = {}) {
  const nodes = {kind: [], name: [], guid: [], lid: [], nports: [], role: [], tier: [], group: []};
  const links = {a_node: [], a_port: [], b_node: [], b_port: [], width: [], speed: [], capacity_gbps: [], length_m: []};
  const nextPort = [];
  const addNode = (kind, name, tier, group) => {
    const i = nodes.kind.length;
    Object.entries({kind, name, guid: hex(i), lid: i + 1, nports: kind === "host" ? 1 : 64,
      role: kind === "host" ? "gpu" : "switch", tier, group}).forEach(([k, v]) => nodes[k].push(v));
    nextPort.push(1);
    return i;
  };
  const cable = (p, q, length) => {
    Object.entries({a_node: p, a_port: nextPort[p]++, b_node: q, b_port: nextPort[q]++, width: 4, speed: "NDR",
      capacity_gbps: 400, length_m: length}).forEach(([k, v]) => links[k].push(v));
  };
  const pad = (i, w) => String(i).padStart(w, "0");
  const coreIds = Array.from({length: cores}, (_, k) => addNode("switch", `core${pad(k + 1, 2)}`, 3, -1));
  const spineIds = [];
  const leafIds = [];
  for (let p = 0; p < pods; ++p) {
    const group = dragonfly ? p : -1;
    spineIds.push(Array.from({length: spinesPerPod}, (_, j) => addNode("switch", `spine${p}-${pad(j + 1, 2)}`, 2, group)));
    leafIds.push(Array.from({length: leavesPerPod}, (_, j) => addNode("switch", `leaf${p}-${pad(j + 1, 3)}`, 1, group)));
  }
  let h = 0;
  for (let p = 0; p < pods; ++p) {
    for (const leaf of leafIds[p]) {
      for (let j = 0; j < hostsPerLeaf; ++j) cable(addNode("host", `gpu-${pad(++h, 5)}`, 0, p), leaf, 3);
      for (const spine of spineIds[p]) cable(leaf, spine, 30);
    }
    spineIds[p].forEach((spine, j) => {
      coreIds.forEach((core, k) => k % spinesPerPod === j % spinesPerPod && cable(spine, core, 50));
      if (dragonfly) for (let q = p + 1; q < pods; ++q) cable(spine, spineIds[q][j], 100);
    });
  }
  return {
    fabric: {slug, name: slug[0].toUpperCase() + slug.slice(1), mode: "emulated", tick_s: 1.0},
    topology: {format: "ibweb-fabric", version: 1, name: slug, nodes, links},
  };
}

/**
 * A frame for a synthetic fabric: utilization moves with seq; a few directed links exceed capacity.
 * @returns {object} frame message
 */
export function syntheticFrame({topology}, seq, t = 1796212800 + seq) {
  const {links, nodes} = topology;
  const L = links.a_node.length;
  const rate = new Array(2 * L);
  const util = new Array(2 * L);
  let throughput = 0;
  let hottest = 0;
  for (let d = 0; d < 2 * L; ++d) {
    const c = d % L;
    const wave = 0.5 + 0.5 * Math.sin(c * 0.37 + d * 0.011 + seq * 0.6);
    util[d] = (c + seq) % 97 === 0 ? 1.15 : Math.round(wave * wave * 1000) / 1000;
    rate[d] = util[d] * links.capacity_gbps[c];
    if (nodes.kind[d < L ? links.a_node[c] : links.b_node[c]] === "host") throughput += rate[d];
    if (util[d] > util[hottest]) hottest = d;
  }
  const hosts = nodes.kind.filter((k) => k === "host").length;
  return {
    v: 1, type: "frame", seq, t, tick_s: 1.0, rate, util,
    totals: {hosts, switches: nodes.kind.length - hosts, links: L, throughput_gbps: throughput,
      hottest: {link: hottest, util: util[hottest]}},
    jobs: [], alerts: [],
  };
}

/**
 * A snapshot message for a synthetic fabric, with its newest frame.
 * @returns {object} snapshot message
 */
export function syntheticSnapshot(fab, seq) {
  return {v: 1, type: "snapshot", seq, ...fab, frame: syntheticFrame(fab, seq)};
}
