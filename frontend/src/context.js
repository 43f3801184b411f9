// The one context: current fabric and frame, feed status, hover and selection, the clock, and their events.
import {dispatch, interval} from "d3";
import {decodeBinaryFrame, decodeFrame, decodeSnapshot, frameBuffers, readBinaryFrame} from "./decode.js";

const KEEP = 200;

function quantile(values, p) {
  if (!values.length) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/**
 * Create the context. Events (listen with `.on(type, listener)`, namespaced like "frame.topology"):
 * snapshot(fabric), frame(frame), status(status, detail), hover(item), select(item), highlight(highlight),
 * catalog(jobs), clock(now), progress(msg); `this` is the context. A progress message is the feed's `progress`
 * (long operations: {task, id, fraction, status, message}, see docs/feed-protocol.md).
 * An item is null or {kind: "node" | "link" | "leaf", index}, a "link" index being a cable. A highlight is null or
 * from makeHighlight (a job's, a tenant's or a path's nodes and links); the catalog is the jobs API's list.
 * @param {{clockMs?: number}} [options] clock period in ms
 * @returns {object} the context
 */
export function context({clockMs = 250} = {}) {
  const events = dispatch("snapshot", "frame", "status", "hover", "select", "highlight", "catalog", "clock",
    "progress");
  const renderMs = [];
  let clock = null;

  const ctx = {
    /** Decoded fabric (decodeSnapshot), or null before the first snapshot. */
    fabric: null,
    /** Frame buffers (frameBuffers) of the current fabric; seq is -1 until a frame is applied. */
    frame: null,
    /** Feed status: "connecting", "live", "stale", "reconnecting" or "closed"; detail says more. */
    status: "connecting",
    detail: "",
    /** performance.now() of the last snapshot or applied frame. */
    receivedAt: NaN,
    /** Frames applied since start. */
    frames: 0,
    hovered: null,
    selected: null,
    /** The highlight shown on the map (makeHighlight), or null. */
    highlighted: null,
    /** Jobs with their hosts and directed links (jobs API), [] until loaded. */
    catalog: [],
    /** Apply + redraw time of the last KEEP frames, in ms. */
    stats: {
      renderMs,
      get median() {
        return quantile(renderMs, 0.5);
      },
      get p95() {
        return quantile(renderMs, 0.95);
      },
    },

    on(type, listener) {
      if (arguments.length < 2) return events.on(type);
      events.on(type, listener);
      return ctx;
    },

    /** Apply a snapshot message, then its frame if it has one. Throws FeedFormatError. */
    applySnapshot(msg) {
      const fabric = decodeSnapshot(msg);
      ctx.fabric = fabric;
      ctx.frame = frameBuffers(fabric.L);
      ctx.hovered = ctx.selected = ctx.highlighted = null;
      ctx.receivedAt = performance.now();
      events.call("snapshot", ctx, fabric);
      if (msg.frame) ctx.applyFrame(msg.frame);
    },

    /**
     * Apply a frame, a parsed v1 message or a binary v2 one (ArrayBuffer), and redraw; older or repeated frames are
     * skipped. Returns whether it was applied. The time measured covers the binary decoding (header, inflate).
     */
    applyFrame(msg) {
      if (!ctx.fabric) return false;
      const start = performance.now();
      const binary = msg instanceof ArrayBuffer || ArrayBuffer.isView(msg);
      const parts = binary ? readBinaryFrame(msg) : null;
      if ((binary ? parts.header.seq : msg.seq) <= ctx.frame.seq) return false;
      if (binary) decodeBinaryFrame(parts, ctx.fabric, ctx.frame);
      else decodeFrame(msg, ctx.fabric.L, ctx.frame);
      ++ctx.frames;
      events.call("frame", ctx, ctx.frame);
      ctx.receivedAt = performance.now();
      renderMs.push(ctx.receivedAt - start);
      if (renderMs.length > KEEP) renderMs.shift();
      return true;
    },

    /** Pass on a progress message of the feed (an engine starting, an analysis running). */
    applyProgress(msg) {
      events.call("progress", ctx, msg);
    },

    setStatus(status, detail = "") {
      if (status === ctx.status && detail === ctx.detail) return;
      ctx.status = status;
      ctx.detail = detail;
      events.call("status", ctx, status, detail);
    },

    hover(item) {
      if (sameItem(item, ctx.hovered)) return;
      ctx.hovered = item;
      events.call("hover", ctx, item);
    },

    select(item) {
      if (sameItem(item, ctx.selected)) return;
      ctx.selected = item;
      events.call("select", ctx, item);
    },

    /** Show a highlight (null clears it). */
    highlight(item) {
      if (item === ctx.highlighted) return;
      ctx.highlighted = item;
      events.call("highlight", ctx, item);
    },

    /** Set the jobs catalog (jobs API list). */
    setCatalog(jobs) {
      ctx.catalog = jobs;
      events.call("catalog", ctx, jobs);
    },

    /** Start the clock: a "clock" event every clockMs. */
    start() {
      clock ??= interval(() => events.call("clock", ctx, performance.now()), clockMs);
      return ctx;
    },
  };
  return ctx;
}

function sameItem(p, q) {
  return p === q || (p != null && q != null && p.kind === q.kind && p.index === q.index);
}
