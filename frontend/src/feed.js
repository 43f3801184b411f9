// The live feed: a WebSocket client that reconnects with capped exponential backoff and keeps the status.
import {FeedFormatError} from "./feed-error.js";

const CLOSED = {4403: "not allowed to view this fabric", 4404: "unknown fabric"};

/**
 * The WebSocket URL of a feed path, on the page's host: ws: under http:, wss: under https:.
 * @param {string} path e.g. "/ws/fabrics/demo/live/"; a ws: or wss: URL is kept
 * @param {{href: string}} location the page's location
 * @param {number} [version] feed protocol version of the frames to ask for (2: binary frames, `?v=2`)
 * @returns {string}
 */
export function feedURL(path, location, version = 1) {
  const url = new URL(path, location.href);
  if (url.protocol === "http:") url.protocol = "ws:";
  else if (url.protocol === "https:") url.protocol = "wss:";
  if (version !== 1) url.searchParams.set("v", String(version));
  return url.href;
}

/**
 * Delay before reconnect attempt `attempt` (0 first): base * 2^attempt, capped, times a jitter in [0.5, 1].
 * @param {number} attempt
 * @param {number} baseMs
 * @param {number} capMs
 * @param {() => number} [random] uniform in [0, 1)
 * @returns {number} milliseconds
 */
export function backoffDelay(attempt, baseMs, capMs, random = Math.random) {
  return Math.min(capMs, baseMs * 2 ** attempt) * (0.5 + random() / 2);
}

/**
 * The feed source: `feed().url(u).context(ctx).start()`. Messages go to ctx.applySnapshot / ctx.applyFrame;
 * the status is "connecting", "live", "stale" (no frame for staleTicks ticks), "reconnecting", or "closed"
 * (closed by the server with 4403 or 4404, not retried).
 * @returns {object} the source, with chained accessors url, context, backoff, staleTicks, socket and start, stop
 */
export function feed() {
  let url = "";
  let ctx = null;
  let baseMs = 500;
  let capMs = 30000;
  let staleTicks = 3;
  let Socket = globalThis.WebSocket;
  let socket = null;
  let attempt = 0;
  let retry = null;

  const source = {
    url(_) {
      return arguments.length ? ((url = _), source) : url;
    },
    context(_) {
      return arguments.length ? ((ctx = _), source) : ctx;
    },
    /** Backoff base and cap in ms. */
    backoff(base, cap) {
      return arguments.length ? ((baseMs = base), (capMs = cap), source) : [baseMs, capMs];
    },
    staleTicks(_) {
      return arguments.length ? ((staleTicks = _), source) : staleTicks;
    },
    /** The WebSocket constructor (a stand-in for tests). */
    socket(_) {
      return arguments.length ? ((Socket = _), source) : Socket;
    },
    start() {
      ctx.on("clock.feed", checkStale);
      connect();
      return source;
    },
    stop() {
      ctx.on("clock.feed", null);
      clearTimeout(retry);
      if (socket) {
        socket.onclose = null;
        socket.close(1000);
        socket = null;
      }
      return source;
    },
  };

  function connect() {
    retry = null;
    ctx.setStatus(attempt ? "reconnecting" : "connecting", attempt ? `attempt ${attempt + 1}` : "");
    socket = new Socket(url);
    socket.binaryType = "arraybuffer"; // binary (v2) frames
    socket.onmessage = (event) => receive(event.data);
    socket.onclose = (event) => {
      socket = null;
      if (CLOSED[event.code]) return ctx.setStatus("closed", CLOSED[event.code]);
      const delay = backoffDelay(attempt++, baseMs, capMs);
      ctx.setStatus("reconnecting", `retry in ${Math.ceil(delay / 1000)} s`);
      retry = setTimeout(connect, delay);
    };
  }

  function receive(data) {
    let msg;
    try {
      if (typeof data !== "string") { // a binary (v2) frame: decoded by the context, as part of applying it
        if (ctx.applyFrame(data)) ctx.setStatus("live");
        return;
      }
      msg = JSON.parse(data);
      if (msg.type === "snapshot") {
        ctx.applySnapshot(msg);
        attempt = 0;
        ctx.setStatus("live");
      } else if (msg.type === "frame" && ctx.applyFrame(msg)) {
        ctx.setStatus("live");
      } else if (msg.type === "progress") {
        ctx.applyProgress(msg);
      }
    } catch (error) {
      if (!(error instanceof FeedFormatError || error instanceof SyntaxError)) throw error;
      console.warn(`ibweb feed: dropped a message: ${error.message}`);
      if (msg?.type === "snapshot") socket?.close(4000, "bad snapshot");
    }
  }

  function checkStale(now) {
    if (ctx.status !== "live") return;
    const tickS = Number.isFinite(ctx.frame?.tickS) ? ctx.frame.tickS : ctx.fabric.tickS;
    if (now - ctx.receivedAt > staleTicks * tickS * 1000) ctx.setStatus("stale", `no frame for ${staleTicks} ticks`);
  }

  return source;
}
