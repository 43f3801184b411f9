// Feed messages (docs/feed-protocol.md, versions 1 and 2) to typed arrays. Pure: no DOM, no I/O.
import {unzlibSync} from "fflate";
import {decodeCongestionTree} from "./congestion-tree.js";
import {fail} from "./feed-error.js";
import {decodeTwin} from "./twin-section.js";

/** Protocol version of the JSON messages (snapshot, progress, v1 frames). */
export const VERSION = 1;
/** Protocol version of binary frames. */
export const VERSION_BINARY = 2;

// A frame must carry seq; a snapshot may leave it out (its frame carries one).
function header(msg, type) {
  if (msg === null || typeof msg !== "object") fail(`${type}: expected an object, got ${msg === null ? "null" : typeof msg}`);
  if (msg.v !== VERSION) fail(`${type}: unsupported protocol version ${JSON.stringify(msg.v)}, expected ${VERSION}`);
  if (msg.type !== type) fail(`${type}: wrong message type ${JSON.stringify(msg.type)}`);
  if (!Number.isInteger(msg.seq) && (type === "frame" || msg.seq !== undefined)) {
    fail(`${type}: seq must be an integer, got ${JSON.stringify(msg.seq)}`);
  }
}

function column(table, key, n, what, check) {
  const values = table[key];
  if (!Array.isArray(values)) fail(`${what}.${key}: expected an array`);
  if (values.length !== n) fail(`${what}.${key}: expected ${n} values, got ${values.length}`);
  for (let i = 0; i < n; ++i) {
    if (!check(values[i])) fail(`${what}.${key}[${i}]: invalid value ${JSON.stringify(values[i])}`);
  }
  return values;
}

// The optional `trained_down` column (booleans, present only when a cable is) as the indices of its true entries.
function trainedDownCables(links, L) {
  if (links.trained_down === undefined) return new Int32Array(0);
  const flags = column(links, "trained_down", L, "snapshot.topology.links", (x) => typeof x === "boolean");
  return Int32Array.from(flags.flatMap((x, c) => (x ? [c] : [])));
}

const isNumber = (x) => typeof x === "number" && Number.isFinite(x);
const isString = (x) => typeof x === "string";

/**
 * Decode a `snapshot` message's fabric and topology (its `frame`, if any, goes to decodeFrame).
 * @param {object} msg parsed snapshot message
 * @returns {object} fabric: {slug, name, mode, tickS, seq (-1 if absent), n, L, nodes: {kind, name, guid, role: string[],
 *   isHost: Uint8Array(n), isAggregation: Uint8Array(n) (SHARP Aggregation Nodes: CAs that are part of a switch),
 *   lid, nports, group: Int32Array(n), tier: Int8Array(n)}, links: {a, b, aPort, bPort:
 *   Int32Array(L), width: Uint8Array(L), speed: string[], capacity, length: Float32Array(L), trainedDown: Int32Array
 *   (indices of the cables whose ends printed different rates, from the optional `trained_down` column)}}
 * @throws {FeedFormatError} when the message does not follow the protocol
 */
