// Condition alerts about cables (docs/feed-protocol.md): which cables the newest frame says are down or degraded,
// where to draw them, and what their tooltips say. Pure.
//
// A condition alert lasts as long as its condition: only the newest frame's alerts count, so a cable that comes
// back up (or runs at its full width and speed again) is drawn as before with the next frame.
import {timeFormat} from "d3";
import {treeLine} from "./congestion-tree.js";
import {alertText} from "./frame-events.js";
import {cableLines, formatDuration, formatUtil} from "./format.js";

/** State of a cable drawn from a `link_down` alert: not among the fabric's links any more. */
export const DOWN = "down";
/** State of a cable drawn from a `width_degraded` or `speed_degraded` alert, or that the snapshot says is trained down
 * (its ends printed different rates, the lower read): still a link, running slower. */
export const DEGRADED = "degraded";

const STATE_OF = {link_down: DOWN, width_degraded: DEGRADED, speed_degraded: DEGRADED};
const clock = timeFormat("%H:%M:%S");

const isNode = (fabric, i) => Number.isInteger(i) && i >= 0 && i < fabric.n;
const port = (p) => (Number.isInteger(p) ? p : -1);

/**
 * The cables the condition alerts of a frame name, to draw over the map: a down cable between the positions of its
 * two nodes (both must be nodes of the current fabric: an alert with -1, a node that is gone, draws nothing), a
 * degraded cable in its own place (its `cable` must be a cable of the current fabric). Alerts that are not condition
 * alerts (`condition` not true) or of other kinds are left out; two alerts about one cable (width and speed) make one
 * entry. Cables the snapshot lists as trained down (`fabric.links.trainedDown`) are degraded entries too, with
 * `trainedDown: true`.
 * @param {object[]} alerts the newest frame's `alerts`
 * @param {object} fabric from decodeSnapshot: the snapshot the frame belongs to (alerts index its nodes and cables)
 * @returns {Array<{state: "down"|"degraded", a: number, b: number, aPort: number, bPort: number, cable: number,
 *   alerts: object[], trainedDown?: boolean}>} down cables first, then degraded ones in the alerts' order, then trained
 *   down ones without alerts in cable order; `cable` is -1 for a down cable
 */
export function conditionCables(alerts, fabric) {
  const down = new Map();
  const degraded = new Map();
  for (const alert of Array.isArray(alerts) ? alerts : []) {
    if (alert === null || typeof alert !== "object" || alert.condition !== true) continue;
    const state = STATE_OF[alert.kind];
    if (state === DOWN) {
      const [a, b] = Array.isArray(alert.nodes) ? alert.nodes : [];
      if (!isNode(fabric, a) || !isNode(fabric, b)) continue;
      const ports = Array.isArray(alert.ports) ? alert.ports : [];
      const pa = port(ports[0]);
      const pb = port(ports[1]);
      const key = a < b || (a === b && pa <= pb) ? `${a}:${pa}:${b}:${pb}` : `${b}:${pb}:${a}:${pa}`;
      if (down.has(key)) down.get(key).alerts.push(alert);
      else down.set(key, {state, a, b, aPort: pa, bPort: pb, cable: -1, alerts: [alert]});
    } else if (state === DEGRADED) {
      const c = alert.cable;
      if (!(Number.isInteger(c) && c >= 0 && c < fabric.L)) continue;
      const {a, b, aPort, bPort} = fabric.links;
      if (degraded.has(c)) degraded.get(c).alerts.push(alert);
      else degraded.set(c, {state, a: a[c], b: b[c], aPort: aPort[c], bPort: bPort[c], cable: c, alerts: [alert]});
    }
  }
  const {a, b, aPort, bPort, trainedDown = []} = fabric.links;
  for (const c of trainedDown) {
    if (degraded.has(c)) degraded.get(c).trainedDown = true;
    else degraded.set(c, {state: DEGRADED, a: a[c], b: b[c], aPort: aPort[c], bPort: bPort[c], cable: c, alerts: [],
      trainedDown: true});
  }
  return [...down.values(), ...degraded.values()];
}

/**
 * A key that changes when the cables drawn (not their alerts' texts) change.
 * @param {object[]} items from conditionCables
 * @returns {string}
 */
export function conditionsKey(items) {
  return items.map((d) => `${d.state}:${d.a}:${d.aPort}:${d.b}:${d.bPort}:${d.cable}`).join(" ");
}

/**
 * When a condition started: "since 14:02:11 (2 min 05 s ago)" (local time), "" when the alert does not say.
 * @param {object} alert with `since` in epoch seconds
 * @param {number} now epoch seconds (the frame's `t`)
 * @returns {string}
 */
export function sinceText(alert, now) {
  const since = alert?.since;
  if (!Number.isFinite(since)) return "";
  const ago = Number.isFinite(now) ? ` (${formatDuration(Math.max(0, now - since))} ago)` : "";
  return `since ${clock(new Date(since * 1000))}${ago}`;
}

// What a degraded alert changed: "width 4x → 1x", "speed NDR → HDR".
function change(alert) {
  const what = alert.kind === "width_degraded" ? "width" : "speed";
  return alert.old != null && alert.new != null ? `${what} ${alert.old} → ${alert.new}` : `${what} degraded`;
}

// One line per alert: its text and since when.
const alertLines = (alerts, now) => alerts.map((alert) => [alertText(alert), sinceText(alert, now)].filter(Boolean).join(", "));

/**
 * Tooltip lines of cable c: its ends (node and port), GUIDs, width and speed, its state (up or degraded, with what
 * changed) and utilization (the busier direction), each direction's rate, and the degraded alerts with since when.
 * @param {object} fabric from decodeSnapshot
 * @param {object} frame frame buffers (decoded)
 * @param {number} c cable index
 * @param {object|null} [condition] the entry of conditionCables for this cable, if any
 * @returns {string[]}
 */
export function cableTooltip(fabric, frame, c, condition = null) {
  const lines = cableLines(fabric, frame, c);
  const degraded = condition?.state === DEGRADED;
  const why = degraded ? condition.alerts.map(change) : [];
  if (condition?.trainedDown) why.push("trained down: its two ends printed different rates, the lower is shown");
  const state = degraded ? `degraded (${why.join(", ")})` : "up";
  lines.splice(3, 0, `state ${state}, utilization ${formatUtil(frame.cableUtil[c])}`);
  const tree = treeLine(frame.congestionTree, c);
  if (tree) lines.splice(4, 0, tree);
  if (degraded) lines.push(...alertLines(condition.alerts, frame.t));
  return lines;
}

/**
 * Tooltip lines of a down cable: its ends (the alert's names, else the nodes' with their ports), its state with since
 * when, and the alerts' texts.
 * @param {object} fabric from decodeSnapshot
 * @param {object} item a down entry of conditionCables
 * @param {number} now epoch seconds (the frame's `t`)
 * @returns {string[]}
 */
export function downTooltip(fabric, item, now) {
  const {name} = fabric.nodes;
  const first = item.alerts[0];
  const end = (text, i, p) => (typeof text === "string" && text ? text : p >= 0 ? `${name[i]} port ${p}` : name[i]);
  const since = sinceText(first, now);
  return [`${end(first.a, item.a, item.aPort)} ⇄ ${end(first.b, item.b, item.bPort)}`,
    `state down (not cabled in the fabric any more)${since ? `, ${since}` : ""}`,
    ...item.alerts.map(alertText)];
}
