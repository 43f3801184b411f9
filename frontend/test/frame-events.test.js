import assert from "node:assert/strict";
import {test} from "node:test";
import {alertKey, alertText, frameEvents} from "../src/frame-events.js";

const job = (id, extra = {}) => ({id, tenant: "t", phase: "comm", slowdown: 1, ...extra});

test("no events for the first frame; jobs appearing, phases and slowdowns are reported", () => {
  assert.deepEqual(frameEvents(null, {jobs: [job("a")]}), []);
  const events = frameEvents({jobs: [job("a"), job("b", {phase: "waiting"})]},
    {jobs: [job("a", {slowdown: 2.5}), job("b", {phase: "comm"}), job("c")]});
  assert.deepEqual(events.map((e) => e.text), ["job a slowed down ×2.5", "job b: waiting → comm", "job c (t) appeared"]);
  assert.equal(events[0].level, "warning");
});

test("congestion onset and clearing, and new alerts only", () => {
  const alert = {kind: "no_route", job: "a", flows: 3};
  const on = frameEvents({totals: {congested_links: 0}, alerts: []}, {totals: {congested_links: 4}, alerts: [alert]});
  assert.deepEqual(on.map((e) => e.text), ["congestion: 4 link(s) offered more than capacity", "no route: job a, flows 3"]);
  assert.deepEqual(frameEvents({totals: {congested_links: 4}, alerts: [alert]}, {totals: {congested_links: 0}, alerts: [alert]})
    .map((e) => e.text), ["congestion cleared"]);
});

test("alert text prefers the message; keys ignore values that change", () => {
  assert.equal(alertText({kind: "errors", message: "SymbolErrorCounter rising on leaf01:3"}), "SymbolErrorCounter rising on leaf01:3");
  assert.equal(alertKey({kind: "errors", link: 3, rate_per_min: 5}), alertKey({kind: "errors", link: 3, rate_per_min: 9}));
});
