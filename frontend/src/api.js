// The REST source: the fabric's API (history, rollups, routed paths, jobs, analyses), apart from the charts.

/** An API request that failed: status (0 for a network error) and the server's message. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/**
 * The CSRF token Django set in its cookie (name "csrftoken"), or "" if there is none.
 * @param {string} cookie document.cookie
 * @param {string} [name]
 * @returns {string}
 */
export function csrfToken(cookie, name = "csrftoken") {
  for (const part of String(cookie ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return "";
}

/**
 * One line from an error answer of the API: DRF field errors, nested ones too ({"params": {"patterns": ["…"]}}).
 * @param {object|null} body
 * @param {number} status
 * @returns {string}
 */
export function errorText(body, status) {
  if (!body || typeof body !== "object") return `HTTP ${status}`;
  if (body.detail) return String(body.detail);
  const flat = (value, path) => (Array.isArray(value) ? [`${path}: ${value.join(" ")}`]
    : value && typeof value === "object" ? Object.entries(value).flatMap(([k, v]) => flat(v, path ? `${path}.${k}` : k))
      : [`${path}: ${value}`]);
  return flat(body, "").join("; ") || `HTTP ${status}`;
}

/**
 * One request with `fetcher`: the parsed JSON answer, or an ApiError (status 0 when the network failed; the
 * server's message otherwise).
 * @param {function} fetcher a fetch function
 * @param {string} url
 * @param {object} init fetch's options
 * @returns {Promise<object|null>}
 */
export async function fetchJson(fetcher, url, init) {
  let response;
  try {
    response = await fetcher(url, init);
  } catch (error) {
    throw new ApiError(0, `network error: ${error.message}`);
  }
  const answer = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, errorText(answer, response.status));
  return answer;
}

/**
 * The fabric API client: `api().base("/api/").fabric("demo")`; every call returns a promise of parsed JSON.
 * Writes carry Django's CSRF token from the cookie.
 * @returns {object} with chained accessors base, fabric, fetch, cookie and calls linkHistory, linkRollups,
 *   path, jobs, partitions and analyses()
 */
export function api() {
  let base = "/api/";
  let slug = "";
  let fetcher = (...args) => globalThis.fetch(...args);
  let cookie = () => globalThis.document?.cookie ?? "";

  const root = () => `${base.replace(/\/?$/, "/")}fabrics/fabrics/${encodeURIComponent(slug)}/`;

  async function call(path, {method = "GET", params = {}, body, prefix = root()} = {}) {
    const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v != null)).toString();
    const headers = {Accept: "application/json"};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET" && method !== "OPTIONS") headers["X-CSRFToken"] = csrfToken(cookie());
    return fetchJson(fetcher, `${prefix}${path}${query ? `?${query}` : ""}`, {method, headers,
      credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body)});
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
    /** A function returning the cookie string (a stand-in for tests). */
    cookie(_) {
      return arguments.length ? ((cookie = _), client) : cookie;
    },
    /**
     * Recent series of directed link d and its reverse, followed by cable: {t, seq, rate, util, reverse_rate,
     * reverse_util (null while the cable did not exist), tx, rx, recabled, reverse_recabled: [{t, from, to}]}.
     */
    linkHistory: (d, seconds = 300) => call(`links/${d}/history/`, {params: {seconds}}),
    /** One-minute rollups of directed link d: {minute, mean_util, max_util, mean_rate_gbps, samples, coverage_s,
     * down_s}; means over the covered seconds (null when none), a minute without any tick absent. */
    linkRollups: (d, minutes = 60) => call(d < 0 ? "links/-1/rollups/" : `links/${d}/rollups/`, {params: {minutes}}),
    /** The routed path between two hosts (names or node indices): {hops, links}. */
    path: (src, dst) => call("path/", {params: {src, dst}}),
    /** The routing report: {engine, engine_used, fallback, warnings, unreachable_entries, ports, credit_loops, ...}. */
    routing: () => call("routing/"),
    /** The link health report: {fabric, t, summary, worst: [{node, node_index, guid, port, grade, reasons, peer, up,
     * ber, module, cable, downs}], swaps}; 404 before the first grading. */
    health: () => call("health/"),
    /** One port's raw BER per lane and its trend (node: a name, 0x GUID or host-<i>): {node, port, tracked, t, raw,
     * grade, lanes}; 404 for a node the view may not see or before the first grading. */
    healthPort: (node, port) => call(`health/ports/${encodeURIComponent(node)}/${port}/`),
    /** The scenario's jobs: {jobs: [{id, tenant, pattern, hosts, links}]}. */
    jobs: () => call("jobs/"),
    /** The fabric's P_Keys with their member GUIDs and nodes (UFM-style): {"0x0101": {partition, tenant, guids}}. */
    partitions: () => call("pkeys/", {prefix: `${base.replace(/\/?$/, "/")}tenancy/fabrics/${encodeURIComponent(slug)}/`}),
    /** A port's error counters on a telemetry-fed fabric (node: name or 0x GUID): {node, port, t, counters:
     * [{counter, value, rate_per_min, threshold_per_min, above}], conditions}. */
    portCounters: (node, port) => call(`ports/${encodeURIComponent(node)}/${port}/counters/`,
      {prefix: `${base.replace(/\/?$/, "/")}telemetry/fabrics/${encodeURIComponent(slug)}/`}),
    /** The digital twin of a telemetry-fed fabric: {expected, plan, events, jobs} under /api/twin/fabrics/<slug>/. */
    twin: () => {
      const prefix = `${base.replace(/\/?$/, "/")}twin/fabrics/${encodeURIComponent(slug)}/`;
      return {
        /** Ranked deviations and active alerts: {t, deviations: [{kind, key, link, label, ...}], alerts, hidden}. */
        expected: () => call("expected/", {prefix}),
        /** The cabling plan and its report: {plan, report}. */
        plan: () => call("plan/", {prefix}),
        /** Alerts raised and cleared, plan changes: {events}. */
        events: () => call("events/", {prefix}),
        /** Running jobs with bandwidth, nccl-tests figures and links: {jobs, not_running, problems}. */
        jobs: () => call("jobs/", {prefix}),
      };
    },
    /** The fabric's analyses (eBB, what-if): {list, get, canCreate, create}. */
    analyses: () => ({
      /** The newest analyses: [{id, kind, params, status, progress, result, error, ...}]. */
      list: (limit = 20) => call("analyses/", {params: {limit}}).then((page) => page.results ?? page),
      get: (id) => call(`analyses/${id}/`),
      /** Whether this visitor may start analyses (DRF lists a POST action only to those allowed). */
      canCreate: () => call("analyses/", {method: "OPTIONS"}).then((meta) => Boolean(meta?.actions?.POST), () => false),
      /** Start an analysis: kind "ebb", "whatif_links" or "whatif_engine" with its params. */
      create: (kind, params = {}) => call("analyses/", {method: "POST", body: {kind, params}}),
    }),
  };
  return client;
}
