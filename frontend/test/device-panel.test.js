import assert from "node:assert/strict";
import {test} from "node:test";
import {deviceRows, selectedSwitch, uptimeText} from "../src/charts/device-panel.js";

// Shaped like GET /api/fabrics/fabrics/<slug>/devices/<switch>/ (ibweb.live.validation.device.device_panel).
const VITALS = {guid: "0x0000000000000007", name: "leaf01", source: "ibswinfo.txt:1", part_number: "MQM9700-NS2F",
  serial: "MT2301X00001", psid: "MT_0000000838", firmware: "31.2012.1068", hardware: null, uptime_s: 3 * 86400 + 4 * 3600,
  fans: [{name: "1", rpm: 8000, ok: true}, {name: "2", rpm: 0, ok: true}],
  psus: [{name: "PSU1", ok: true, dc_ok: true, watts: 380}, {name: "PSU2", ok: true, dc_ok: false, watts: 0}],
  temperatures: [{sensor: "ASIC", celsius: 106, max_celsius: 108, warning: 105, critical: 120},
    {sensor: "module 1", celsius: null, max_celsius: null, warning: 70, critical: 80}], errors: ["PSU2 DC state: ERROR"]};

test("uptimeText: days and hours, hours and minutes, minutes", () => {
  assert.deepEqual([uptimeText(null), uptimeText(300), uptimeText(7500), uptimeText(3 * 86400 + 4 * 3600)],
    ["–", "5 min", "2 h 5 min", "3 d 4 h"]);
});

test("deviceRows: identity, fans with the stopped one, PSUs, temperatures against thresholds, errors, findings", () => {
  const rows = deviceRows({node: "leaf01", vitals: [VITALS], node_info: [],
    findings: [{check: "fan", severity: "error", message: "leaf01: fan 2 stopped (0 rpm)"}]});
  const by = Object.fromEntries(rows.map((r) => [r[0], r.slice(1)]));
  assert.deepEqual(by.device, ["MQM9700-NS2F", null]);
  assert.deepEqual(by.firmware, ["31.2012.1068 (PSID MT_0000000838)", null]);
  assert.deepEqual(by.uptime, ["3 d 4 h", null]);
  assert.deepEqual(by.fans, ["1 of 2 good; failed: 2; 8000, 0 rpm", "error"]);
  assert.deepEqual(by["PSU PSU1"], ["ok, 380 W", "normal"]);
  assert.deepEqual(by["PSU PSU2"], ["DC output not ok, 0 W", "error"]);
  assert.deepEqual(by.ASIC, ["106 °C (max 108 °C; warning 105 °C, critical 120 °C)", "warning"]);
  assert.equal(by["module 1"][1], null);
  assert.deepEqual(by.errors, ["PSU2 DC state: ERROR", "warning"]);
  assert.deepEqual(by.fan, ["leaf01: fan 2 stopped (0 rpm)", "error"]);
});

test("deviceRows: ibdiagnet's node record when no vitals were read, and a switch with nothing read", () => {
  const rows = deviceRows({vitals: [], node_info: [{hardware: "Quantum-2", firmware: "31.2012.1068", psid: null, uptime_s: 60}], findings: []});
  assert.deepEqual(rows.map((r) => r[0]), ["hardware", "firmware", "uptime"]);
  assert.deepEqual(deviceRows({vitals: [], node_info: [], findings: []}), [["vitals", "none read (ibswinfo, ibdiagnet)", null]]);
});

test("selectedSwitch: a switch, a host (none), a cable's switch end", () => {
  const fabric = {L: 2, nodes: {isHost: Uint8Array.from([1, 0, 0])}, links: {a: [0, 1], b: [1, 2]}};
  assert.equal(selectedSwitch({kind: "node", index: 1}, fabric), 1);
  assert.equal(selectedSwitch({kind: "node", index: 0}, fabric), -1);
  assert.equal(selectedSwitch({kind: "link", index: 0}, fabric), 1);
  assert.equal(selectedSwitch({kind: "link", index: 3}, fabric), 1); // the reverse direction of cable 1: its a end
  assert.equal(selectedSwitch(null, fabric), -1);
});

test("switchHistoryHref: the History page's switch view of the switch over the last hour", async () => {
  const {switchHistoryHref} = await import("../src/charts/device-panel.js");
  assert.equal(switchHistoryHref("my fab", "leaf 01"), "/fabrics/my%20fab/history/?range=1h&switch=leaf+01");
});
