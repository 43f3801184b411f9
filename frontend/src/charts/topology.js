// The fabric map: nodes and cables on one canvas, coloured by utilization, with zoom, pan, hover and selection.
//
// Cables are bucketed by colour (counting sort into a preallocated order) and stroked as one path per bucket,
// coolest first, so a frame costs a few passes over typed arrays and at most BUCKETS strokes. Fabrics with more
// than aggregateAbove hosts start aggregated: each leaf's hosts are one bar, its host cables one line coloured by
// the hottest of them, until zoomed in far enough that hosts are expandPx apart on screen.
import {quadtree, select, zoom, zoomIdentity} from "d3";
import {BUCKETS, BUCKET_COLORS, CONGESTED, bucketOf} from "../colors.js";
import {cableLines, formatUtil, nodeLines} from "../format.js";
import {layout} from "../layout.js";

const MARGIN = 24;
const HIT_PX = 10;
const NODE_FILL = ["#8a93a0", "#d5dae1", "#d5dae1", "#d5dae1"];
const SELECTED = "#ff4fd8";
const PAN_PX = 60;

/**
 * The topology chart: `selection.call(topology().context(ctx))`.
 * @returns {function} the chart, with chained accessors context, aggregateAbove, expandPx and read-outs
 *   drawnLinks, framesDrawn, colorDigest, linkAt, tooltipText, zoomBy, resetZoom
 */
