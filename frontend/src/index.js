// Wiring: build the page inside #ibweb, connect the feed and the API.
import {select} from "d3";
import {api} from "./api.js";
import {alerts} from "./charts/alerts.js";
import {analyses} from "./charts/analyses.js";
import {routingPanel} from "./charts/routing.js";
import {controls} from "./charts/controls.js";
import {detail} from "./charts/detail.js";
import {header} from "./charts/header.js";
import {healthOverlay} from "./charts/health-overlay.js";
import {hotspots} from "./charts/hotspots.js";
import {jobs} from "./charts/jobs.js";
import {legend} from "./charts/legend.js";
import {matrix} from "./charts/matrix.js";
import {pathView} from "./charts/path.js";
import {sharp} from "./charts/sharp.js";
import {status} from "./charts/status.js";
import {storage} from "./charts/storage.js";
import {tenantFilter} from "./charts/tenants.js";
import {topology} from "./charts/topology.js";
import {totals} from "./charts/totals.js";
import {twinPanel} from "./charts/twin.js";
import {context} from "./context.js";
import {feed, feedURL} from "./feed.js";
import {applyFocus, parseFocus} from "./focus.js";
import {healthSource} from "./health-source.js";
import {expose} from "./hooks.js";

const root = select("#ibweb");
if (!root.empty()) {
  const {fabric = "", feed: path, api: apiBase = "/api/"} = root.node().dataset;
  const ctx = context();
  const client = api().base(apiBase).fabric(fabric);
  const map = topology().context(ctx);
  const health = healthSource(() => client.health());
  const panels = {
    matrix: matrix().context(ctx).layout(() => map.layout()),
    hotspots: hotspots().context(ctx),
    jobs: jobs().context(ctx),
    detail: detail().context(ctx).api(client).health(health),
    health: healthOverlay().context(ctx).map(map).source(health),
    sharp: sharp().context(ctx),
    storage: storage().context(ctx),
    twin: twinPanel().context(ctx).map(map).api(client.twin()).analyses(client.analyses()).planURL(`/fabrics/${encodeURIComponent(fabric)}/plan/`),
  };
  root.classed("ibweb", true);
  root.append("header").call(header().context(ctx).title(fabric));
  root.append("div").call(status().context(ctx));
  const body = root.append("div").attr("class", "ibweb-body");
  const main = body.append("div").attr("class", "ibweb-main");
  const view = main.append("section").attr("class", "ibweb-map").attr("aria-label", "Fabric map");
  view.append("div").call(map);
  view.append("div").attr("class", "ibweb-overlay").call(legend().context(ctx)).call(panels.health).call(controls().target(map));
  const lower = main.append("div").attr("class", "ibweb-lower");
  lower.append("section").call(panels.matrix);
  lower.append("section").call(panels.detail);
  const side = body.append("aside").attr("class", "ibweb-side");
  side.append("section").attr("class", "ibweb-find").attr("aria-label", "Highlight")
    .call(tenantFilter().context(ctx).api(client).initial(new URLSearchParams(location.search).get("tenant"))).call(pathView().context(ctx).api(client));
  side.append("section").call(totals().context(ctx));
  side.append("section").call(panels.hotspots);
  side.append("section").call(panels.twin);
  side.append("section").call(panels.jobs);
  side.append("section").call(panels.sharp);
  side.append("section").call(panels.storage);
  side.append("section").call(routingPanel().context(ctx).api(client));
  side.append("section").call(analyses().context(ctx).api(client.analyses()));
  side.append("section").call(panels.alerts ?? alerts().context(ctx));
  let catalogAsked = -Infinity;
  const loadCatalog = () => {
    catalogAsked = performance.now();
    client.jobs().then((answer) => ctx.setCatalog(answer.jobs)).catch((error) => {
      console.warn(`ibweb: no jobs catalog: ${error.message}`);
      ctx.setCatalog([]);
    });
  };
  ctx.on("snapshot.catalog", loadCatalog);
  // A telemetry-fed fabric's jobs come and go with its scheduler: a job the catalog lacks asks for it again.
  ctx.on("frame.catalog", (frame) => {
    if (performance.now() - catalogAsked < 5000) return;
    const known = new Set(ctx.catalog.map((j) => j.id));
    if (frame.jobs.some((j) => !known.has(j.id))) loadCatalog();
  });
  const focus = parseFocus(location.search);
  if (focus) {
    const once = () => {
      if (applyFocus(ctx, focus)) ctx.on("snapshot.focus", null).on("catalog.focus", null);
    };
    ctx.on("snapshot.focus", once).on("catalog.focus", once);
  }
  expose(window, ctx, map, panels);
  ctx.start();
  feed().url(feedURL(path, location, 2)).context(ctx).start(); // binary frames (docs/feed-protocol.md, v2)
}
