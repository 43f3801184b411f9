// Utilization colours: one fixed, perceptual, colourblind-safe sequential scale (Cividis). Pure.
import {interpolateCividis, rgb} from "d3";

/** Number of colour buckets; buckets 0..CONGESTED-1 cover utilization 0..1. */
export const BUCKETS = 256;

/** Bucket of congested links (utilization > 1: offered load above capacity); drawn with the top colour, marked. */
export const CONGESTED = BUCKETS - 1;

const TOP = CONGESTED - 1;

/** CSS colour string per bucket, for canvas strokeStyle; CONGESTED has the colour of 100%. */
export const BUCKET_COLORS = Array.from({length: BUCKETS}, (_, b) => rgb(interpolateCividis(Math.min(b, TOP) / TOP)).toString());

/** RGB lookup table: bytes [r, g, b] of bucket b at 3b..3b+2. */
export const LUT = Uint8Array.from(BUCKET_COLORS.flatMap((color) => {
  const {r, g, b} = rgb(color);
  return [r, g, b];
}));

/**
 * Colour bucket of one utilization value.
 * @param {number} u utilization, rate / capacity; NaN and negatives count as 0
 * @returns {number} integer 0..CONGESTED-1 for u in [0, 1], CONGESTED for u > 1
 */
export function bucketOf(u) {
  if (u > 1) return CONGESTED;
  return u > 0 ? Math.round(u * TOP) : 0;
}

/**
 * CSS colour of one utilization value; clamped to the scale, so 1.3 gives the colour of 1.
 * @param {number} u utilization
 * @returns {string} "rgb(r, g, b)"
 */
export function utilColor(u) {
  return BUCKET_COLORS[bucketOf(u)];
}
