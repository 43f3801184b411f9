// Time ranges of the per-port history (issue 40): the presets (last 1 h to 90 d), a custom window in UTC, what
// the page's address says and what the API is asked. Pure: `now` is always passed in (seconds since the epoch).

/** The presets, shortest first: key (in the address), seconds, label. */
export const RANGES = [
  {key: "1h", seconds: 3600, label: "1 h"},
  {key: "6h", seconds: 6 * 3600, label: "6 h"},
  {key: "24h", seconds: 86400, label: "24 h"},
  {key: "7d", seconds: 7 * 86400, label: "7 d"},
  {key: "30d", seconds: 30 * 86400, label: "30 d"},
  {key: "90d", seconds: 90 * 86400, label: "90 d"},
];
/** The preset when the address names none. */
export const DEFAULT_RANGE = "24h";
/** The longest window the API answers, s (ibweb/live/api/tsdb_views.py MAX_WINDOW_S). */
export const MAX_WINDOW_S = 400 * 86400;
/** The furthest into the future a window may end, s (the API's bound). */
const AHEAD_S = 86400;

const pad = (n) => String(n).padStart(2, "0");

/**
 * A time as a `datetime-local` input's value, in UTC, to the minute.
 * @param {number} seconds since the epoch
 * @returns {string} e.g. "2026-12-06T23:10"
 */
export function toUtcInput(seconds) {
  const d = new Date(Math.floor(seconds / 60) * 60000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

/**
 * A `datetime-local` value (or the address's from/to) read as UTC.
 * @param {string} text "YYYY-MM-DDTHH:MM" (seconds optional)
 * @returns {number|null} seconds since the epoch; null when it does not read
 */
export function fromUtcInput(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(String(text ?? "").trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0));
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return null; // 02-30
  return ms / 1000;
}

/**
 * A custom window from the picker's two fields, checked as the API checks it.
 * @param {string} from UTC "YYYY-MM-DDTHH:MM"
 * @param {string} to likewise
 * @param {number} now seconds since the epoch
 * @returns {{range: {key: "custom", start: number, end: number}}|{error: string}}
 */
export function customRange(from, to, now) {
  const start = fromUtcInput(from);
  const end = fromUtcInput(to);
  if (start == null) return {error: `from: "${from}" is not a date and time (YYYY-MM-DDTHH:MM, UTC)`};
  if (end == null) return {error: `to: "${to}" is not a date and time (YYYY-MM-DDTHH:MM, UTC)`};
  if (end <= start) return {error: "to: the window must end after it starts"};
  if (end - start > MAX_WINDOW_S) return {error: `to: a window of at most ${MAX_WINDOW_S / 86400} days`};
  if (end > now + AHEAD_S) return {error: "to: at most a day from now"};
  return {range: {key: "custom", start, end}};
}

/**
 * The preset of a key.
 * @param {string} key
 * @returns {{key: string, seconds: number, label: string}|undefined}
 */
export const preset = (key) => RANGES.find((r) => r.key === key);

/**
 * The window of a range now: a preset ends now, a custom window is fixed.
 * @param {{key: string, start?: number, end?: number}} range
 * @param {number} now seconds since the epoch
 * @returns {{start: number, end: number}}
 */
export function rangeWindow(range, now) {
  if (range.key === "custom") return {start: range.start, end: range.end};
  const p = preset(range.key) ?? preset(DEFAULT_RANGE);
  return {start: now - p.seconds, end: now};
}

/**
 * The range the page's address asks for: `?range=7d`, or `?from=…&to=…` (UTC); anything else the default, with
 * the reason.
 * @param {string} search location.search
 * @param {number} now seconds since the epoch
 * @returns {{range: {key: string, start?: number, end?: number}, error: string}}
 */
export function parseRange(search, now) {
  const q = new URLSearchParams(search ?? "");
  if (q.has("from") || q.has("to")) {
    const got = customRange(q.get("from") ?? "", q.get("to") ?? "", now);
    return got.range ? {range: got.range, error: ""} : {range: {key: DEFAULT_RANGE}, error: got.error};
  }
  const key = q.get("range");
  if (key == null || preset(key)) return {range: {key: key ?? DEFAULT_RANGE}, error: ""};
  return {range: {key: DEFAULT_RANGE}, error: `range: "${key}" is not one of ${RANGES.map((r) => r.key).join(", ")}`};
}

/**
 * A range as the address's parameters (the inverse of parseRange).
 * @param {{key: string, start?: number, end?: number}} range
 * @returns {Object<string, string>}
 */
export function rangeParams(range) {
  return range.key === "custom" ? {from: toUtcInput(range.start), to: toUtcInput(range.end)} : {range: range.key};
}

/**
 * The words of a range: "last 24 h", "2026-12-01 10:00 – 2026-12-02 10:00 UTC".
 * @param {{key: string, start?: number, end?: number}} range
 * @returns {string}
 */
export function rangeLabel(range) {
  if (range.key !== "custom") return `last ${(preset(range.key) ?? preset(DEFAULT_RANGE)).label}`;
  return `${toUtcInput(range.start).replace("T", " ")} – ${toUtcInput(range.end).replace("T", " ")} UTC`;
}

/**
 * Bins to ask the API for a chart `pixels` wide: one per pixel, at least 20, at most 1000.
 * @param {number} pixels
 * @returns {number}
 */
export function pointsFor(pixels) {
  return Math.max(20, Math.min(1000, Math.round(Number(pixels) || 0)));
}
