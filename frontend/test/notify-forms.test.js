import assert from "node:assert/strict";
import {test} from "node:test";
import {FieldError, bodyOf, resultText} from "../src/notify-forms.js";

const now = new Date("2026-12-06T10:00:00Z");

test("a channel form becomes the API's body: JSON, numbers, booleans, an owner or none", () => {
  const body = bodyOf([
    {name: "name", value: " noc hook "}, {name: "kind", value: "webhook"}, {name: "tenant", as: "nullable", value: ""},
    {name: "config", as: "json", value: '{"template": "slack"}'}, {name: "secrets", as: "json", value: "", optional: true},
    {name: "rate_limit_per_min", as: "int", value: "0"}, {name: "enabled", as: "bool", checked: false},
  ], now);
  assert.deepEqual(body, {name: "noc hook", kind: "webhook", tenant: null, config: {template: "slack"},
    rate_limit_per_min: 0, enabled: false});
});

test("a rule's lists and checked channels; a silence's window from its start and hours", () => {
  assert.deepEqual(bodyOf([{name: "kinds", as: "list", value: "link_down, ber_high,,"},
    {name: "hosts", as: "list", value: ""}, {name: "channels", as: "ints", value: "3", checked: true},
    {name: "channels", as: "ints", value: "4", checked: false}, {name: "channels", as: "ints", value: "7", checked: true}]),
  {kinds: ["link_down", "ber_high"], hosts: [], channels: [3, 7]});
  assert.deepEqual(bodyOf([{name: "starts_at", as: "start", value: ""}, {name: "hours", as: "hours", value: "2"},
    {name: "reason", value: "firmware"}], now),
  {reason: "firmware", starts_at: "2026-12-06T10:00:00.000Z", ends_at: "2026-12-06T12:00:00.000Z"});
});

test("a field that does not read is named", () => {
  assert.throws(() => bodyOf([{name: "config", as: "json", value: "{url:"}]), (e) => e instanceof FieldError
    && e.field === "config" && /not JSON/.test(e.message));
  assert.throws(() => bodyOf([{name: "config", as: "json", value: "[1]"}]), /config: a JSON object/);
  assert.throws(() => bodyOf([{name: "rate_limit_per_min", as: "int", value: "-1"}]), /rate_limit_per_min: a whole number/);
  assert.throws(() => bodyOf([{name: "hours", as: "hours", value: "0"}]), /hours: a number of hours above 0/);
});

test("a test's or a digest's result in one line", () => {
  assert.equal(resultText({state: "sent", detail: "HTTP 200"}), "sent: HTTP 200");
  assert.equal(resultText([{state: "queued", detail: ""}, {state: "queued", detail: ""}]), "queued; queued");
  assert.match(resultText([]), /nothing to send/);
});
