// Text for numbers, nodes and links: shared by the tooltip and the panels. Pure.
import {format} from "d3";

const fixed1 = format(".1f");
const fixed2 = format(".2f");
const waitCount = format(".3~s");

/**
 * A throughput in Gb/s, in Tb/s from 1000 Gb/s on.
 * @param {number} gbps
 * @returns {string} e.g. "812.5 Gb/s", "81.23 Tb/s"
 */
export function formatRate(gbps) {
  return gbps >= 1000 ? `${fixed2(gbps / 1000)} Tb/s` : `${fixed1(gbps)} Gb/s`;
}

/**
 * A utilization as a whole percentage; above 100% (offered load above capacity) is kept.
 * @param {number} u rate / capacity
 * @returns {string} e.g. "98%"
 */
export function formatUtil(u) {
  return `${Math.round(u * 100)}%`;
}

/**
 * Endpoints of directed link d: d < L runs a -> b on cable d, d >= L is the reverse of cable d - L.
 * @param {object} fabric from decodeSnapshot
 * @param {number} d directed link index, 0 <= d < 2L
 * @returns {{cable: number, from: number, fromPort: number, to: number, toPort: number}}
 */
export function directedEnds(fabric, d) {
  const {a, b, aPort, bPort} = fabric.links;
  const c = d % fabric.L;
  return d < fabric.L
    ? {cable: c, from: a[c], fromPort: aPort[c], to: b[c], toPort: bPort[c]}
    : {cable: c, from: b[c], fromPort: bPort[c], to: a[c], toPort: aPort[c]};
}

/**
 * One line naming directed link d by its endpoints and ports.
 * @returns {string} e.g. "gpu-0001:1 → leaf01:17"
 */
export function directedLabel(fabric, d) {
  const {from, fromPort, to, toPort} = directedEnds(fabric, d);
  const {name} = fabric.nodes;
  return `${name[from]}:${fromPort} → ${name[to]}:${toPort}`;
}

/**
 * Tooltip lines for cable c: endpoints with GUIDs and ports, speed, and both directions' rate and utilization.
 * @param {object} fabric from decodeSnapshot
 * @param {object} frame buffers from frameBuffers, decoded
 * @param {number} c cable index
 * @returns {string[]}
 */
export function cableLines(fabric, frame, c) {
  const {name, guid} = fabric.nodes;
  const {a, b, aPort, bPort, width, speed, capacity, length} = fabric.links;
  const L = fabric.L;
  const extra = (d) => (frame.has?.offered && frame.offered[d] > frame.rate[d] * 1.001 ? `  offered ${formatRate(frame.offered[d])}` : "")
    + (frame.has?.xmitWait ? `  XmitWait ${waitCount(frame.xmitWait[d])}` : "");
  const direction = (d) => `${directedLabel(fabric, d)}  ${formatRate(frame.rate[d])}  ${formatUtil(frame.util[d])}${extra(d)}`;
  const lines = [
    `${name[a[c]]} port ${aPort[c]} ⇄ ${name[b[c]]} port ${bPort[c]}`,
    `GUID ${guid[a[c]]} ⇄ ${guid[b[c]]}`,
    `${width[c]}x ${speed[c]}, ${formatRate(capacity[c])}, ${length[c]} m`,
    direction(c),
    direction(c + L),
  ];
  if (frame.cableUtil[c] > 1) lines.push("congested: offered load above capacity");
  return lines;
}

/**
 * Tooltip lines for node i.
 * @returns {string[]}
 */
export function nodeLines(fabric, i) {
  const {kind, name, guid, lid, nports, role, tier} = fabric.nodes;
  return [`${name[i]} (${kind[i] === "host" ? role[i] : `switch, tier ${tier[i]}`})`, `GUID ${guid[i]}, LID ${lid[i]}`,
    `${nports[i]} ports`];
}
