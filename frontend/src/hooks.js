// window.ibweb: read-only hooks for end-to-end tests and benchmarks.
/**
 * Define the hooks on `target` (window): ready, seq, frames, status, stats, drawnLinks, colorDigest(),
 * linkAt(d), tooltipText().
 * @param {object} target the object to define `ibweb` on
 * @param {object} ctx the context
 * @param {function} map the topology chart
 * @returns {object} the hooks
 */
export function expose(target, ctx, map) {
  const hooks = Object.freeze({
    get ready() {
      return map.framesDrawn() > 0 && ctx.frames > 0;
    },
    get seq() {
      return ctx.frame ? ctx.frame.seq : -1;
    },
    get frames() {
      return ctx.frames;
    },
    get status() {
      return ctx.status;
    },
    stats: ctx.stats,
    get drawnLinks() {
      return map.drawnLinks();
    },
    colorDigest: map.colorDigest,
    linkAt: map.linkAt,
    tooltipText: map.tooltipText,
  });
  Object.defineProperty(target, "ibweb", {value: hooks, configurable: true});
  return hooks;
}
