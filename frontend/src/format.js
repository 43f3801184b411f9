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

const BYTE_UNITS = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];

/**
 * A byte count in decimal (SI) units with three significant digits.
 * @param {number} bytes
 * @returns {string} e.g. "980 GB", "4.16 TB", "512 B"; "–" when not a finite number
 */
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return "–";
  let i = bytes >= 1000 || bytes <= -1000 ? Math.min(BYTE_UNITS.length - 1, Math.floor(Math.log10(Math.abs(bytes)) / 3)) : 0;
  let value = Number((bytes / 1000 ** i).toPrecision(3));
  if (Math.abs(value) >= 1000 && i < BYTE_UNITS.length - 1) value = Number((value / 1000).toPrecision(3)), ++i;
  return i === 0 ? `${Math.round(bytes)} B` : `${value} ${BYTE_UNITS[i]}`;
}

/**
 * A duration: milliseconds below 1 s, seconds below a minute, then minutes and hours.
 * @param {number|null} s seconds
 * @returns {string} e.g. "337 ms", "3.1 s", "42 s", "2 min 05 s", "1 h 02 min"; "–" when unknown
 */
export function formatDuration(s) {
  if (s == null || !Number.isFinite(s) || s < 0) return "–";
  if (s < 1) return `${Number((s * 1000).toPrecision(3))} ms`;
  if (s < 10) return `${fixed1(s)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const total = Math.round(s);
  const two = (x) => String(x).padStart(2, "0");
  if (total < 3600) return `${Math.floor(total / 60)} min ${two(total % 60)} s`;
  const minutes = Math.round(s / 60);
  return `${Math.floor(minutes / 60)} h ${two(minutes % 60)} min`;
}

/**
 * GPU time: what a synchronous stall costs, duration x GPUs.
 * @param {number|null} gpuS GPU-seconds
 * @returns {string} e.g. "784 GPU·s", "2.5 GPU·h"; "–" when unknown
 */
export function formatGpuTime(gpuS) {
  if (gpuS == null || !Number.isFinite(gpuS) || gpuS < 0) return "–";
  return gpuS < 3600 ? `${Number(gpuS.toPrecision(3))} GPU·s` : `${Number((gpuS / 3600).toPrecision(3))} GPU·h`;
}

/**
 * A speed-up factor.
 * @param {number|null} x e.g. 1.885
 * @returns {string} "×1.89"; "–" when unknown
 */
export function formatSpeedup(x) {
  return x == null || !Number.isFinite(x) ? "–" : `×${fixed2(x)}`;
}