export function topology() {
  let ctx = null;
  let aggregateAbove = 4000;
  let expandPx = 2;

  let root;
  let canvas;
  let g;
  let tooltip;
  let zoomer;
  let transform = zoomIdentity;
  let width = 0;
  let height = 0;
  let dpr = 1;
  let pending = 0;

  let fabric = null;
  let lay = null;
  let hosts = 0;
  let px; // node x at scale 1, CSS px
  let py;
  let gaps = [1, 1, 1, 1]; // smallest distance between two nodes of a tier, in layout units
  let gapPx = gaps; // the same at scale 1, CSS px
  let handle; // per cable: position t along the cable of its hover handle
  let trees = null; // {always, detail, agg}: quadtrees of hover items

  let buckets; // Uint8Array(L): colour bucket per cable
  let order; // Int32Array(L): drawn cables sorted by bucket
  const counts = new Uint32Array(BUCKETS);
  const offsets = new Uint32Array(BUCKETS + 1);
  let leafUtil; // Float32Array(n): hottest host cable per leaf
  const next = new Uint32Array(BUCKETS);
  let drawn = 0;
  let framesDrawn = 0;
  let lines = []; // tooltip lines shown, [] when hidden

  function chart(selection) {
    root = selection.classed("ibweb-topology", true);
    canvas = root
      .append("canvas")
      .attr("tabindex", 0)
      .attr("role", "img")
      .attr("aria-label", "Fabric map. Arrow keys pan, plus and minus zoom, 0 resets the view, Escape clears the selection.")
      .on("pointermove", pointed)
      .on("pointerleave", () => hover(null, null))
      .on("click", (event) => ctx.select(hit(event.offsetX, event.offsetY)))
      .on("keydown", keyed);
    g = canvas.node().getContext("2d");
    tooltip = root.append("div").attr("class", "ibweb-tooltip").attr("role", "tooltip").property("hidden", true);
    zoomer = zoom()
      .scaleExtent([1, 64])
      .on("zoom", (event) => {
        transform = event.transform;
        schedule();
      });
    canvas.call(zoomer).on("dblclick.zoom", null);
    new ResizeObserver(resized).observe(root.node());
    resized();
    ctx.on("snapshot.topology", snapshot).on("frame.topology", redraw).on("select.topology", () => schedule());
  }

  function resized() {
    const box = root.node().getBoundingClientRect();
    if (box.width === width && box.height === height) return;
    width = box.width;
    height = box.height;
    dpr = window.devicePixelRatio || 1;
    canvas.attr("width", Math.round(width * dpr)).attr("height", Math.round(height * dpr));
    canvas.style("width", `${width}px`).style("height", `${height}px`);
    zoomer.extent([[0, 0], [width, height]]).translateExtent([[0, 0], [width, height]]);
    place();
    redraw();
  }

  function snapshot(next) {
    fabric = next;
    lay = layout(fabric);
    hosts = fabric.nodes.isHost.reduce((sum, h) => sum + h, 0);
    const {L, n} = fabric;
    buckets = new Uint8Array(L);
    order = new Int32Array(L);
    leafUtil = new Float32Array(n);
    handle = Float32Array.from({length: L}, (_, c) => 0.4 + 0.2 * ((c * 0.6180339887) % 1));
    const rows = new Map();
    for (let i = 0; i < n; ++i) {
      const t = lay.tierOf[i];
      if (!rows.has(t)) rows.set(t, []);
      rows.get(t).push(lay.x[i]);
    }
    gaps = [0, 1, 2, 3].map((t) => {
      const xs = Float64Array.from(rows.get(t) ?? []).sort();
      let gap = lay.width;
      for (let j = 1; j < xs.length; ++j) gap = Math.min(gap, xs[j] - xs[j - 1]);
      return gap;
    });
    zoomer.scaleExtent([1, Math.max(64, (8 * expandPx * lay.width) / Math.max(1, width))]);
    canvas.call(zoomer.transform, zoomIdentity);
    hover(null, null);
    place();
    describe();
  }

  // Node positions at scale 1 and the hover quadtrees, after a snapshot or a resize.
  function place() {
    if (!fabric || !width) return;
    const {n, L} = fabric;
    const sx = (width - 2 * MARGIN) / lay.width;
    const sy = lay.rows > 1 ? (height - 2 * MARGIN) / (lay.rows - 1) : 0;
    px = Float32Array.from(lay.x, (x) => MARGIN + x * sx);
    py = Float32Array.from(lay.y, (y) => (lay.rows > 1 ? MARGIN + y * sy : height / 2));
    gapPx = gaps.map((gap) => gap * sx);
    const items = {always: [], detail: [], agg: []};
    for (let i = 0; i < n; ++i) items[fabric.nodes.isHost[i] ? "detail" : "always"].push({kind: "node", index: i, x: px[i], y: py[i]});
    for (let c = 0; c < L; ++c) {
      const [x, y] = handleAt(c);
      items[lay.cableLeaf[c] >= 0 ? "detail" : "always"].push({kind: "link", index: c, x, y});
    }
    for (const s of lay.leaves) {
      if (lay.hostCount[s]) items.agg.push({kind: "leaf", index: s, x: barX(s), y: barY()});
    }
    trees = Object.fromEntries(Object.entries(items).map(([k, v]) => [k, quadtree(v, (d) => d.x, (d) => d.y)]));
  }

  const handleAt = (c) => {
    const {a, b} = fabric.links;
    const t = handle[c];
    return [px[a[c]] + t * (px[b[c]] - px[a[c]]), py[a[c]] + t * (py[b[c]] - py[a[c]])];
  };
  const barX = (s) => MARGIN + ((lay.spanStart[s] + lay.spanEnd[s]) / 2) * ((width - 2 * MARGIN) / lay.width);
  const barY = () => height - MARGIN;
  const aggregated = () => hosts > aggregateAbove && transform.k * gapPx[0] < expandPx;

  function schedule() {
    pending ||= requestAnimationFrame(() => {
      pending = 0;
      redraw();
    });
  }

  function redraw() {
    if (!fabric || !width || !px) return;
    const {k, x: tx, y: ty} = transform;
    const {L, n} = fabric;
    const {a, b} = fabric.links;
    const {cableUtil} = ctx.frame;
    const agg = aggregated();
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);

    // Count drawn cables per bucket, then order them by bucket (counting sort).
    counts.fill(0);
    for (let c = 0; c < L; ++c) {
      if (agg && lay.cableLeaf[c] >= 0) continue;
      ++counts[(buckets[c] = bucketOf(cableUtil[c]))];
    }
    offsets[0] = 0;
    for (let j = 0; j < BUCKETS; ++j) offsets[j + 1] = offsets[j] + counts[j];
    drawn = offsets[BUCKETS];
    next.set(offsets.subarray(0, BUCKETS));
    for (let c = 0; c < L; ++c) if (!(agg && lay.cableLeaf[c] >= 0)) order[next[buckets[c]]++] = c;

    g.lineCap = "round";
    for (let j = 0; j < BUCKETS; ++j) {
      if (!counts[j]) continue;
      g.beginPath();
      for (let o = offsets[j]; o < offsets[j + 1]; ++o) {
        const c = order[o];
        g.moveTo(tx + k * px[a[c]], ty + k * py[a[c]]);
        g.lineTo(tx + k * px[b[c]], ty + k * py[b[c]]);
      }
      g.strokeStyle = BUCKET_COLORS[j];
      g.lineWidth = j === CONGESTED ? 3 : 1;
      g.stroke();
    }
    if (counts[CONGESTED]) strokeCongested(offsets[CONGESTED], offsets[BUCKETS]);

    if (agg) drawAggregates();
    drawNodes(agg);
    drawSelection();
    ++framesDrawn;
    if (ctx.hovered) showTooltip(ctx.hovered);
  }

  // Congested cables: the top colour, wider, with a dashed white core so they read as "over capacity".
  function strokeCongested(from, to) {
    const {k, x: tx, y: ty} = transform;
    const {a, b} = fabric.links;
    g.beginPath();
    for (let o = from; o < to; ++o) {
      const c = order[o];
      g.moveTo(tx + k * px[a[c]], ty + k * py[a[c]]);
      g.lineTo(tx + k * px[b[c]], ty + k * py[b[c]]);
    }
    g.setLineDash([3, 3]);
    g.strokeStyle = "#ffffff";
    g.lineWidth = 1;
    g.stroke();
    g.setLineDash([]);
  }

  function drawAggregates() {
    const {k, x: tx, y: ty} = transform;
    const {cableUtil} = ctx.frame;
    leafUtil.fill(0);
    for (let c = 0; c < fabric.L; ++c) {
      const s = lay.cableLeaf[c];
      if (s >= 0 && cableUtil[c] > leafUtil[s]) leafUtil[s] = cableUtil[c];
    }
    const sx = (width - 2 * MARGIN) / lay.width;
    for (const s of lay.leaves) {
      if (!lay.hostCount[s]) continue;
      const color = BUCKET_COLORS[bucketOf(leafUtil[s])];
      const x0 = tx + k * (MARGIN + lay.spanStart[s] * sx);
      const x1 = tx + k * (MARGIN + lay.spanEnd[s] * sx);
      g.beginPath();
      g.moveTo(tx + k * px[s], ty + k * py[s]);
      g.lineTo(tx + k * barX(s), ty + k * barY());
      g.strokeStyle = color;
      g.lineWidth = 2;
      g.stroke();
      g.fillStyle = color;
      g.fillRect(x0 + 0.5, ty + k * barY() - 3, Math.max(1, x1 - x0 - 1), 6);
    }
  }

  function drawNodes(agg) {
    const {k, x: tx, y: ty} = transform;
    const {isHost} = fabric.nodes;
    for (let t = agg ? 1 : 0; t < 4; ++t) {
      const size = Math.max(t ? 3 : 1.5, Math.min(t ? 10 : 6, 0.6 * k * gapPx[t]));
      g.beginPath();
      for (let i = 0; i < fabric.n; ++i) {
        if (lay.tierOf[i] !== t || (agg && isHost[i])) continue;
        g.rect(tx + k * px[i] - size / 2, ty + k * py[i] - size / 2, size, size);
      }
      g.fillStyle = NODE_FILL[t];
      g.fill();
    }
  }

  function drawSelection() {
    const item = ctx.selected;
    if (!item) return;
    const {k, x: tx, y: ty} = transform;
    g.strokeStyle = SELECTED;
    g.lineWidth = 2;
    g.beginPath();
    if (item.kind === "link") {
      const {a, b} = fabric.links;
      g.moveTo(tx + k * px[a[item.index]], ty + k * py[a[item.index]]);
      g.lineTo(tx + k * px[b[item.index]], ty + k * py[b[item.index]]);
    } else {
      const [x, y] = item.kind === "node" ? [px[item.index], py[item.index]] : [barX(item.index), barY()];
      g.arc(tx + k * x, ty + k * y, 8, 0, 2 * Math.PI);
    }
    g.stroke();
  }

  // The hover item nearest to canvas point (mx, my), within HIT_PX on screen, or null.
  function hit(mx, my) {
    if (!trees) return null;
    const {k, x: tx, y: ty} = transform;
    const x = (mx - tx) / k;
    const y = (my - ty) / k;
    let best = null;
    let bestDistance = Infinity;
    for (const tree of aggregated() ? [trees.always, trees.agg] : [trees.always, trees.detail]) {
      const item = tree.find(x, y, HIT_PX / k);
      const distance = item && Math.hypot(item.x - x, item.y - y);
      if (item && distance < bestDistance) (best = item), (bestDistance = distance);
    }
    return best && {kind: best.kind, index: best.index};
  }

  function pointed(event) {
    hover(hit(event.offsetX, event.offsetY), event);
  }

  function hover(item, event) {
    ctx.hover(item);
    if (!item) {
      lines = [];
      tooltip.property("hidden", true);
      return;
    }
    showTooltip(item);
    tooltip.style("left", `${Math.min(event.offsetX + 14, width - 320)}px`).style("top", `${event.offsetY + 14}px`);
  }

  function showTooltip(item) {
    lines = tooltipLines(item);
    tooltip
      .property("hidden", false)
      .selectAll("div")
      .data(lines)
      .join("div")
      .text((line) => line);
  }

  function tooltipLines({kind, index}) {
    if (kind === "link") return cableLines(fabric, ctx.frame, index);
    if (kind === "node") return nodeLines(fabric, index);
    return [`${fabric.nodes.name[index]}: ${lay.hostCount[index]} hosts, aggregated (zoom in to expand)`,
      `hottest host cable ${formatUtil(leafUtil[index])}`];
  }

  function keyed(event) {
    const moves = {ArrowLeft: [PAN_PX, 0], ArrowRight: [-PAN_PX, 0], ArrowUp: [0, PAN_PX], ArrowDown: [0, -PAN_PX]};
    if (moves[event.key]) canvas.call(zoomer.translateBy, ...moves[event.key].map((d) => d / transform.k));
    else if (event.key === "+" || event.key === "=") chart.zoomBy(1.5);
    else if (event.key === "-") chart.zoomBy(1 / 1.5);
    else if (event.key === "0") chart.resetZoom();
    else if (event.key === "Escape") ctx.select(null);
    else return;
    event.preventDefault();
  }

  function describe() {
    canvas.attr("aria-label", `Fabric map of ${fabric.name}: ${hosts} hosts, ${fabric.n - hosts} switches, ${fabric.L} cables. ` +
      "Arrow keys pan, plus and minus zoom, 0 resets the view, Escape clears the selection.");
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
  /** Cables drawn one by one in the last redraw (aggregated host cables not counted). */
  chart.drawnLinks = () => drawn;
  /** Redraws since start. */
  chart.framesDrawn = () => framesDrawn;
  /** Drawn cables per colour bucket in the last redraw, "bucket:count" for each non-empty bucket. */
  chart.colorDigest = () => Array.from(counts, (count, j) => (count ? `${j}:${count}` : "")).filter(Boolean).join(" ");
  /** Client coordinates of the hover handle of cable d (d >= L: its reverse), or null if not drawn or off-canvas. */
  chart.linkAt = (d) => {
    if (!fabric || !px || d < 0 || d >= 2 * fabric.L) return null;
    const c = d % fabric.L;
    if (aggregated() && lay.cableLeaf[c] >= 0) return null;
    const [x, y] = transform.apply(handleAt(c));
    if (x < 0 || y < 0 || x > width || y > height) return null;
    const box = canvas.node().getBoundingClientRect();
    return {x: box.left + x, y: box.top + y};
  };
  /** The tooltip's lines joined by newlines, "" when hidden. */
  chart.tooltipText = () => lines.join("\n");
  chart.zoomBy = (factor) => canvas.transition().duration(200).call(zoomer.scaleBy, factor);
  chart.resetZoom = () => canvas.transition().duration(200).call(zoomer.transform, zoomIdentity);

  return chart;
}
