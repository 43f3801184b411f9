import assert from "node:assert/strict";
import {test} from "node:test";
import {
  DEFAULT_RANGE, MAX_WINDOW_S, RANGES, customRange, fromUtcInput, parseRange, pointsFor, rangeLabel, rangeParams,
  rangeWindow, toUtcInput,
} from "../src/history/time-range.js";

const NOW = Date.UTC(2026, 11, 6, 23, 10, 30) / 1000; // 2026-12-06 23:10:30 UTC

test("the presets run from the last hour to the last 90 days, each ending now", () => {
  assert.deepEqual(RANGES.map((r) => r.key), ["1h", "6h", "24h", "7d", "30d", "90d"]);
  assert.deepEqual(rangeWindow({key: "1h"}, NOW), {start: NOW - 3600, end: NOW});
  assert.deepEqual(rangeWindow({key: "90d"}, NOW), {start: NOW - 90 * 86400, end: NOW});
  assert.deepEqual(rangeWindow({key: "nonsense"}, NOW), rangeWindow({key: DEFAULT_RANGE}, NOW));
  assert.deepEqual(rangeWindow({key: "custom", start: 10, end: 20}, NOW), {start: 10, end: 20});
});

test("custom times are UTC to the minute, both ways, and impossible dates do not read", () => {
  assert.equal(toUtcInput(NOW), "2026-12-06T23:10");
  assert.equal(fromUtcInput("2026-12-06T23:10"), NOW - 30);
  assert.equal(fromUtcInput("2026-12-06T23:10:30"), NOW);
  assert.equal(fromUtcInput(toUtcInput(NOW)), NOW - 30);
  for (const bad of ["", "yesterday", "2026-02-30T10:00", "2026-12-06T24:00", "2026-12-06 23:10", null]) {
    assert.equal(fromUtcInput(bad), null, String(bad));
  }
});

test("a custom window must end after it starts, span at most the API's longest window and not end past tomorrow", () => {
  assert.deepEqual(customRange("2026-12-01T00:00", "2026-12-02T12:00", NOW),
    {range: {key: "custom", start: Date.UTC(2026, 11, 1) / 1000, end: Date.UTC(2026, 11, 2, 12) / 1000}});
  assert.match(customRange("2026-12-02T00:00", "2026-12-01T00:00", NOW).error, /^to: the window must end after/);
  assert.match(customRange("2026-12-02T00:00", "2026-12-02T00:00", NOW).error, /^to: /);
  assert.match(customRange("soon", "2026-12-01T00:00", NOW).error, /^from: "soon" is not a date/);
  assert.match(customRange("2026-12-01T00:00", "", NOW).error, /^to: "" is not a date/);
  assert.match(customRange("2024-01-01T00:00", "2026-12-01T00:00", NOW).error, new RegExp(`at most ${MAX_WINDOW_S / 86400} days`));
  assert.match(customRange("2026-12-06T00:00", "2026-12-09T00:00", NOW).error, /at most a day from now/);
});

test("the address keeps the range: a preset by key, a custom window by its UTC ends; anything else is the default with why", () => {
  for (const range of [{key: "7d"}, {key: "1h"}, customRange("2026-11-01T06:00", "2026-11-03T18:30", NOW).range]) {
    const search = `?${new URLSearchParams(rangeParams(range))}`;
    assert.deepEqual(parseRange(search, NOW), {range, error: ""}, search);
  }
  assert.deepEqual(parseRange("", NOW), {range: {key: DEFAULT_RANGE}, error: ""});
  assert.deepEqual(parseRange("?ports=leaf01:1", NOW), {range: {key: DEFAULT_RANGE}, error: ""});
  const wrong = parseRange("?range=2w", NOW);
  assert.deepEqual(wrong.range, {key: DEFAULT_RANGE});
  assert.match(wrong.error, /^range: "2w" is not one of 1h, 6h, 24h, 7d, 30d, 90d$/);
  const backwards = parseRange("?from=2026-12-02T00:00&to=2026-12-01T00:00", NOW);
  assert.deepEqual(backwards.range, {key: DEFAULT_RANGE});
  assert.match(backwards.error, /must end after it starts/);
});

test("a range reads as words, and a chart asks one bin per pixel within bounds", () => {
  assert.equal(rangeLabel({key: "24h"}), "last 24 h");
  assert.equal(rangeLabel({key: "custom", start: NOW - 86400, end: NOW}), "2026-12-05 23:10 – 2026-12-06 23:10 UTC");
  assert.deepEqual([pointsFor(640.4), pointsFor(3), pointsFor(5000), pointsFor(undefined)], [640, 20, 1000, 20]);
});
