// The per-port history API (issue 40, ibweb/live/api/tsdb_views.py) for the History page, the port panel and the
// Health page: a port's series over a window in bins, the top-N ports of a series. Requests go through one
// queue of at most `limit` at a time, in the order asked (a page of charts fills from the top).
import {fetchJson} from "../api.js";

/**
 * A queue running at most `limit` promise-returning jobs at once, first asked first run.
 * @param {number} limit
 * @returns {function(function(): Promise): Promise}
 */
export function limiter(limit) {
  let running = 0;
  const waiting = [];
  const next = () => {
    if (running >= limit || !waiting.length) return;
    const {job, resolve, reject} = waiting.shift();
    running += 1;
    Promise.resolve().then(job).then(resolve, reject).finally(() => {
      running -= 1;
      next();
    });
  };
  return (job) => new Promise((resolve, reject) => {
    waiting.push({job, resolve, reject});
    next();
  });
}

/** Ports one request of `portsSeries` asks for at most (the API's cap, ibweb/live/api/tsdb_ports.py MAX_PORTS). */
export const BATCH_PORTS = 64;
/** Values (ports x series x points) one request of `portsSeries` asks for at most (the API's MAX_VALUES). */
export const BATCH_VALUES = 1 << 19;

/**
 * `tsdbClient().base("/api/").fabric(slug)`: every call a promise of the parsed answer, an ApiError otherwise.
 * @returns {object} with chained accessors base, fabric, fetch, limit and calls portSeries, portsSeries, switchSeries, top, jobLinks, jobs
 */
export function tsdbClient() {
  let base = "/api/";
  let slug = "";
  let fetcher = (...args) => globalThis.fetch(...args);
  let queue = limiter(6);

  const root = () => `${base.replace(/\/?$/, "/")}fabrics/fabrics/${encodeURIComponent(slug)}/`;

  async function get(path, params) {
    const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v != null)
      .flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]]))).toString();
    return queue(() => fetchJson(fetcher, `${root()}${path}${query ? `?${query}` : ""}`,
      {headers: {Accept: "application/json"}, credentials: "same-origin"}));
  }

  const round = (s) => Math.round(s * 1000) / 1000;
  const client = {
    base(_) {
      return arguments.length ? ((base = _), client) : base;
    },
    fabric(_) {
      return arguments.length ? ((slug = _), client) : slug;
    },
    /** The fetch function (a stand-in for tests). */
    fetch(_) {
      return arguments.length ? ((fetcher = _), client) : fetcher;
    },
    /** Requests at once (a new queue). */
    limit(_) {
      return (queue = limiter(_)), client;
    },
    /**
     * A port's series over [start, end) in `points` bins: {node, port, series, unit, agg, start, end, t, values}
     * (node: a name, 0x GUID or host-<i>).
     */
    portSeries: (node, port, series, {start, end, points}) => get(
      `ports/${encodeURIComponent(node)}/${port}/tsdb/`, {series, start: round(start), end: round(end), points}),
    /**
     * Several ports' series over [start, end) in `points` bins, in as few requests as the API's caps allow
     * (BATCH_PORTS ports and BATCH_VALUES values a request): {t, start, end, series: {name: {unit, agg}},
     * ports: [{asked, node, port, values: {name: [...]}, swaps} or {asked, node, port, error: {status, detail}}]}
     * with the ports in the order asked.
     * @param {{node: string, port: number}[]} ports
     * @param {string[]} series
     */
    portsSeries: (ports, series, {start, end, points}) => {
      const per = Math.max(1, Math.min(BATCH_PORTS, Math.floor(BATCH_VALUES / Math.max(1, series.length * points))));
      const groups = [];
      for (let i = 0; i < ports.length; i += per) groups.push(ports.slice(i, i + per));
      return Promise.all(groups.map((group) => get("tsdb/ports/", {port: group.map((p) => `${p.node}:${p.port}`),
        series, start: round(start), end: round(end), points})))
        .then((answers) => ({...answers[0], ports: answers.flatMap((a) => a.ports)}));
    },
    /**
     * A switch's (a node's) ports side by side over [start, end) in `points` bins: {node, series, unit, agg, start,
     * end, t, ports: [{port, peer, values}]}.
     */
    switchSeries: (node, series, {start, end, points}) => get(`nodes/${encodeURIComponent(node)}/tsdb/`,
      {series, start: round(start), end: round(end), points}),
    /** The `n` ports highest in a series over the window (lowest for a `min` series): {series, unit, ports:
     * [{node, guid, port, value}]}. */
    top: (series, {start, end, n = 10}) => get("tsdb/top/", {series, start: round(start), end: round(end), n}),
    /**
     * A job's links over its run (no start/end) or a window: {job, tenant, running, first, last, series, unit,
     * start, end, t, count, links: [{node, guid, port, peer, value, values}]} (the hottest `n` first).
     */
    jobLinks: (job, {series = "utilization", start, end, points, n} = {}) => get(`jobs/${encodeURIComponent(job)}/tsdb/`,
      {series, start: start == null ? null : round(start), end: end == null ? null : round(end), points, n}),
    /** The fabric's running jobs (the catalog): {jobs: [{id, tenant, ...}]}. */
    jobs: () => get("jobs/", {}).then((a) => a.jobs ?? []),
  };
  return client;
}
