import assert from "node:assert/strict";
import {test} from "node:test";
import {recablingMarks} from "../src/charts/detail.js";

test("re-cablings of both directions become one marker per time, oldest first", () => {
  const spine = (n, port) => ({guid: `0x${n}`, port, node: `spine0${n}`});
  const body = {
    recabled: [{t: 120, from: spine(1, 2), to: spine(2, 3)}],
    reverse_recabled: [{t: 120, from: {guid: "hidden", port: 1, node: "host-4"}, to: {guid: "0x9", port: 3, node: null}},
      {t: 60, from: spine(2, 1), to: null}],
  };
  assert.deepEqual(recablingMarks(body), [
    {t: 60, text: "recabled: spine02 port 1 → nothing"},
    {t: 120, text: "recabled: spine01 port 2 → spine02 port 3; host-4 port 1 → 0x9 port 3"},
  ]);
  assert.deepEqual(recablingMarks({t: [], rate: []}), []);
  assert.deepEqual(recablingMarks(null), []);
});