export function decodeSnapshot(msg) {
  header(msg, "snapshot");
  const {fabric = {}, topology} = msg;
  if (topology === null || typeof topology !== "object") fail("snapshot.topology: expected an object");
  const {nodes, links} = topology;
  if (!nodes || !Array.isArray(nodes.kind)) fail("snapshot.topology.nodes.kind: expected an array");
  if (!links || !Array.isArray(links.a_node)) fail("snapshot.topology.links.a_node: expected an array");
  const n = nodes.kind.length;
  const L = links.a_node.length;
  const node = (key, check) => column(nodes, key, n, "snapshot.topology.nodes", check);
  const link = (key, check) => column(links, key, L, "snapshot.topology.links", check);
  const isIndex = (x) => Number.isInteger(x) && x >= 0 && x < n;
  const kind = node("kind", (x) => x === "host" || x === "switch");
  const tickS = fabric.tick_s ?? 1;
  if (!isNumber(tickS) || tickS <= 0) fail(`snapshot.fabric.tick_s: expected a positive number, got ${tickS}`);
  return {
    slug: String(fabric.slug ?? ""),
    name: String(fabric.name ?? topology.name ?? ""),
    mode: String(fabric.mode ?? ""),
    tickS,
    seq: msg.seq ?? -1,
    n,
    L,
    nodes: {
      kind,
      isHost: Uint8Array.from(kind, (k) => k === "host"),
      name: node("name", isString),
      guid: node("guid", isString),
      role: node("role", isString),
      isAggregation: Uint8Array.from(nodes.role ?? [], (r) => r === "aggregation"),
      lid: Int32Array.from(node("lid", Number.isInteger)),
      nports: Int32Array.from(node("nports", Number.isInteger)),
      tier: Int8Array.from(node("tier", (x) => Number.isInteger(x) && x >= 0 && x <= 3)),
      group: Int32Array.from(node("group", Number.isInteger)),
    },
    links: {
      a: Int32Array.from(link("a_node", isIndex)),
      b: Int32Array.from(link("b_node", isIndex)),
      aPort: Int32Array.from(link("a_port", Number.isInteger)),
      bPort: Int32Array.from(link("b_port", Number.isInteger)),
      width: Uint8Array.from(link("width", Number.isInteger)),
      speed: link("speed", isString),
      capacity: Float32Array.from(link("capacity_gbps", isNumber)),
      length: Float32Array.from(link("length_m", isNumber)),
      trainedDown: trainedDownCables(links, L),
    },
  };
}

/**
 * Preallocate the buffers one fabric's frames are decoded into.
 * @param {number} L number of cables
 * @returns {object} {seq, t, tickS, rate, util, offered, xmitWait: Float32Array(2L), cableUtil: Float32Array(L),
 *   has: {offered, xmitWait} (whether the last frame carried them), totals, jobs, alerts, hotspots,
 *   sharp, storage, twin, congestionTree (the frame's sections, checked by decodeSharp, decodeStorage, decodeTwin and
 *   decodeCongestionTree; null when absent)}
 */
export function frameBuffers(L) {
  return {
    seq: -1,
    t: NaN,
    tickS: NaN,
    rate: new Float32Array(2 * L),
    util: new Float32Array(2 * L),
    offered: new Float32Array(2 * L),
    xmitWait: new Float32Array(2 * L),
    has: {offered: false, xmitWait: false},
    cableUtil: new Float32Array(L),
    totals: null,
    jobs: [],
    alerts: [],
    hotspots: [],
    sharp: null,
    storage: null,
    twin: null,
    congestionTree: null,
  };
}

/** Optional per-link arrays of a frame: feed key -> buffer key. */
export const OPTIONAL_LINK_ARRAYS = {offered: "offered", xmit_wait: "xmitWait"};

// An optional per-link array: absent is fine; present, it must have 2L finite numbers (checked after a bulk copy).
function optional(msg, key, n, scratch) {
  const values = msg[key];
  if (values == null) return false;
  if (!Array.isArray(values) || values.length !== n) fail(`frame.${key}: expected ${n} values`);
  scratch.set(values);
  for (let i = 0; i < n; ++i) {
    if (!(scratch[i] === scratch[i]) || typeof values[i] !== "number") fail(`frame.${key}[${i}]: invalid value ${JSON.stringify(values[i])}`);
  }
  return true;
}

/**
 * Decode a `frame` message into preallocated buffers; nothing is written unless the whole frame is valid.
 * cableUtil[c] is the larger utilization of cable c's two directions (directed links c and c + L).
 * @param {object} msg parsed frame message
 * @param {number} L number of cables of the fabric the frame belongs to
 * @param {object} out buffers from frameBuffers(L)
 * @returns {object} out
 * @throws {FeedFormatError} when the message does not follow the protocol or does not fit the fabric
 */
export function decodeFrame(msg, L, out) {
  header(msg, "frame");
  const rate = column(msg, "rate", 2 * L, "frame", isNumber);
  const util = column(msg, "util", 2 * L, "frame", isNumber);
  const sections = frameSections(msg, L);
  const scratch = (out.scratch ??= {});
  const present = {};
  for (const [key, name] of Object.entries(OPTIONAL_LINK_ARRAYS)) {
    present[name] = optional(msg, key, 2 * L, (scratch[name] ??= new Float32Array(2 * L)));
  }
  out.rate.set(rate);
  out.util.set(util);
  return install(msg, sections, present, out, L);
}

