// window.ibweb: read-only hooks for end-to-end tests and benchmarks.
/**
 * Define the hooks on `target` (window): ready, seq, frames, status, stats, drawnLinks, colorDigest(), linkAt(d),
 * tooltipText(); with the panels: highlight, highlightedLinks, matrix, matrixCellAt(r, c), matrixTooltip(),
 * hotspots, selectedJob, detail, sharpRows(), storageRows(), twin (the twin panel: mode, rows, overlaid cables),
 * health (the Health overlay: on, legend, cables, marks), overlayColorOf(cable), congestionTree (the credit model's
 * tree: cables the last redraw drew as roots and held, and the frame's).
 * @param {object} target the object to define `ibweb` on
 * @param {object} ctx the context
 * @param {function} map the topology chart
 * @param {object} [panels] {matrix, hotspots, jobs, detail, sharp, storage, twin, health} charts
 * @returns {object} the hooks
 */
export function expose(target, ctx, map, panels = {}) {
  const {matrix, hotspots, jobs, detail, sharp, storage, twin, health} = panels;
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
    /** Bundles of switch cables drawn in the last redraw (0: none), bundleAt(j), drillDown(j) and the zoom. */
    get bundles() {
      return map.bundlesDrawn();
    },
    bundleAt: map.bundleAt,
    drillDown: (j) => map.drillDown({kind: "bundle", index: j}),
    get zoom() {
      return map.zoomK();
    },
    colorDigest: map.colorDigest,
    linkAt: map.linkAt,
    tooltipText: map.tooltipText,
    /** The highlight shown: {kind, label, cables, nodes} (counts), or null. */
    get highlight() {
      const h = ctx.highlighted;
      return h && {kind: h.kind, label: h.label, cables: h.cables.length, nodes: h.nodes.length};
    },
    get highlightedLinks() {
      return map.highlightedLinks();
    },
    /** Jobs known with their links (jobs API). */
    get catalog() {
      return ctx.catalog.length;
    },
    get matrix() {
      return matrix ? matrix.cells() : null;
    },
    matrixCellAt: (r, c) => matrix?.cellAt(r, c) ?? null,
    matrixTooltip: () => matrix?.tooltipText() ?? "",
    get hotspots() {
      return hotspots ? hotspots.rows().map((r) => ({...r})) : [];
    },
    get selectedJob() {
      return jobs ? jobs.selected() : null;
    },
    /** The port detail: {cable, points, error}. */
    get detail() {
      return detail ? detail.state() : null;
    },
    /** The SHARP panel: {seq, summary, switches, jobs, events, drawn: row counts in the page}, or null. */
    sharpRows: () => (sharp ? structuredClone(sharp.rows()) : null),
    /** The storage panel: {seq, modelled, servers, tenants, jobs, checkpoints, recent, drawn}, or null. */
    storageRows: () => (storage ? structuredClone(storage.rows()) : null),
    /** The twin panel: {mode, rows: ranked deviations, overlaid: cables drawn by the map overlay}, or null. */
    get twin() {
      return twin ? {mode: twin.mode(), rows: structuredClone(twin.rows()), overlaid: map.overlaidLinks?.() ?? 0} : null;
    },
    /** The Health overlay: {on, legend: labels, cables: [[cable, grade]], marks: [{node, cable, kind}]}, or null. */
    get health() {
      if (!health) return null;
      const shown = health.shown();
      return {on: health.on(), legend: health.legend(),
        cables: shown ? [...shown.cables].map(([c, v]) => [c, v.grade]) : [],
        marks: shown ? shown.marks.map(({node, cable, kind}) => ({node, cable, kind})) : []};
    },
    /** The congestion tree: {drawn: {roots, held} (cables drawn by the last redraw), roots, held (the frame's)}. */
    get congestionTree() {
      const tree = ctx.frame?.congestionTree;
      return {drawn: map.treeDrawn(), roots: tree ? [...tree.roots] : [], held: tree ? [...tree.held] : []};
    },
    /** The map overlay's colour of cable c in the last redraw (null: not overlaid). */
    overlayColorOf: (c) => map.overlayColor?.(c) ?? null,
  });
  Object.defineProperty(target, "ibweb", {value: hooks, configurable: true});
  return hooks;
}
