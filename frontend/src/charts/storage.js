// Storage panel: per-server read/write throughput against what the server can do, with what limits it (its
// backend or the network); per-tenant throughput; per-job data loading; checkpoint progress (bytes written, ETA)
// and the duration and GPU-time cost of recent checkpoints.
import {format} from "d3";
import {formatBytes, formatDuration, formatGpuTime, formatRate} from "../format.js";
import {bottleneckText, checkpointLog, checkpointRows, serverRows, storageJobRows, tenantRows} from "../storage-rows.js";

const percent = format(".0%");
const count = format(",d");
const BAR_W = 100;
const BAR_H = 8;

/**
 * The storage panel: `selection.call(storage().context(ctx))`; updated on every frame, fixed heights.
 * @returns {function} the chart, with chained accessors context, keep (checkpoints logged) and read-out rows()
 */
export function storage() {
  let ctx = null;
  let keep = 10;
  let log = [];
  let drawn = {seq: -1, modelled: false, servers: [], tenants: [], jobs: [], checkpoints: [], recent: []};
  let root = null;

  function chart(selection) {
    root = selection.classed("ibweb-storage", true).attr("aria-label", "Storage");
    root.append("h2").text("Storage");
    const facts = root.append("dl").attr("class", "ibweb-facts");

    const servers = table(box(root, "Servers", "Storage servers: read and write throughput"), "ibweb-storage-servers",
      "Read and write throughput per storage server against its capacity, and what limits it",
      [["Server"], ["Read", "Served, against the smaller of the backend and the HCA ports"],
        ["Write", "Absorbed, against the smaller of the backend and the HCA ports"],
        ["Limit", "What holds the server back: its backend or the network"]]);
    const tenants = table(box(root, "Tenants", "Storage throughput per tenant"), "ibweb-storage-tenants",
      "Read and write throughput per tenant", [["Tenant"], ["Read"], ["Write"]]);
    const jobs = table(box(root, "Data loading", "Storage throughput per job"), "ibweb-storage-jobs",
      "Read and write throughput per job", [["Job"], ["Tenant"], ["Read"], ["Write"], ["Phase"]]);
    const checkpoints = box(root, "Checkpoints", "Checkpoint progress per job").append("ul")
      .attr("class", "ibweb-checkpoints").attr("aria-label", "Checkpoints");
    const recent = box(root, "Recent checkpoints", "Finished checkpoints, newest first").append("ol")
      .attr("class", "ibweb-checkpoint-log").attr("aria-label", "Finished checkpoints, newest first");

    ctx.on("snapshot.storage", () => (log = []));
    ctx.on("frame.storage", (frame) => {
      const section = frame.storage;
      log = checkpointLog(log, section, keep);
      drawn = {
        seq: frame.seq,
        modelled: section != null,
        servers: serverRows(section),
        tenants: tenantRows(section),
        jobs: storageJobRows(section, frame.jobs),
        checkpoints: checkpointRows(section, frame.jobs),
        recent: log,
      };
      root.attr("data-state", section == null ? "none" : "modelled");

      facts.selectAll("div").data(factRows(section), (d) => d[0])
        .join((enter) => {
          const div = enter.append("div");
          div.append("dt");
          div.append("dd");
          return div;
        })
        .classed("ibweb-wide", (d) => !!d[4])
        .call((div) => div.select("dt").text((d) => d[1]))
        .call((div) => div.select("dd").text((d) => d[2]).attr("title", (d) => d[3] ?? null));

      const srows = servers.selectAll("tr").data(drawn.servers, (d) => d.id)
        .join((enter) => {
          const tr = enter.append("tr").attr("data-server", (d) => d.name);
          tr.append("td").attr("class", "ibweb-name");
          for (const dir of ["read", "write"]) {
            const td = tr.append("td").attr("class", `ibweb-bar-cell ibweb-${dir}`);
            const svg = td.append("svg").attr("class", "ibweb-bar").attr("viewBox", `0 0 ${BAR_W} ${BAR_H}`)
              .attr("preserveAspectRatio", "none").attr("aria-hidden", "true");
            svg.append("rect").attr("class", "ibweb-bar-track").attr("width", BAR_W).attr("height", BAR_H);
            svg.append("rect").attr("class", "ibweb-bar-fill").attr("height", BAR_H);
            td.append("span").attr("class", "ibweb-num");
          }
          tr.append("td").attr("class", "ibweb-limit");
          return tr;
        })
        .order();
      srows.select(".ibweb-name").text((d) => d.name)
        .attr("title", (d) => `network ${formatRate(d.network)}`);
      for (const dir of ["read", "write"]) {
        const cap = `${dir}Cap`;
        const bn = `${dir}Bottleneck`;
        const cell = srows.select(`.ibweb-${dir}`)
          .attr("data-bottleneck", (d) => d[bn] ?? "none")
          .attr("aria-label", (d) => `${dir} ${formatRate(d[dir])} of ${formatRate(d[cap])}`
            + (d[bn] ? `, limited by the ${d[bn]}` : ""));
        cell.select(".ibweb-bar-fill").attr("width", (d) => BAR_W * d[`${dir}Fraction`]);
        cell.select("span").text((d) => formatRate(d[dir])).attr("title", (d) => `of ${formatRate(d[cap])}`);
      }
      srows.select(".ibweb-limit").text((d) => bottleneckText(d) || "–")
        .classed("ibweb-limited", (d) => !!(d.readBottleneck || d.writeBottleneck));

      rows(tenants, drawn.tenants, (d) => [[d.id, "ibweb-name"], [formatRate(d.read), "ibweb-num"],
        [formatRate(d.write), "ibweb-num"]]);
      rows(jobs, drawn.jobs, (d) => [[d.id, "ibweb-name"], [d.tenant, null], [formatRate(d.read), "ibweb-num"],
        [formatRate(d.write), "ibweb-num"], [d.phase ?? "–", d.phase === "checkpoint" ? "ibweb-writing" : null]]);

      const items = checkpoints.selectAll("li.ibweb-checkpoint").data(drawn.checkpoints, (d) => d.id)
        .join((enter) => {
          const li = enter.append("li").attr("class", "ibweb-checkpoint");
          li.append("div").attr("class", "ibweb-checkpoint-title");
          li.append("progress").attr("max", 1);
          li.append("div").attr("class", "ibweb-checkpoint-cost");
          return li;
        })
        .attr("data-job", (d) => d.id)
        .attr("data-state", (d) => (d.writing ? "writing" : "idle"))
        .order();
      items.select(".ibweb-checkpoint-title").text(checkpointTitle);
      items.select("progress").property("value", (d) => d.progress)
        .attr("aria-label", (d) => `${d.id} checkpoint: ${d.writing ? percent(d.progress) : "idle"}`);
      items.select(".ibweb-checkpoint-cost").text(checkpointCost);
      checkpoints.selectAll("li.ibweb-none").data(drawn.checkpoints.length ? [] : [0]).join("li")
        .attr("class", "ibweb-none").text("No job checkpoints");

      recent.selectAll("li").data(log.length ? log : [{key: "none"}], (d) => d.key).join("li")
        .attr("data-job", (d) => d.job ?? null)
        .text((d) => (d.job ? `${d.job} #${d.count}: ${formatDuration(d.s)}, ${formatGpuTime(d.gpuS)}`
          : "No checkpoint finished yet"))
        .order();
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.keep = function (_) {
    return arguments.length ? ((keep = _), chart) : keep;
  };
  /**
   * What the panel draws: {seq, modelled, servers, tenants, jobs, checkpoints, recent, drawn: {servers, tenants,
   * jobs, checkpoints, recent} (rows in the page)}.
   */
  chart.rows = () => ({
    ...drawn,
    drawn: root ? {
      servers: root.selectAll(".ibweb-storage-servers tbody tr").size(),
      tenants: root.selectAll(".ibweb-storage-tenants tbody tr").size(),
      jobs: root.selectAll(".ibweb-storage-jobs tbody tr").size(),
      checkpoints: root.selectAll(".ibweb-checkpoints li.ibweb-checkpoint").size(),
      recent: root.selectAll(".ibweb-checkpoint-log li[data-job]").size(),
    } : {servers: 0, tenants: 0, jobs: 0, checkpoints: 0, recent: 0},
  });
  return chart;
}

/** A titled scroll box of fixed height. */
function box(parent, title, label) {
  parent.append("h3").text(title);
  return parent.append("div").attr("class", "ibweb-box").attr("role", "region").attr("aria-label", label)
    .attr("tabindex", 0); // scrolls: reachable by keyboard
}

/** A table with a caption and header; returns its body. */
function table(parent, cls, caption, columns) {
  const t = parent.append("table").attr("class", `ibweb-table ${cls}`);
  t.append("caption").attr("class", "ibweb-sr").text(caption);
  t.append("thead").append("tr").selectAll("th").data(columns).join("th").attr("scope", "col")
    .text((d) => d[0]).attr("title", (d) => d[1] ?? null);
  return t.append("tbody");
}

/** Rows keyed by id, cells [text, class] from `cells(row)`. */
function rows(body, data, cells) {
  body.selectAll("tr").data(data, (d) => d.id).join("tr").attr("data-id", (d) => d.id).order()
    .selectAll("td").data(cells).join("td").attr("class", (c) => c[1]).text((c) => c[0]);
}

function checkpointTitle(d) {
  if (d.writing) {
    return `${d.id}: writing ${percent(d.progress)}, ${formatBytes(d.bytesNow)} of ${formatBytes(d.size)}, `
      + `ETA ${formatDuration(d.eta)}`;
  }
  const now = d.iterations == null ? "" : `, now ${count(d.iterations)}`;
  return `${d.id}: idle, ${formatBytes(d.size)} every ${count(d.every)} iterations; next at ${count(d.nextIteration)}${now}`;
}

function checkpointCost(d) {
  const last = d.lastS == null ? "none finished" : `last ${formatDuration(d.lastS)} (${formatGpuTime(d.lastGpuS)})`;
  return `${count(d.count)} done, ${last}; total ${formatGpuTime(d.gpuSTotal)}, ${formatBytes(d.bytesWritten)} written`;
}

/** Summary facts: [key, label, text, title, wide]. */
function factRows(section) {
  if (section == null) return [["state", "Storage", "not modelled on this fabric", null, true]];
  const t = section.totals ?? {};
  const layout = section.layout;
  const out = [
    ["read", "Read", `${formatRate(t.read_gbps ?? 0)} of ${formatRate(t.backend_read_gbps ?? 0)}`,
      "Served by all servers, against their backends"],
    ["write", "Write", `${formatRate(t.write_gbps ?? 0)} of ${formatRate(t.backend_write_gbps ?? 0)}`,
      "Absorbed by all servers, against their backends"],
  ];
  if (layout) {
    const stripes = layout.stripe_count === -1 ? "all servers" : `${layout.stripe_count}`;
    const MiB = 1048576;
    const size = layout.stripe_size % MiB === 0 ? `${layout.stripe_size / MiB} MiB` : formatBytes(layout.stripe_size);
    out.push(["layout", "Striping", `${stripes} × ${size}`, "Stripe count × stripe size"]);
  }
  return out;
}