// The frame's small sections, checked (sharp, storage, twin, congestion tree, totals) before anything is written.
function frameSections(msg, L) {
  if (msg.totals != null && typeof msg.totals !== "object") fail("frame.totals: expected an object");
  return {sharp: decodeSharp(msg.sharp), storage: decodeStorage(msg.storage), twin: decodeTwin(msg.twin, L),
    congestionTree: decodeCongestionTree(msg.congestion_tree, L)};
}

// Write a checked frame into `out`: header fields, sections, cable utilization, optional arrays from scratch.
function install(msg, sections, present, out, L) {
  out.seq = msg.seq;
  out.t = msg.t;
  out.tickS = msg.tick_s;
  const u = out.util;
  for (let c = 0; c < L; ++c) out.cableUtil[c] = u[c] >= u[c + L] ? u[c] : u[c + L];
  out.totals = msg.totals ?? null;
  out.jobs = Array.isArray(msg.jobs) ? msg.jobs : [];
  out.alerts = Array.isArray(msg.alerts) ? msg.alerts : [];
  out.hotspots = Array.isArray(msg.hotspots) ? msg.hotspots : [];
  out.sharp = sections.sharp;
  out.storage = sections.storage;
  out.twin = sections.twin;
  out.congestionTree = sections.congestionTree;
  for (const name of Object.values(OPTIONAL_LINK_ARRAYS)) {
    out.has[name] = present[name];
    if (present[name]) out[name].set(out.scratch[name]);
    else out[name].fill(0);
  }
  return out;
}

// ------------------------------------------------------------------ version 2: binary frames
const MAGIC = [0x49, 0x42, 0x57, 0x32]; // "IBW2"
const textDecoder = new TextDecoder();
// Restored values of every uint16 code, per (codec, scale): a log2 array costs one table look-up per link.
const tables = new Map();

function restoreTable(codec, scale, dtype) {
  const key = `${codec}:${scale}:${dtype}`;
  let t = tables.get(key);
  if (!t) {
    t = new Float32Array(dtype === "uint8" ? 256 : 65536);
    for (let q = 0; q < t.length; ++q) t[q] = codec === "linear" ? q * scale : 2 ** (q * scale) - 1;
    tables.set(key, t);
  }
  return t;
}

/**
 * Split a binary (v2) frame into its JSON header and its array bytes; checks the envelope only.
 * @param {ArrayBuffer|Uint8Array} data the websocket message
 * @returns {{header: object, body: Uint8Array}} header with "v": 2, type, seq, arrays; body after the header
 * @throws {FeedFormatError}
 */
export function readBinaryFrame(data) {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  if (bytes.length < 8 || MAGIC.some((b, i) => bytes[i] !== b)) fail("binary frame: it does not start with IBW2");
  const size = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(4, true);
  if (8 + size > bytes.length) fail(`binary frame: header of ${size} bytes runs past the message of ${bytes.length}`);
  let msg;
  try {
    msg = JSON.parse(textDecoder.decode(bytes.subarray(8, 8 + size)));
  } catch (error) {
    fail(`binary frame: header is not JSON: ${error.message}`);
  }
  if (msg === null || typeof msg !== "object" || msg.v !== VERSION_BINARY) {
    fail(`binary frame: unsupported protocol version ${JSON.stringify(msg?.v)}, expected ${VERSION_BINARY}`);
  }
  if (msg.type !== "frame") fail(`binary frame: wrong message type ${JSON.stringify(msg.type)}`);
  if (!Number.isInteger(msg.seq)) fail(`binary frame: seq must be an integer, got ${JSON.stringify(msg.seq)}`);
  if (!Array.isArray(msg.arrays)) fail("binary frame: arrays: expected an array");
  return {header: msg, body: bytes.subarray(8 + size)};
}

