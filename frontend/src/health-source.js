// The fabric's link health report, fetched from the health API for the map overlay and the port panel alike:
// one request at a time, a report younger than maxAgeMs reused, listeners told of every answer.
import {healthProblem} from "./health-rows.js";

/**
 * A health source: `healthSource(() => client.health())`.
 * @param {() => Promise<object>} fetchReport the health API call
 * @param {{maxAgeMs?: number, now?: () => number}} [options]
 * @returns {{get: () => Promise<void>, refresh: () => Promise<void>, on: (name: string, f: function|null) => void,
 *   report: () => object|null, problem: () => string}} report: the newest report (null: none); problem: why none
 */
export function healthSource(fetchReport, {maxAgeMs = 10000, now = () => performance.now()} = {}) {
  let report = null;
  let problem = "";
  let at = -Infinity;
  let busy = null;
  const listeners = new Map();

  function refresh() {
    busy ??= fetchReport().then((answer) => {
      report = answer;
      problem = "";
    }, (error) => {
      report = null;
      problem = healthProblem(error);
    }).finally(() => {
      at = now();
      busy = null;
      for (const f of listeners.values()) f(report, problem);
    });
    return busy;
  }

  return {
    /** Fetch unless the newest answer is younger than maxAgeMs. */
    get: () => (now() - at < maxAgeMs ? Promise.resolve() : refresh()),
    refresh,
    /** Listen to answers under a name (null removes it): f(report, problem). */
    on(name, f) {
      if (f) listeners.set(name, f);
      else listeners.delete(name);
    },
    report: () => report,
    problem: () => problem,
  };
}
