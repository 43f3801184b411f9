// Matrix heatmap: utilization between two switch tiers (leaf x spine, spine x core) on the map's colour scale.
//
// One canvas pixel per cell is painted into an ImageData (colour lookup table, no per-cell drawing calls) and
// scaled up with smoothing off, so a 512 x 512 matrix costs one pass over its cells per frame.
import {LUT, bucketOf} from "../colors.js";
import {formatUtil} from "../format.js";
import {DIRECTIONS, cellCables, matrixValues, tierMatrix} from "../tier-matrix.js";

const TIER = {1: "leaf", 2: "spine", 3: "core"};
const EMPTY = [22, 27, 34];
const PAD = 4;

/**
 * The matrix panel: `selection.call(matrix().context(ctx).layout(() => map.layout()))`.
 * @returns {function} the chart, with chained accessors context, layout and read-outs cells(), cellAt(r, c)
 */
export function matrix() {
  let ctx = null;
  let layoutOf = () => null;
  let m = null;
  let values = null;
  let image = null;
  let pairs = [];
  let pair = 0;
  let direction = "max";
  let canvas;
  let g;
  let tooltip;
  let pixels; // offscreen canvas of C x R pixels
  let box = {x: 0, y: 0, cw: 1, ch: 1};
  let cursor = null; // keyboard cell [r, c]

  function chart(selection) {
    const panel = selection.classed("ibweb-matrix", true).attr("aria-label", "Utilization matrix");
    const head = panel.append("div").attr("class", "ibweb-panel-head");
    head.append("h2").text("Matrix");
    const pairSelect = head.append("select").attr("aria-label", "Tiers of the matrix")
      .on("change", (event) => ((pair = +event.target.value), rebuild()));
    head.append("select").attr("aria-label", "Direction shown in the matrix")
      .on("change", (event) => ((direction = event.target.value), draw()))
      .selectAll("option").data(DIRECTIONS).join("option").attr("value", (d) => d)
      .text((d) => ({max: "both directions (max)", up: "upward", down: "downward"})[d]);
    const area = panel.append("div").attr("class", "ibweb-matrix-area");
    canvas = area.append("canvas").attr("tabindex", 0).attr("role", "img")
      .attr("aria-label", "Utilization matrix. Arrow keys move between cells, Enter selects the cell's hottest cable.")
      .on("pointermove", (event) => show(cellOf(event.offsetX, event.offsetY), event.offsetX, event.offsetY))
      .on("pointerleave", () => show(null))
      .on("click", (event) => pick(cellOf(event.offsetX, event.offsetY)))
      .on("keydown", keyed);
    g = canvas.node().getContext("2d");
    tooltip = area.append("div").attr("class", "ibweb-tooltip").attr("role", "tooltip").property("hidden", true);
    pixels = document.createElement("canvas");
    new ResizeObserver(() => draw()).observe(area.node());

    ctx.on("snapshot.matrix", (fabric) => {
      const {tier, isHost} = fabric.nodes;
      const has = (t) => tier.some((x, i) => x === t && !isHost[i]);
      pairs = [[1, 2], [2, 3]].filter(([p, q]) => has(p) && has(q));
      pair = 0;
      pairSelect.selectAll("option").data(pairs).join("option").attr("value", (_, i) => i)
        .text(([p, q]) => `${TIER[p]} × ${TIER[q]}`);
      pairSelect.property("disabled", pairs.length < 2);
      rebuild();
    });
    ctx.on("frame.matrix", draw);
  }

  function rebuild() {
    const fabric = ctx.fabric;
    if (!fabric || !pairs.length) {
      m = null;
      return;
    }
    const [lower, upper] = pairs[pair];
    m = tierMatrix(fabric, lower, upper, layoutOf()?.x ?? null);
    values = new Float32Array(m.R * m.C);
    image = new ImageData(Math.max(1, m.C), Math.max(1, m.R));
    pixels.width = image.width;
    pixels.height = image.height;
    cursor = null;
    canvas.attr("aria-label", `Utilization matrix, ${m.R} ${TIER[lower]} rows by ${m.C} ${TIER[upper]} columns. `
      + "Arrow keys move between cells, Enter selects the cell's hottest cable.");
    draw();
  }

  function draw() {
    const node = canvas.node();
    const {width, height} = node.parentNode.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    if (node.width !== Math.round(width * dpr) || node.height !== Math.round(height * dpr)) {
      node.width = Math.round(width * dpr);
      node.height = Math.round(height * dpr);
      node.style.width = `${width}px`;
      node.style.height = `${height}px`;
    }
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    if (!m || !ctx.frame || ctx.frame.seq < 0 || !m.R || !m.C) return;
    matrixValues(m, ctx.frame.util, direction, values);
    const data = image.data;
    for (let k = 0, p = 0; k < values.length; ++k, p += 4) {
      const v = values[k];
      if (v !== v) (data[p] = EMPTY[0]), (data[p + 1] = EMPTY[1]), (data[p + 2] = EMPTY[2]);
      else {
        const j = 3 * bucketOf(v);
        (data[p] = LUT[j]), (data[p + 1] = LUT[j + 1]), (data[p + 2] = LUT[j + 2]);
      }
      data[p + 3] = 255;
    }
    pixels.getContext("2d").putImageData(image, 0, 0);
    const cw = (width - 2 * PAD) / m.C;
    const ch = (height - 2 * PAD) / m.R;
    box = {x: PAD, y: PAD, cw, ch};
    g.imageSmoothingEnabled = false;
    g.drawImage(pixels, PAD, PAD, cw * m.C, ch * m.R);
    if (cw >= 6 && ch >= 6) {
      g.strokeStyle = "#0e1217";
      g.lineWidth = 1;
      g.beginPath();
      for (let c = 0; c <= m.C; ++c) g.moveTo(PAD + c * cw, PAD), g.lineTo(PAD + c * cw, PAD + m.R * ch);
      for (let r = 0; r <= m.R; ++r) g.moveTo(PAD, PAD + r * ch), g.lineTo(PAD + m.C * cw, PAD + r * ch);
      g.stroke();
    }
    for (let k = 0; k < values.length; ++k) {
      if (values[k] > 1 && cw >= 4 && ch >= 4) {
        g.strokeStyle = "#e5534b";
        g.strokeRect(PAD + (k % m.C) * cw + 1, PAD + Math.floor(k / m.C) * ch + 1, cw - 2, ch - 2);
      }
    }
    if (cursor) {
      g.strokeStyle = "#ff4fd8";
      g.lineWidth = 2;
      g.strokeRect(PAD + cursor[1] * cw, PAD + cursor[0] * ch, cw, ch);
    }
    if (!tooltip.property("hidden") && shown) show(shown, lastX, lastY);
  }

  function cellOf(x, y) {
    if (!m) return null;
    const c = Math.floor((x - box.x) / box.cw);
    const r = Math.floor((y - box.y) / box.ch);
    return r >= 0 && r < m.R && c >= 0 && c < m.C ? [r, c] : null;
  }

  let shown = null;
  let lastX = 0;
  let lastY = 0;

  function lines([r, c]) {
    const {name} = ctx.fabric.nodes;
    const k = r * m.C + c;
    const span = (first, last) => (first === last ? name[first] : `${name[first]}…${name[last]}`);
    const head = `${span(m.rows[r], m.rowsLast[r])} ⇄ ${span(m.cols[c], m.colsLast[c])}`;
    if (!m.cables[k]) return [head, "no cable"];
    const cables = cellCables(m, r, c);
    const {util} = ctx.frame;
    const L = ctx.fabric.L;
    const up = Math.max(...cables.map((j) => util[m.up[j]]));
    const down = Math.max(...cables.map((j) => util[m.up[j] < L ? m.up[j] + L : m.up[j] - L]));
    return [head, `${cables.length} cable${cables.length > 1 ? "s" : ""}`, `up ${formatUtil(up)}, down ${formatUtil(down)}`];
  }

  function show(cell, x = 0, y = 0) {
    shown = cell;
    (lastX = x), (lastY = y);
    if (!cell || !ctx.frame) {
      tooltip.property("hidden", true);
      return;
    }
    tooltip.property("hidden", false).selectAll("div").data(lines(cell)).join("div").text((d) => d);
    const {offsetWidth: w} = tooltip.node();
    const area = canvas.node().parentNode.getBoundingClientRect();
    tooltip.style("left", `${x + 14 + w > area.width ? Math.max(0, x - 14 - w) : x + 14}px`).style("top", `${y + 14}px`);
  }

  // Select the hottest cable of a cell: the port detail opens for it.
  function pick(cell) {
    if (!cell || !m.cables[cell[0] * m.C + cell[1]]) return;
    const cables = cellCables(m, cell[0], cell[1]);
    const hottest = cables.reduce((best, c) => (ctx.frame.cableUtil[c] > ctx.frame.cableUtil[best] ? c : best));
    ctx.select({kind: "link", index: hottest});
  }

  function keyed(event) {
    if (!m) return;
    const move = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]}[event.key];
    if (move) {
      cursor = cursor ? [Math.min(m.R - 1, Math.max(0, cursor[0] + move[0])), Math.min(m.C - 1, Math.max(0, cursor[1] + move[1]))]
        : [0, 0];
      draw();
      show(cursor, box.x + (cursor[1] + 1) * box.cw, box.y + (cursor[0] + 1) * box.ch);
    } else if (event.key === "Enter" && cursor) pick(cursor);
    else if (event.key === "Escape") (cursor = null), show(null), draw();
    else return;
    event.preventDefault();
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /** A function returning the map's layout (to order rows and columns as the map does). */
  chart.layout = function (_) {
    return arguments.length ? ((layoutOf = _), chart) : layoutOf;
  };
  /** Shape of the matrix shown: {rows, cols, cabled (cells with a cable), tiers: [lower, upper]}. */
  chart.cells = () => (m ? {rows: m.R, cols: m.C, cabled: m.cables.reduce((s, x) => s + (x > 0), 0), tiers: [m.lower, m.upper]}
    : {rows: 0, cols: 0, cabled: 0, tiers: []});
  /** Client coordinates of the centre of cell (r, c). */
  chart.cellAt = (r, c) => {
    const rect = canvas.node().getBoundingClientRect();
    return {x: rect.left + box.x + (c + 0.5) * box.cw, y: rect.top + box.y + (r + 0.5) * box.ch};
  };
  /** The tooltip's lines joined by newlines, "" when hidden. */
  chart.tooltipText = () => (tooltip.property("hidden") ? "" : tooltip.selectAll("div").nodes().map((n) => n.textContent).join("\n"));
  return chart;
}