// One array of a binary frame, restored into `into` (Float32Array(2L)); `scratch.inflate` holds the inflated bytes
// (one byte more than expected, so that a stream inflating to more is caught, not cut).
function binaryArray(entry, i, body, n, into, scratch) {
  const at = `frame.arrays[${i}]`;
  if (entry === null || typeof entry !== "object") fail(`${at}: expected an object`);
  const {name, length, dtype, codec, scale, offset, nbytes} = entry;
  if (length !== n) fail(`${at} (${name}): expected ${n} values, got ${JSON.stringify(length)}`);
  if (dtype !== "uint8" && dtype !== "uint16") fail(`${at} (${name}): unsupported dtype ${JSON.stringify(dtype)}`);
  if (codec !== "linear" && codec !== "log2") fail(`${at} (${name}): unsupported codec ${JSON.stringify(codec)}`);
  if (!isNumber(scale) || scale <= 0) fail(`${at} (${name}): invalid scale ${JSON.stringify(scale)}`);
  if (!Number.isInteger(offset) || !Number.isInteger(nbytes) || offset < 0 || nbytes < 0 || offset + nbytes > body.length) {
    fail(`${at} (${name}): bytes ${offset}..${offset + nbytes} outside the message`);
  }
  let raw = body.subarray(offset, offset + nbytes);
  const size = dtype === "uint8" ? 1 : 2;
  if (entry.deflate) {
    if (!scratch.inflate || scratch.inflate.length < n * size + 1) scratch.inflate = new Uint8Array(n * size + 1);
    try {
      raw = unzlibSync(raw, {out: scratch.inflate.subarray(0, n * size + 1)}); // no growing and copying
    } catch (error) {
      fail(`${at} (${name}): not a zlib stream: ${error.message}`);
    }
  }
  if (raw.length !== n * size) fail(`${at} (${name}): ${raw.length} bytes for ${n} values of ${dtype}`);
  if (raw.byteOffset % size) raw = raw.slice(); // typed arrays of uint16 need an aligned start
  const q = size === 1 ? raw : new Uint16Array(raw.buffer, raw.byteOffset, n);
  const table = restoreTable(codec, scale, dtype);
  for (let d = 0; d < n; ++d) into[d] = table[q[d]];
}

/**
 * Decode a binary (v2) frame, read by readBinaryFrame, into preallocated buffers; nothing is written unless the
 * whole frame is valid. `rate` is `util` times the capacity of the directed link's cable (v2 does not send it).
 * @param {{header: object, body: Uint8Array}} parts from readBinaryFrame
 * @param {object} fabric from decodeSnapshot (L and links.capacity)
 * @param {object} out buffers from frameBuffers(L)
 * @returns {object} out
 * @throws {FeedFormatError} when the message does not follow the protocol or does not fit the fabric
 */
export function decodeBinaryFrame({header: msg, body}, fabric, out) {
  const {L} = fabric;
  const n = 2 * L;
  const sections = frameSections(msg, L);
  const scratch = (out.scratch ??= {});
  const util = (scratch.util ??= new Float32Array(n));
  const present = {offered: false, xmitWait: false};
  let hasUtil = false;
  msg.arrays.forEach((entry, i) => {
    const name = entry?.name === "xmit_wait" ? "xmitWait" : entry?.name;
    if (name === "util") hasUtil = true;
    else if (name in present) present[name] = true;
    else return; // arrays this client does not show (ecn) are skipped unread
    binaryArray(entry, i, body, n, name === "util" ? util : (scratch[name] ??= new Float32Array(n)), scratch);
  });
  if (!hasUtil) fail("binary frame: no util array");
  out.util.set(util);
  const cap = fabric.links.capacity;
  for (let d = 0; d < n; ++d) out.rate[d] = util[d] * cap[d < L ? d : d - L];
  return install(msg, sections, present, out, L);
}

// Optional sections (`sharp`, `storage`): small lists of records, checked field by field so a panel can trust them.
const isBool = (x) => typeof x === "boolean";
const isCount = (x) => Number.isInteger(x) && x >= 0;
const orNull = (check) => (x) => x === null || check(x);
const isStrings = (x) => Array.isArray(x) && x.every(isString);
const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

// Check the fields of one record: {key: check}; a key ending in "?" may be absent.
function record(value, where, fields) {
  if (!isObject(value)) fail(`${where}: expected an object, got ${JSON.stringify(value)}`);
  for (const [spec, check] of Object.entries(fields)) {
    const optionalKey = spec.endsWith("?");
    const key = optionalKey ? spec.slice(0, -1) : spec;
    if (optionalKey && value[key] === undefined) continue;
    if (!check(value[key])) fail(`${where}.${key}: invalid value ${JSON.stringify(value[key]) ?? "undefined"}`);
  }
  return value;
}

