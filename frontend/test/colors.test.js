import assert from "node:assert/strict";
import {test} from "node:test";
import {interpolateCividis, lab, rgb} from "d3";
import {BUCKETS, BUCKET_COLORS, CONGESTED, LUT, bucketOf, utilColor} from "../src/colors.js";

test("the ends of the scale are Cividis' ends", () => {
  assert.equal(utilColor(0), rgb(interpolateCividis(0)).toString());
  assert.equal(utilColor(1), rgb(interpolateCividis(1)).toString());
  assert.notEqual(utilColor(0), utilColor(1));
});

test("lightness rises monotonically from 0% to 100%", () => {
  let previous = -Infinity;
  for (let b = 0; b < CONGESTED; ++b) {
    const {l} = lab(BUCKET_COLORS[b]);
    assert.ok(l >= previous - 1e-9, `bucket ${b}: L* ${l} below ${previous}`);
    previous = l;
  }
  assert.ok(lab(utilColor(1)).l - lab(utilColor(0)).l > 60, "the scale spans a wide lightness range");
});

test("values outside 0..1 are clamped; above 1 is marked congested", () => {
  assert.equal(utilColor(1.7), utilColor(1));
  assert.equal(utilColor(-0.3), utilColor(0));
  assert.equal(utilColor(NaN), utilColor(0));
  assert.equal(bucketOf(1), CONGESTED - 1);
  assert.equal(bucketOf(1.0001), CONGESTED);
  assert.equal(bucketOf(42), CONGESTED);
  assert.equal(bucketOf(0.5), Math.round(0.5 * (CONGESTED - 1)));
});

test("buckets are monotone in utilization", () => {
  let previous = 0;
  for (let u = 0; u <= 1.2; u += 0.001) {
    assert.ok(bucketOf(u) >= previous, `bucket fell at u=${u}`);
    previous = bucketOf(u);
  }
});

test("the RGB lookup table matches the CSS colours", () => {
  assert.equal(LUT.length, BUCKETS * 3);
  for (const b of [0, 17, 128, CONGESTED - 1, CONGESTED]) {
    const {r, g, b: blue} = rgb(BUCKET_COLORS[b]);
    assert.deepEqual([...LUT.subarray(3 * b, 3 * b + 3)], [r, g, blue]);
  }
});
