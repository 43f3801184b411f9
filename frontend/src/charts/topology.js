// The fabric map: nodes and cables on one canvas, coloured by utilization, with zoom, pan, hover and selection.
//
// Cables are bucketed by colour (counting sort into a preallocated order) and stroked as one path per bucket,
// coolest first, so a frame costs a few passes over typed arrays and at most BUCKETS strokes. Zoom and pan are
// horizontal only: a fat tree is a few rows and thousands of columns wide. Fabrics with more than aggregateAbove
// hosts start aggregated: each leaf's hosts are one bar, its host cables one line coloured by the hottest of them,
// until zoomed in far enough that neighbouring hosts are expandPx apart on screen. Fabrics with more than bundleDensity
// switch-to-switch cables per pixel of width (a 32,768-GPU fabric has 65,536) draw those as bundles: the cables
// between one scalable unit (or stretch of a tier) and one stretch of the tier above are one line, coloured by the
// hottest of them and as wide as their count says; clicking a bundle zooms into its group (drill-down), where
// cables are drawn one by one and only those on screen are traced.
//
// A new topology of the same fabric (a cable cut, a node gone or new) keeps every node where it was, by GUID, and the
// zoom with it (keepLayout). Node names are HTML labels over the canvas, chosen on a snapshot, zoom, pan or resize
// (never per frame) among the nodes whose name fits between them and their neighbours on screen, at most maxLabels.
// Cables the newest frame's condition alerts say are down (gone from the fabric: between their two nodes, red) or
// degraded (in their own place, in their colour) are drawn dashed over everything else, whatever overlay is shown.
// With the credit flow control model, the frame's congestion tree is drawn over the utilization: its roots' cables
// thick in ROOT_COLOR, the cables held back by credits dashed in HELD_COLOR (congestion-tree.js; the legend's keys).
import {quadtree, zoom, zoomIdentity} from "d3";
import {BUCKETS, BUCKET_COLORS, CONGESTED, bucketOf} from "../colors.js";
import {DOWN, cableTooltip, conditionCables, conditionsKey, downTooltip} from "../conditions.js";
import {HELD_COLOR, HELD_DASH, ROOT_COLOR, treeSummary} from "../congestion-tree.js";
import {formatUtil, nodeLines} from "../format.js";
import {labelIndex, labelWidths, visibleLabels} from "../labels.js";
import {keepLayout} from "../layout.js";

const MARGIN = 24;
const HIT_PX = 10;
const PAN_PX = 80;
const NODE_FILL = ["#8a93a0", "#d5dae1", "#d5dae1", "#d5dae1"];
const SELECTED = "#ff4fd8";
const DASH = "#0e1217";
const DIM = "rgba(14, 18, 23, 0.72)";
const HIGHLIGHT_NODE = "#7cb7ff";
const DOWN_COLOR = "#e5534b";
const CONDITION_DASH = [6, 4];
const LABEL_FONT = "11px system-ui, -apple-system, \"Segoe UI\", sans-serif"; // .ibweb-label in ibweb.css
const HOST_LABEL_SCALE = 10 / 11; // host names are 10 px (.ibweb-label-host)
const KEYS = "Left and right arrows pan, plus and minus zoom, 0 resets the view, Escape clears the selection.";

/**
 * The topology chart: `selection.call(topology().context(ctx))`.
 * @returns {function} the chart, with chained accessors context, aggregateAbove, expandPx, bundleDensity, maxLabels,
 *   labels, overlay, marks and read-outs overlayColor, drawnLinks, framesDrawn, colorDigest, linkAt, nodeAt,
 *   tooltipText, labelCount, labelUpdates, conditions, and actions zoomBy, resetZoom, drillDown
 */