function records(parent, key, where, fields) {
  const values = parent[key];
  if (!Array.isArray(values)) fail(`${where}.${key}: expected an array`);
  values.forEach((v, i) => record(v, `${where}.${key}[${i}]`, fields));
  return values;
}

const SHARP_SWITCH = {node: isCount, name: isString, "tier?": isCount, trees: isCount, ports: isCount,
  limit: orNull(isCount), jobs: isStrings};
const SHARP_JOB = {id: isString, "tenant?": isString, "requested?": isBool, "allowed?": isBool, on: isBool,
  reason: orNull(isString), tree: orNull(isObject), bytes_aggregated: isNumber, bytes_kept_off_wire: isNumber,
  allreduce_s_sharp: orNull(isNumber), allreduce_s_without: orNull(isNumber)};
const SHARP_EVENT = {t: isNumber, kind: isString, "job?": isString};

/**
 * Check a frame's `sharp` section (docs/feed-protocol.md); pure.
 * @param {object|null|undefined} section the frame's `sharp`
 * @returns {object|null} the section, or null when absent (the engine does not model SHARP)
 * @throws {FeedFormatError} naming the first field that does not follow the protocol
 */
export function decodeSharp(section) {
  if (section == null) return null;
  const at = "frame.sharp";
  record(section, at, {enabled: isBool, trees_in_use: isCount, "aggregation_switches?": orNull(isCount),
    "bytes_aggregated?": isNumber,
    "bytes_kept_off_wire?": isNumber, "kept_off_wire_gbps?": isNumber});
  if (section.enabled) {
    record(section, at, {generation: orNull(isString), "label?": orNull(isString), trees: isCount,
      per_switch: orNull(isCount), per_port: orNull(isCount), "allowed_tenants?": orNull(isStrings)});
  }
  records(section, "switches", at, SHARP_SWITCH);
  records(section, "jobs", at, SHARP_JOB);
  records(section, "events", at, SHARP_EVENT);
  return section;
}

const isBottleneck = (x) => x === null || x === "backend" || x === "network";
const isFraction = (x) => isNumber(x) && x >= 0 && x <= 1;
const STORAGE_SERVER = {node: isCount, name: isString, "ports?": isCount, read_gbps: isNumber, write_gbps: isNumber,
  backend_read_gbps: isNumber, backend_write_gbps: isNumber, network_gbps: isNumber,
  read_bottleneck: isBottleneck, write_bottleneck: isBottleneck};
const STORAGE_JOB = {id: isString, "tenant?": isString, read_gbps: isNumber, write_gbps: isNumber,
  checkpoint: orNull(isObject)};
const CHECKPOINT = {size_bytes: isNumber, every: isCount, state: (x) => x === "idle" || x === "writing",
  progress: orNull(isFraction), elapsed_s: orNull(isNumber), eta_s: orNull(isNumber), next_iteration: isCount,
  count: isCount, last_s: orNull(isNumber), last_gpu_s: orNull(isNumber), gpu_s_total: isNumber,
  bytes_written: isNumber};
const STORAGE_TENANT = {tenant: isString, read_gbps: isNumber, write_gbps: isNumber};

/**
 * Check a frame's `storage` section (docs/feed-protocol.md); pure.
 * @param {object|null|undefined} section the frame's `storage`
 * @returns {object|null} the section, or null when absent (the engine does not model storage)
 * @throws {FeedFormatError} naming the first field that does not follow the protocol
 */
export function decodeStorage(section) {
  if (section == null) return null;
  const at = "frame.storage";
  record(section, at, {"totals?": isObject, "layout?": isObject});
  records(section, "servers", at, STORAGE_SERVER);
  records(section, "jobs", at, STORAGE_JOB).forEach((job, i) => {
    if (job.checkpoint !== null) record(job.checkpoint, `${at}.jobs[${i}].checkpoint`, CHECKPOINT);
  });
  records(section, "tenants", at, STORAGE_TENANT);
  return section;
}
