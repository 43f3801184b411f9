// Wiring: build the page inside #ibweb and connect the feed.
import {select} from "d3";
import {controls} from "./charts/controls.js";
import {header} from "./charts/header.js";
import {legend} from "./charts/legend.js";
import {status} from "./charts/status.js";
import {topology} from "./charts/topology.js";
import {totals} from "./charts/totals.js";
import {context} from "./context.js";
import {feed, feedURL} from "./feed.js";
import {expose} from "./hooks.js";

const root = select("#ibweb");
if (!root.empty()) {
  const {fabric = "", feed: path} = root.node().dataset;
  const ctx = context();
  const map = topology().context(ctx);
  root.classed("ibweb", true);
  root.append("header").call(header().context(ctx).title(fabric));
  root.append("div").call(status().context(ctx));
  const body = root.append("div").attr("class", "ibweb-body");
  const view = body.append("section").attr("class", "ibweb-map").attr("aria-label", "Fabric map");
  view.append("div").call(map);
  view.append("div").attr("class", "ibweb-overlay").call(legend()).call(controls().target(map));
  body.append("aside").call(totals().context(ctx));
  expose(window, ctx, map);
  ctx.start();
  feed().url(feedURL(path, location)).context(ctx).start();
}