export function topology() {
  let ctx = null;
  let aggregateAbove = 4000;
  let expandPx = 2;
  let bundleDensity = 4;
  let maxLabels = 240;
  let labelsOn = true;

  let root;
  let canvas;
  let g;
  let tooltip;
  let labelLayer;
  let zoomer;
  let k = 1; // horizontal zoom: screen x = tx + k * x
  let tx = 0;
  let width = 0;
  let height = 0;
  let dpr = 1;
  let pending = 0;

  let fabric = null;
  let lay = null;
  let hosts = 0;
  let px = null; // node x at zoom 1, CSS px
  let py = null; // node y, CSS px
  let unit = 1; // CSS px per layout unit at zoom 1
  let gaps = [1, 1, 1, 1]; // smallest distance between two nodes of a tier, in layout units
  let handle = null; // per cable: where along it (0..1) its hover handle sits
  let trees = null; // quadtrees of hover items at zoom 1: always shown, hosts and their cables, leaf aggregates

  let buckets = null; // Uint8Array(L): colour bucket per cable
  let order = null; // Int32Array(L): drawn cables sorted by bucket
  let leafUtil = null; // Float32Array(n): hottest host cable per leaf
  let bundleOf = null; // Int32Array(L): bundle of a switch-to-switch cable, -1 for host cables
  let bundles = null; // {count, lo, hi: Int32Array (a node of each end, for the tooltip), x0, y0, x1, y1 (mean
  // position of each end at zoom 1), cables: Int32Array, group: Int32Array (the lower end's group, -1 none)}
  let bundleUtil = null; // Float32Array: hottest cable per bundle
  let switchCables = 0;
  let bundlesDrawn = 0;
  const counts = new Uint32Array(BUCKETS);
  const offsets = new Uint32Array(BUCKETS + 1);
  const next = new Uint32Array(BUCKETS);
  let drawn = 0;
  let highlighted = 0;
  let framesDrawn = 0;
  let lines = []; // tooltip lines shown, [] when hidden
  let overlay = null; // () => Map(colour -> cables) drawn over the map (the twin's expected-vs-observed or plan)
  let overlaid = 0;
  let overlayGroups = null; // the overlay's Map(colour -> cables) of the last redraw
  let marks = null; // () => [{node, cable, color}]: ports marked at their cable's end (link health), over the overlay

  let labelRows = null; // labelIndex of the current layout
  let labelsDirty = true; // the view changed since the labels were chosen
  let labelled = 0;
  let labelUpdates = 0;

  let conditions = []; // conditionCables of the newest frame's alerts
  let treeDrawn = {roots: 0, held: 0}; // cables of the congestion tree drawn by the last redraw
  let conditionsDrawn = ""; // conditionsKey of those
  let conditionTree = null; // quadtree of their hover items at zoom 1

  function chart(selection) {
    root = selection.classed("ibweb-topology", true);
    canvas = root
      .append("canvas")
      .attr("tabindex", 0)
      .attr("role", "img")
      .attr("aria-label", `Fabric map. ${KEYS}`)
      .on("pointermove", (event) => hover(hit(event.offsetX, event.offsetY), event))
      .on("pointerleave", () => hover(null))
      .on("click", (event) => {
        const item = hit(event.offsetX, event.offsetY);
        if (item && item.kind === "bundle") chart.drillDown(item);
        else if (!item || item.kind !== DOWN) ctx.select(item); // a down cable is no link to show the detail of
      })
      .on("keydown", keyed);
    g = canvas.node().getContext("2d");
    labelLayer = root.append("div").attr("class", "ibweb-labels").attr("aria-hidden", "true");
    tooltip = root.append("div").attr("class", "ibweb-tooltip").attr("role", "tooltip").property("hidden", true);
    zoomer = zoom()
      .scaleExtent([1, 64])
      .constrain((t) => zoomIdentity.translate(Math.min(0, Math.max(width * (1 - t.k), t.x)), 0).scale(t.k))
      .on("zoom", (event) => {
        ({k, x: tx} = event.transform);
        labelsDirty = true;
        schedule();
      });
    canvas.call(zoomer).on("dblclick.zoom", null);
    new ResizeObserver(resized).observe(root.node());
    resized();
    ctx.on("snapshot.topology", snapshot).on("frame.topology", framed).on("select.topology", schedule)
      .on("highlight.topology", schedule);
  }

  function resized() {
    const box = root.node().getBoundingClientRect();
    if (box.width === width && box.height === height) return;
    width = box.width;
    height = box.height;
    dpr = window.devicePixelRatio || 1;
    canvas.attr("width", Math.round(width * dpr)).attr("height", Math.round(height * dpr));
    canvas.style("width", `${width}px`).style("height", `${height}px`);
    zoomer.extent([[0, 0], [width, height]]);
    place();
    updateLabels();
    redraw();
  }

  function snapshot(next) {
    const previous = fabric && lay ? {guids: fabric.nodes.guid, names: fabric.nodes.name, layout: lay} : null;
    fabric = next;
    lay = keepLayout(fabric, previous);
    conditions = [];
    conditionsDrawn = "";
    const {isHost, isAggregation} = fabric.nodes;
    hosts = isHost.reduce((sum, h, i) => sum + (h && !isAggregation[i] ? 1 : 0), 0);
    const {L, n} = fabric;
    buckets = new Uint8Array(L);
    order = new Int32Array(L);
    leafUtil = new Float32Array(n);
    handle = Float32Array.from({length: L}, (_, c) => 0.4 + 0.2 * ((c * 0.6180339887) % 1));
    makeBundles();
    gaps = [0, 1, 2, 3].map((t) => {
      const xs = lay.x.filter((_, i) => lay.tierOf[i] === t && lay.switchOf[i] < 0).sort(); // not Aggregation Nodes
      let gap = lay.width;
      for (let j = 1; j < xs.length; ++j) gap = Math.min(gap, xs[j] - xs[j - 1]);
      return gap;
    });
    g.font = LABEL_FONT;
    const widths = labelWidths(fabric.nodes.name, (ch) => g.measureText(ch).width);
    for (let i = 0; i < n; ++i) if (isHost[i]) widths[i] *= HOST_LABEL_SCALE;
    labelRows = labelIndex(lay, widths);
    describe();
    hover(null);
    place();
    labelLayer.selectAll("span").remove(); // node indices name other nodes now
    labelsDirty = true;
    if (lay.kept) schedule(); // the same fabric: its nodes and the zoom stay where they were
    else canvas.call(zoomer.transform, zoomIdentity);
  }

  // The canvas' accessible name: the fabric's counts and the cables down or degraded now.
  function describe() {
    const {isHost} = fabric.nodes;
    const switches = isHost.reduce((sum, h) => sum + (h ? 0 : 1), 0);
    const down = conditions.filter((d) => d.state === DOWN).length;
    const worse = conditions.length - down;
    const state = conditions.length ? ` ${down} down, ${worse} degraded.` : "";
    const tree = treeSummary(ctx.frame?.congestionTree);
    canvas.attr("aria-label", `Fabric map of ${fabric.name}: ${hosts} hosts, ${switches} switches, ${fabric.L} cables.${state}${tree} ${KEYS}`);
  }

  // The newest frame: its condition alerts (a few), then the redraw.
  function framed(frame) {
    conditions = conditionCables(frame.alerts, fabric);
    const tree = frame.congestionTree;
    const key = `${conditionsKey(conditions)}|${tree ? `${tree.roots.join(",")}/${tree.held.join(",")}` : ""}`;
    if (key !== conditionsDrawn) {
      conditionsDrawn = key;
      placeConditions();
      describe();
    }
    redraw();
  }

  // Hover items of the condition cables at zoom 1: a down cable's middle, a degraded cable's handle.
  function placeConditions() {
    if (!px) return void (conditionTree = null);
    const items = conditions.map((d, j) => {
      if (d.state !== DOWN) {
        const [x, y] = handleAt(d.cable);
        return {kind: "link", index: d.cable, x, y};
      }
      return {kind: DOWN, index: j, x: (px[d.a] + px[d.b]) / 2, y: (py[d.a] + py[d.b]) / 2};
    });
    conditionTree = items.length ? quadtree(items, (d) => d.x, (d) => d.y) : null;
  }

  // Choose and place the name labels for the view shown: on a snapshot, zoom, pan or resize, never per frame.
  function updateLabels() {
    labelsDirty = false;
    if (!labelLayer) return;
    let shown = new Int32Array(0);
    if (fabric && px && labelsOn && labelRows) {
      const x0 = ((0 - tx) / k - MARGIN) / unit;
      const x1 = ((width - tx) / k - MARGIN) / unit;
      shown = visibleLabels(labelRows, {scale: k * unit, x0, x1, hosts: !aggregated()}, maxLabels);
    }
    ++labelUpdates;
    labelled = shown.length;
    const {name, guid, isHost} = fabric?.nodes ?? {};
    labelLayer
      .selectAll("span")
      .data(shown, (i) => i)
      .join((enter) => enter.append("span").attr("class", "ibweb-label").classed("ibweb-label-host", (i) => isHost[i])
        .attr("data-guid", (i) => guid[i]).text((i) => name[i]))
      .style("transform", (i) => `translate(${tx + k * px[i]}px, ${py[i]}px) translateX(-50%)`); // the node; CSS drops it
  }

  // Bundles of switch-to-switch cables: (group of the lower end, or its stretch of the layout) x (stretch of the
  // upper end's tier), BINS stretches per tier across the layout's width.
  function makeBundles() {
    const {L} = fabric;
    const {a, b} = fabric.links;
    const {group} = fabric.nodes;
    const BINS = 48;
    const binOf = (i) => Math.min(BINS - 1, Math.floor((lay.x[i] / Math.max(lay.width, 1)) * BINS));
    bundleOf = new Int32Array(L).fill(-1);
    const ids = new Map();
    const lo = [];
    const hi = [];
    const grp = [];
    switchCables = 0;
    for (let c = 0; c < L; ++c) {
      if (lay.cableLeaf[c] >= 0 || fabric.nodes.isHost[a[c]] || fabric.nodes.isHost[b[c]]) continue;
      ++switchCables;
      const [p, q] = lay.tierOf[a[c]] <= lay.tierOf[b[c]] ? [a[c], b[c]] : [b[c], a[c]];
      const low = group[p] >= 0 ? `g${group[p]}` : `b${binOf(p)}`;
      const key = `${lay.tierOf[p]}:${low}:${lay.tierOf[q]}:${binOf(q)}`;
      let id = ids.get(key);
      if (id === undefined) {
        ids.set(key, (id = lo.length));
        lo.push(p), hi.push(q), grp.push(group[p]);
      }
      bundleOf[c] = id;
    }
    const count = lo.length;
    bundles = {count, lo: Int32Array.from(lo), hi: Int32Array.from(hi), group: Int32Array.from(grp),
      cables: new Int32Array(count), x0: new Float64Array(count), y0: new Float64Array(count),
      x1: new Float64Array(count), y1: new Float64Array(count)};
    bundleUtil = new Float32Array(count);
  }

  // Bundle ends at zoom 1: the mean position of the cables' lower and upper ends.
  function placeBundles() {
    const {a, b} = fabric.links;
    const B = bundles;
    B.cables.fill(0), B.x0.fill(0), B.y0.fill(0), B.x1.fill(0), B.y1.fill(0);
    for (let c = 0; c < fabric.L; ++c) {
      const k = bundleOf[c];
      if (k < 0) continue;
      const [p, q] = lay.tierOf[a[c]] <= lay.tierOf[b[c]] ? [a[c], b[c]] : [b[c], a[c]];
      ++B.cables[k];
      B.x0[k] += px[p], B.y0[k] += py[p], B.x1[k] += px[q], B.y1[k] += py[q];
    }
    for (let k = 0; k < B.count; ++k) {
      const n = Math.max(1, B.cables[k]);
      B.x0[k] /= n, B.y0[k] /= n, B.x1[k] /= n, B.y1[k] /= n;
    }
  }

  // Node positions at zoom 1 and the hover quadtrees, after a snapshot or a resize.
  function place() {
    if (!fabric || !width) return;
    const {n, L} = fabric;
    unit = (width - 2 * MARGIN) / lay.width;
    const row = lay.rows > 1 ? (height - 2 * MARGIN) / (lay.rows - 1) : 0;
    px = Float32Array.from(lay.x, (x) => MARGIN + x * unit);
    py = Float32Array.from(lay.y, (y) => (lay.rows > 1 ? MARGIN + y * row : height / 2));
    // Zoom in far enough for hosts to be drawn one by one, and for every node's name to fit.
    const named = labelRows ? Math.max(0, ...labelRows.rows.map((r) => r.most)) / unit : 0;
    zoomer.scaleExtent([1, Math.max(64, (8 * expandPx) / (unit * gaps[0]), 1.1 * named)]);
    const items = {always: [], detail: [], leaves: [], nodes: []};
    for (let i = 0; i < n; ++i) {
      const item = {kind: "node", index: i, x: px[i], y: py[i]};
      items[fabric.nodes.isHost[i] ? "detail" : "always"].push(item);
      if (!fabric.nodes.isHost[i]) items.nodes.push(item);
    }
    for (let c = 0; c < L; ++c) {
      const [x, y] = handleAt(c);
      items[lay.cableLeaf[c] >= 0 ? "detail" : "always"].push({kind: "link", index: c, x, y});
    }
    for (const s of lay.leaves) if (lay.hostCount[s]) items.leaves.push({kind: "leaf", index: s, x: barX(s), y: barY()});
    placeBundles();
    items.bundles = [];
    for (let k = 0; k < bundles.count; ++k) {
      items.bundles.push({kind: "bundle", index: k, x: (bundles.x0[k] + bundles.x1[k]) / 2, y: (bundles.y0[k] + bundles.y1[k]) / 2});
    }
    trees = Object.fromEntries(Object.entries(items).map(([key, v]) => [key, quadtree(v, (d) => d.x, (d) => d.y)]));
    placeConditions();
  }

  const handleAt = (c) => {
    const {a, b} = fabric.links;
    const t = handle[c];
    return [px[a[c]] + t * (px[b[c]] - px[a[c]]), py[a[c]] + t * (py[b[c]] - py[a[c]])];
  };
  const barX = (s) => MARGIN + ((lay.spanStart[s] + lay.spanEnd[s]) / 2) * unit;
  const barY = () => height - MARGIN;
  const aggregated = () => hosts > aggregateAbove && k * unit * gaps[0] < expandPx;
  // Switch cables bundled while more than bundleDensity of them would be drawn per pixel of the map's width.
  const bundled = () => switchCables > bundleDensity * k * Math.max(width, 1);

  function schedule() {
    pending ||= requestAnimationFrame(() => {
      pending = 0;
      if (labelsDirty) updateLabels();
      redraw();
    });
  }

  function redraw() {
    if (!fabric || !px || !ctx.frame) return;
    const {L} = fabric;
    const {cableLeaf} = lay;
    const {cableUtil} = ctx.frame;
    const agg = aggregated();
    const bun = bundled();
    const {a, b} = fabric.links;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);

    // Count drawn cables per bucket, then order them by bucket (counting sort); cables in a bundle or an aggregate,
    // and cables off screen (both ends on one side), are not drawn one by one.
    const x0 = -tx / k;
    const x1 = (width - tx) / k;
    const skip = (c) => (agg && cableLeaf[c] >= 0) || (bun && bundleOf[c] >= 0) ||
      (k > 1 && ((px[a[c]] < x0 && px[b[c]] < x0) || (px[a[c]] > x1 && px[b[c]] > x1)));
    counts.fill(0);
    for (let c = 0; c < L; ++c) {
      buckets[c] = skip(c) ? 255 : bucketOf(cableUtil[c]);
      if (buckets[c] !== 255) ++counts[buckets[c]];
    }
    offsets[0] = 0;
    for (let j = 0; j < BUCKETS; ++j) offsets[j + 1] = offsets[j] + counts[j];
    drawn = offsets[BUCKETS];
    next.set(offsets.subarray(0, BUCKETS));
    for (let c = 0; c < L; ++c) if (buckets[c] !== 255) order[next[buckets[c]]++] = c;
    if (bun) drawBundles();
    else bundlesDrawn = 0;

    g.lineCap = "butt";
    for (let j = 0; j < BUCKETS; ++j) {
      if (!counts[j]) continue;
      g.beginPath();
      traceCables(offsets[j], offsets[j + 1]);
      g.strokeStyle = BUCKET_COLORS[j];
      g.lineWidth = j === CONGESTED ? 3 : 1;
      g.stroke();
    }
    if (counts[CONGESTED]) {
      g.beginPath();
      traceCables(offsets[CONGESTED], offsets[BUCKETS]);
      g.setLineDash([4, 4]);
      g.strokeStyle = DASH;
      g.stroke();
      g.setLineDash([]);
    }
    if (agg) drawAggregates();
    drawNodes(agg);
    drawOverlay();
    drawTree();
    drawMarks();
    drawHighlight();
    drawConditions();
    drawSelection();
    ++framesDrawn;
    if (ctx.hovered) showTooltip(ctx.hovered);
  }

  function traceCables(from, to) {
    const {a, b} = fabric.links;
    for (let o = from; o < to; ++o) {
      const c = order[o];
      g.moveTo(tx + k * px[a[c]], py[a[c]]);
      g.lineTo(tx + k * px[b[c]], py[b[c]]);
    }
  }

  // Bundles, coolest first: each a line between the mean positions of its ends, as wide as log2 of its cables.
  function drawBundles() {
    const B = bundles;
    const {cableUtil} = ctx.frame;
    bundleUtil.fill(0);
    for (let c = 0; c < fabric.L; ++c) {
      const j = bundleOf[c];
      if (j >= 0 && cableUtil[c] > bundleUtil[j]) bundleUtil[j] = cableUtil[c];
    }
    // One path per (colour, width): a few dozen strokes for thousands of bundles.
    const paths = new Map();
    for (let j = 0; j < B.count; ++j) {
      const w = Math.min(6, Math.round(2 + Math.log2(Math.max(1, B.cables[j])))) / 2;
      const key = bucketOf(bundleUtil[j]) * 16 + w * 2;
      let p = paths.get(key);
      if (!p) paths.set(key, (p = new Path2D()));
      p.moveTo(tx + k * B.x0[j], B.y0[j]);
      p.lineTo(tx + k * B.x1[j], B.y1[j]);
    }
    g.lineCap = "round";
    for (const key of [...paths.keys()].sort((p, q) => p - q)) {
      g.strokeStyle = BUCKET_COLORS[Math.floor(key / 16)];
      g.lineWidth = (key % 16) / 2;
      g.stroke(paths.get(key));
    }
    bundlesDrawn = B.count;
  }

  function drawAggregates() {
    const {cableUtil} = ctx.frame;
    leafUtil.fill(0);
    for (let c = 0; c < fabric.L; ++c) {
      const s = lay.cableLeaf[c];
      if (s >= 0 && cableUtil[c] > leafUtil[s]) leafUtil[s] = cableUtil[c];
    }
    g.lineWidth = 2;
    const lines = new Map(); // colour bucket -> [line path, bar path]: one stroke and one fill per colour
    for (const s of lay.leaves) {
      if (!lay.hostCount[s]) continue;
      const x0 = tx + k * (MARGIN + lay.spanStart[s] * unit);
      const x1 = tx + k * (MARGIN + lay.spanEnd[s] * unit);
      const j = bucketOf(leafUtil[s]);
      let p = lines.get(j);
      if (!p) lines.set(j, (p = [new Path2D(), new Path2D()]));
      p[0].moveTo(tx + k * px[s], py[s]);
      p[0].lineTo(tx + k * barX(s), barY());
      p[1].rect(x0 + 0.5, barY() - 3, Math.max(1, x1 - x0 - 1), 6);
    }
    for (const [j, [line, bars]] of lines) {
      g.strokeStyle = g.fillStyle = BUCKET_COLORS[j];
      g.stroke(line);
      g.fill(bars);
    }
  }

  function drawNodes(agg) {
    const {isHost} = fabric.nodes;
    for (let t = agg ? 1 : 0; t < 4; ++t) {
      const size = Math.max(t ? 3 : 1.5, Math.min(t ? 10 : 6, 0.6 * k * unit * gaps[t]));
      g.beginPath();
      for (let i = 0; i < fabric.n; ++i) {
        if (lay.tierOf[i] === t && !(agg && isHost[i])) g.rect(tx + k * px[i] - size / 2, py[i] - size / 2, size, size);
      }
      g.fillStyle = NODE_FILL[t];
      g.fill();
    }
  }

  // An overlay (the twin's deviations or the plan's differences): dim the map, stroke its cables in their colours.
  function drawOverlay() {
    const groups = overlay ? overlay() : null;
    overlaid = 0;
    overlayGroups = groups;
    if (!groups || !groups.size) return;
    const {a, b} = fabric.links;
    g.fillStyle = DIM;
    g.fillRect(0, 0, width, height);
    g.lineWidth = 3;
    for (const [color, cables] of groups) {
      g.beginPath();
      for (const c of cables) {
        g.moveTo(tx + k * px[a[c]], py[a[c]]);
        g.lineTo(tx + k * px[b[c]], py[b[c]]);
      }
      g.strokeStyle = color;
      g.stroke();
      overlaid += cables.length;
    }
  }

  // The congestion tree (credit flow control): held-back cables dashed, then the roots thick, over the utilization.
  function drawTree() {
    const tree = ctx.frame.congestionTree;
    treeDrawn = {roots: 0, held: 0};
    if (!tree || (overlay && overlay())) return; // an overlay (twin, health) owns the colours while it is shown
    const {a, b} = fabric.links;
    const path = (cables) => {
      const p = new Path2D();
      for (const c of cables) {
        p.moveTo(tx + k * px[a[c]], py[a[c]]);
        p.lineTo(tx + k * px[b[c]], py[b[c]]);
      }
      return p;
    };
    g.lineCap = "butt";
    g.setLineDash(HELD_DASH);
    g.lineWidth = 2;
    g.strokeStyle = HELD_COLOR;
    g.stroke(path(tree.held));
    g.setLineDash([]);
    g.lineWidth = 4;
    g.strokeStyle = ROOT_COLOR;
    g.stroke(path(tree.roots));
    treeDrawn = {roots: tree.roots.length, held: tree.held.length};
  }

  // Port marks: a ring at the node's end of the port's cable (a fifth of the way along it), in the mark's colour.
  function drawMarks() {
    const shown = marks ? marks() : null;
    if (!shown?.length) return;
    const {a, b} = fabric.links;
    g.lineWidth = 2;
    for (const {node, cable, color} of shown) {
      if (!(cable >= 0 && cable < fabric.L)) continue;
      const other = a[cable] === node ? b[cable] : a[cable];
      const x = tx + k * (px[node] + 0.2 * (px[other] - px[node]));
      const y = py[node] + 0.2 * (py[other] - py[node]);
      g.beginPath();
      g.arc(x, y, 5, 0, 2 * Math.PI);
      g.strokeStyle = color;
      g.stroke();
    }
  }

  // Dim everything, then draw the highlighted cables again (a path in the selection colour, thicker) and mark
  // the highlighted nodes.
  function drawHighlight() {
    const h = ctx.highlighted;
    highlighted = 0;
    if (!h) return;
    const {a, b} = fabric.links;
    const {cableUtil} = ctx.frame;
    g.fillStyle = DIM;
    g.fillRect(0, 0, width, height);
    const path = h.kind === "path";
    g.lineWidth = path ? 3 : 2;
    const strokes = new Map(); // colour bucket -> Path2D: one stroke per colour, as for the whole map
    for (const c of h.cables) {
      const j = path ? -1 : bucketOf(cableUtil[c]);
      let p = strokes.get(j);
      if (!p) strokes.set(j, (p = new Path2D()));
      p.moveTo(tx + k * px[a[c]], py[a[c]]);
      p.lineTo(tx + k * px[b[c]], py[b[c]]);
    }
    for (const [j, p] of strokes) {
      g.strokeStyle = j < 0 ? SELECTED : BUCKET_COLORS[j];
      g.stroke(p);
    }
    highlighted = h.cables.length;
    g.fillStyle = path ? SELECTED : HIGHLIGHT_NODE;
    g.beginPath();
    for (const i of h.nodes) g.rect(tx + k * px[i] - 3, py[i] - 3, 6, 6);
    g.fill();
  }

  // Down and degraded cables, dashed over whatever is drawn: a gap of the map's background under each, then the dashes,
  // red for a cable that is down, the overlay's (else the utilization's) colour for a degraded one.
  function drawConditions() {
    if (!conditions.length) return;
    const {cableUtil} = ctx.frame;
    const line = (p, d) => {
      p.moveTo(tx + k * px[d.a], py[d.a]);
      p.lineTo(tx + k * px[d.b], py[d.b]);
    };
    const gaps = new Path2D();
    for (const d of conditions) line(gaps, d);
    g.lineCap = "butt";
    g.strokeStyle = DASH;
    g.lineWidth = 4;
    g.stroke(gaps);
    g.setLineDash(CONDITION_DASH);
    g.lineWidth = 2;
    for (const d of conditions) {
      const p = new Path2D();
      line(p, d);
      g.strokeStyle = d.state === DOWN ? DOWN_COLOR : overlayColor(d.cable) ?? BUCKET_COLORS[bucketOf(cableUtil[d.cable])];
      g.stroke(p);
    }
    g.setLineDash([]);
  }

  function overlayColor(c) {
    if (!overlayGroups) return null;
    for (const [color, cables] of overlayGroups) if (cables.includes(c)) return color;
    return null;
  }

  function drawSelection() {
    const item = ctx.selected;
    if (!item) return;
    g.strokeStyle = SELECTED;
    g.lineWidth = 2;
    g.beginPath();
    if (item.kind === "link") {
      const {a, b} = fabric.links;
      g.moveTo(tx + k * px[a[item.index]], py[a[item.index]]);
      g.lineTo(tx + k * px[b[item.index]], py[b[item.index]]);
    } else {
      const [x, y] = item.kind === "node" ? [px[item.index], py[item.index]] : [barX(item.index), barY()];
      g.arc(tx + k * x, y, 8, 0, 2 * Math.PI);
    }
    g.stroke();
  }

  // The hover item nearest to canvas point (mx, my), within HIT_PX on screen, or null.
  function hit(mx, my) {
    if (!trees) return null;
    const x = (mx - tx) / k;
    const rx = HIT_PX / k;
    let best = null;
    let bestDistance = HIT_PX * HIT_PX;
    const shown = conditionTree ? [conditionTree] : []; // first: a condition's item wins a tie
    shown.push(aggregated() ? trees.leaves : trees.detail);
    shown.push(bundled() ? trees.bundles : trees.always);
    if (bundled()) shown.push(trees.nodes);
    for (const tree of shown) {
      tree.visit((node, x0, y0, x1, y1) => {
        for (let leaf = node.length ? null : node; leaf; leaf = leaf.next) {
          const distance = (k * (leaf.data.x - x)) ** 2 + (leaf.data.y - my) ** 2;
          if (distance < bestDistance) (best = leaf.data), (bestDistance = distance);
        }
        return x0 > x + rx || x1 < x - rx || y0 > my + HIT_PX || y1 < my - HIT_PX;
      });
    }
    return best && {kind: best.kind, index: best.index};
  }

  function hover(item, event) {
    ctx.hover(item);
    if (!item) {
      lines = [];
      tooltip.property("hidden", true);
      return;
    }
    showTooltip(item);
    const {offsetWidth: w, offsetHeight: h} = tooltip.node();
    const {offsetX: x, offsetY: y} = event;
    tooltip
      .style("left", `${x + 14 + w > width ? Math.max(0, x - 14 - w) : x + 14}px`)
      .style("top", `${y + 14 + h > height ? Math.max(0, y - 14 - h) : y + 14}px`);
  }

  function showTooltip(item) {
    lines = tooltipLines(item);
    tooltip.property("hidden", !lines.length).selectAll("div").data(lines).join("div").text((line) => line);
  }

  function tooltipLines({kind, index}) {
    if (kind === "link") return cableTooltip(fabric, ctx.frame, index, conditions.find((d) => d.cable === index));
    if (kind === DOWN) return conditions[index]?.state === DOWN ? downTooltip(fabric, conditions[index], ctx.frame.t) : [];
    if (kind === "node") return nodeLines(fabric, index);
    if (kind === "bundle") {
      const {name, group} = fabric.nodes;
      const where = bundles.group[index] >= 0 ? `group ${bundles.group[index]}` : `near ${name[bundles.lo[index]]}`;
      return [`${bundles.cables[index]} cables from ${where} up to ${name[bundles.hi[index]]} and its neighbours`,
        `hottest ${formatUtil(bundleUtil[index])} (click to zoom in)`];
    }
    return [`${fabric.nodes.name[index]}: ${lay.hostCount[index]} hosts, aggregated (zoom in to expand)`,
      `hottest host cable ${formatUtil(leafUtil[index])}`];
  }

  function keyed(event) {
    const pan = {ArrowLeft: PAN_PX, ArrowRight: -PAN_PX}[event.key];
    if (pan) canvas.call(zoomer.translateBy, pan / k, 0);
    else if (event.key === "+" || event.key === "=") chart.zoomBy(1.5);
    else if (event.key === "-") chart.zoomBy(1 / 1.5);
    else if (event.key === "0") chart.resetZoom();
    else if (event.key === "Escape") ctx.select(null);
    else return;
    event.preventDefault();
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /** Hosts above which host cables start aggregated per leaf. */
  chart.aggregateAbove = function (_) {
    return arguments.length ? ((aggregateAbove = _), chart) : aggregateAbove;
  };
  /** Screen distance between neighbouring hosts (px) from which aggregated hosts are drawn one by one. */
  chart.expandPx = function (_) {
    return arguments.length ? ((expandPx = _), chart) : expandPx;
  };
  /** Switch-to-switch cables per pixel of the map's width (at the zoom shown) above which they are bundled. */
  chart.bundleDensity = function (_) {
    return arguments.length ? ((bundleDensity = _), chart) : bundleDensity;
  };
  /** Most node labels shown at once (top tiers first). */
  chart.maxLabels = function (_) {
    return arguments.length ? ((maxLabels = _), (labelsDirty = true), schedule(), chart) : maxLabels;
  };
  /** Whether node names are shown (where they fit); setting it redraws. */
  chart.labels = function (_) {
    return arguments.length ? ((labelsOn = Boolean(_)), (labelsDirty = true), schedule(), chart) : labelsOn;
  };
  /** Node labels shown now. */
  chart.labelCount = () => labelled;
  /** Times the labels were chosen since start (on snapshots, zooms, pans and resizes; never per frame). */
  chart.labelUpdates = () => labelUpdates;
  /** Cables of the congestion tree the last redraw drew: {roots, held} (0 and 0 without one, or under an overlay). */
  chart.treeDrawn = () => ({...treeDrawn});
  /** The cables drawn dashed now: [{state: "down"|"degraded", a, b (nodes), aPort, bPort, cable (-1 when down)}]. */
  chart.conditions = () => conditions.map(({state, a, b, aPort, bPort, cable}) => ({state, a, b, aPort, bPort, cable}));
  /** Client coordinates of node i (null if off-canvas or unknown). */
  chart.nodeAt = (i) => {
    if (!fabric || !px || !(i >= 0 && i < fabric.n)) return null;
    const sx = tx + k * px[i];
    if (sx < 0 || sx > width) return null;
    const box = canvas.node().getBoundingClientRect();
    return {x: box.left + sx, y: box.top + py[i]};
  };
  /** Bundles drawn in the last redraw (0: cables drawn one by one). */
  chart.bundlesDrawn = () => bundlesDrawn;
  /** Client coordinates of the middle of bundle j (null when not drawn), for tests. */
  chart.bundleAt = (j) => {
    if (!bundlesDrawn || !(j >= 0 && j < bundles.count)) return null;
    const box = canvas.node().getBoundingClientRect();
    return {x: box.left + tx + k * (bundles.x0[j] + bundles.x1[j]) / 2, y: box.top + (bundles.y0[j] + bundles.y1[j]) / 2,
      cables: bundles.cables[j], group: bundles.group[j]};
  };
  /**
   * Zoom into the group of a bundle's lower end, or of a leaf (its scalable unit), so that its cables are drawn
   * one by one: the x range of the group's switches fills the map.
   * @param {{kind: "bundle" | "leaf", index: number}} item
   */
  chart.drillDown = (item) => {
    if (!fabric) return;
    const node = item.kind === "bundle" ? bundles.lo[item.index] : item.index;
    const grp = fabric.nodes.group[node];
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < fabric.n; ++i) {
      const same = grp >= 0 ? fabric.nodes.group[i] === grp && !fabric.nodes.isHost[i] : i === node;
      if (same) (lo = Math.min(lo, px[i])), (hi = Math.max(hi, px[i]));
    }
    if (item.kind === "leaf") (lo = Math.min(lo, barX(node) - 1)), (hi = Math.max(hi, barX(node) + 1));
    const span = Math.max(hi - lo, 8 * expandPx, 1);
    const scale = Math.max(1, Math.min(zoomer.scaleExtent()[1], (0.9 * width) / span));
    const t = zoomIdentity.translate(width / 2 - scale * ((lo + hi) / 2), 0).scale(scale);
    canvas.transition().duration(250).call(zoomer.transform, t);
  };
  /** The current horizontal zoom factor. */
  chart.zoomK = () => k;
  /** Cables drawn one by one in the last redraw (aggregated host cables not counted). */
  chart.drawnLinks = () => drawn;
  /** A function returning Map(colour -> cables) to draw over the map (null: none); redraws. */
  chart.overlay = function (_) {
    if (!arguments.length) return overlay;
    overlay = _;
    schedule();
    return chart;
  };
  /** A function returning port marks [{node, cable, color}] to draw over the overlay (null: none); redraws. */
  chart.marks = function (_) {
    if (!arguments.length) return marks;
    marks = _;
    schedule();
    return chart;
  };
  /** The overlay's colour of cable c in the last redraw (null: not overlaid). */
  chart.overlayColor = (c) => overlayColor(c);
  /** Cables drawn by the overlay in the last redraw. */
  chart.overlaidLinks = () => overlaid;
  /** Cables drawn highlighted in the last redraw. */
  chart.highlightedLinks = () => highlighted;
  /** The layout of the current fabric (layout.js), or null. */
  chart.layout = () => lay;
  /** Redraws since start. */
  chart.framesDrawn = () => framesDrawn;
  /** Drawn cables per colour bucket in the last redraw: "bucket:count" for each non-empty bucket. */
  chart.colorDigest = () => Array.from(counts, (count, j) => (count ? `${j}:${count}` : "")).filter(Boolean).join(" ");
  /** Client coordinates of the hover handle of cable d (d >= L: its reverse), or null if not drawn or off-canvas. */
  chart.linkAt = (d) => {
    if (!fabric || !px || !(d >= 0 && d < 2 * fabric.L)) return null;
    const c = d % fabric.L;
    if (aggregated() && lay.cableLeaf[c] >= 0) return null;
    const [x, y] = handleAt(c);
    const sx = tx + k * x;
    if (sx < 0 || sx > width) return null;
    const box = canvas.node().getBoundingClientRect();
    return {x: box.left + sx, y: box.top + y};
  };
  /** The tooltip's lines joined by newlines, "" when hidden. */
  chart.tooltipText = () => lines.join("\n");
  chart.zoomBy = (factor) => canvas.transition().duration(200).call(zoomer.scaleBy, factor);
  chart.resetZoom = () => canvas.transition().duration(200).call(zoomer.transform, zoomIdentity);

  return chart;
}
