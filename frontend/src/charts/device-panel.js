// A switch's device panel in the map's detail panel (issue 38): its vitals as its collectors read them (fans with
// their rpm, power supplies, temperatures against their thresholds, firmware, PSID, uptime) and the validation
// findings about it, from GET .../devices/<switch>/. Shown when a switch is selected on the map, or a cable with a
// switch end (the first one); folded unless something failed. `deviceRows` is pure (the tests read it).

/** Format an uptime in seconds: "3 d 4 h", "5 h 2 min", "42 min". */
export function uptimeText(s) {
  if (s == null) return "–";
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min`;
}

const temp = (v) => (v == null ? "–" : `${Math.round(v * 10) / 10} °C`);

/**
 * The panel's rows of one device answer: [[label, value, grade]] (grade "normal", "warning", "error" or null).
 * @param {object} body the devices API's answer {node, guid, lid, vitals: [...], node_info: [...], findings: [...]}
 * @returns {[string, string, string|null][]}
 */
export function deviceRows(body) {
  const rows = [];
  const vitals = body?.vitals ?? [];
  if (!vitals.length && !(body?.node_info ?? []).length) rows.push(["vitals", "none read (ibswinfo, ibdiagnet)", null]);
  for (const v of vitals) {
    rows.push(["device", [v.part_number, v.hardware].filter(Boolean).join(", ") || "–", null],
      ["serial", v.serial ?? "–", null], ["firmware", `${v.firmware ?? "–"}${v.psid ? ` (PSID ${v.psid})` : ""}`, null],
      ["uptime", uptimeText(v.uptime_s), null]);
    const fans = v.fans ?? [];
    if (fans.length) {
      const failed = fans.filter((f) => !f.ok || f.rpm === 0);
      rows.push(["fans", `${fans.length - failed.length} of ${fans.length} good` +
        (failed.length ? `; failed: ${failed.map((f) => f.name).join(", ")}` : "") +
        `; ${fans.filter((f) => f.rpm != null).map((f) => f.rpm).join(", ")} rpm`, failed.length ? "error" : "normal"]);
    }
    for (const p of v.psus ?? []) {
      const bad = !p.ok || p.dc_ok === false;
      rows.push([`PSU ${p.name}`, `${bad ? (p.ok ? "DC output not ok" : "failed") : "ok"}` +
        (p.watts != null ? `, ${p.watts} W` : ""), bad ? "error" : "normal"]);
    }
    for (const t of v.temperatures ?? []) {
      const grade = t.celsius == null ? null : t.critical != null && t.celsius >= t.critical ? "error"
        : t.warning != null && t.celsius >= t.warning ? "warning" : "normal";
      rows.push([t.sensor, `${temp(t.celsius)} (max ${temp(t.max_celsius)}; warning ${temp(t.warning)}, critical ${temp(t.critical)})`, grade]);
    }
    if (v.errors?.length) rows.push(["errors", v.errors.join("; "), "warning"]);
  }
  for (const n of vitals.length ? [] : body?.node_info ?? []) {
    rows.push(["hardware", n.hardware ?? "–", null], ["firmware", `${n.firmware ?? "–"}${n.psid ? ` (PSID ${n.psid})` : ""}`, null],
      ["uptime", uptimeText(n.uptime_s), null]);
  }
  for (const f of body?.findings ?? []) rows.push([f.check.replaceAll("_", " "), f.message, f.severity === "info" ? "normal" : f.severity]);
  return rows;
}

/**
 * The switch a map selection is about: a selected switch, or a selected cable's first switch end (-1: none).
 * @param {object|null} item {kind: "node"|"link", index}
 * @param {object} fabric decoded snapshot
 * @returns {number}
 */
export function selectedSwitch(item, fabric) {
  if (!item || !fabric) return -1;
  const isHost = fabric.nodes.isHost;
  if (item.kind === "node") return isHost[item.index] ? -1 : item.index;
  if (item.kind === "link") {
    const c = item.index % fabric.L;
    const ends = [fabric.links.a[c], fabric.links.b[c]];
    return ends.find((n) => !isHost[n]) ?? -1;
  }
  return -1;
}

/**
 * The History page's switch view of switch `name` of fabric `slug` over the last hour (its ports side by side).
 * @param {string} slug
 * @param {string} name
 * @returns {string}
 */
export function switchHistoryHref(slug, name) {
  return `/fabrics/${encodeURIComponent(slug)}/history/?${new URLSearchParams({range: "1h", switch: name})}`;
}

/**
 * Add the device panel to the detail panel `panel` (a d3 selection) and follow the map's selection:
 * `devicePanel(panel, ctx, client)`; the client is the fabric API (its base, fabric and fetch).
 * @returns {{state: function(): {node: string|null, rows: Array, note: string}}}
 */
export function devicePanel(panel, ctx, client) {
  const box = panel.append("details").attr("class", "ibweb-detail-device").style("display", "none");
  const head = box.append("summary");
  const table = box.append("table").attr("class", "ibweb-counters ibweb-device");
  const history = panel.append("a").attr("class", "ibweb-detail-switch-history").property("hidden", true)
    .text("Ports over time");
  let shown = {node: null, rows: [], note: ""};
  let generation = 0;

  function draw() {
    head.text(`Device: ${shown.node}${shown.note ? ` (${shown.note})` : ""}`);
    table.selectAll("tr").data(shown.rows).join("tr").attr("data-grade", (r) => r[2])
      .selectAll("td").data((r) => r.slice(0, 2)).join("td").text((d) => d);
  }

  function open(item) {
    const mine = ++generation;
    const node = selectedSwitch(item, ctx.fabric);
    if (node < 0 || !client) {
      shown = {node: null, rows: [], note: ""};
      box.style("display", "none");
      history.property("hidden", true);
      return;
    }
    const name = ctx.fabric.nodes.name[node];
    history.property("hidden", false).attr("href", switchHistoryHref(client.fabric(), name))
      .attr("title", `${name}'s ports side by side on the History page`);
    shown = {node: name, rows: [], note: "loading…"};
    box.style("display", null).property("open", false);
    draw();
    const base = `${client.base().replace(/\/?$/, "/")}fabrics/fabrics/${encodeURIComponent(client.fabric())}/`;
    client.fetch()(`${base}devices/${encodeURIComponent(name)}/`, {headers: {Accept: "application/json"}, credentials: "same-origin"})
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((body) => {
        if (mine !== generation) return;
        shown = {node: name, rows: deviceRows(body), note: ""};
        box.property("open", shown.rows.some((r) => r[2] === "error"));
        draw();
      }, (error) => {
        if (mine !== generation) return;
        shown = {node: name, rows: [], note: `unavailable: ${error.message}`};
        draw();
      });
  }

  ctx.on("select.device", open);
  ctx.on("snapshot.device", () => open(null));
  return {state: () => shown};
}
