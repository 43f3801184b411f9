// The REST source: the fabric's live API (history, rollups, routed paths, jobs), apart from the charts.

/** An API request that failed: status (0 for a network error) and the server's message. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/**
 * The fabric API client: `api().base("/api/").fabric("demo")`; every call returns a promise of parsed JSON.
 * @returns {object} with chained accessors base, fabric, fetch and calls linkHistory, linkRollups, path, jobs
 */
export function api() {
  let base = "/api/";
  let slug = "";
  let fetcher = (...args) => globalThis.fetch(...args);

  const root = () => `${base.replace(/\/?$/, "/")}fabrics/fabrics/${encodeURIComponent(slug)}/`;

  async function get(path, params = {}) {
    const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v != null)).toString();
    let response;
    try {
      response = await fetcher(`${root()}${path}${query ? `?${query}` : ""}`, {headers: {Accept: "application/json"},
        credentials: "same-origin"});
    } catch (error) {
      throw new ApiError(0, `network error: ${error.message}`);
    }
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      const detail = body && (body.detail ?? Object.entries(body).map(([k, v]) => `${k}: ${v}`).join("; "));
      throw new ApiError(response.status, detail || `HTTP ${response.status}`);
    }
    return body;
  }

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
    /** Recent series of directed link d and its reverse: {t, seq, rate, util, reverse_rate, reverse_util}. */
    linkHistory: (d, seconds = 300) => get(`links/${d}/history/`, {seconds}),
    /** One-minute rollups of directed link d: {minute, mean_util, max_util, mean_rate_gbps, samples}. */
    linkRollups: (d, minutes = 60) => get(d < 0 ? "links/-1/rollups/" : `links/${d}/rollups/`, {minutes}),
    /** The routed path between two hosts (names or node indices): {hops, links}. */
    path: (src, dst) => get("path/", {src, dst}),
    /** The scenario's jobs: {jobs: [{id, tenant, pattern, hosts, links}]}. */
    jobs: () => get("jobs/"),
  };
  return client;
}
