// Tenant filter: highlights a tenant's hosts (its jobs' and its partitions' members) and the links its jobs use.
import {makeHighlight, tenantPartitions, tenantUnion} from "../highlight.js";

/**
 * The tenant filter: `selection.call(tenantFilter().context(ctx))`; tenants come from the jobs catalog.
 * @returns {function} the chart, with chained accessor context and read-out selected()
 */
export function tenantFilter() {
  let ctx = null;
  let api = null;
  let selected = "";
  let initial = "";

  function chart(selection) {
    const label = selection.append("label").attr("class", "ibweb-tenant").text("Tenant ");
    const select = label.append("select").attr("aria-label", "Highlight a tenant")
      .on("change", (event) => apply(event.target.value));

    const fill = (tenants) => {
      select.selectAll("option").data(["", ...tenants]).join("option").attr("value", (d) => d)
        .text((d) => d || "all tenants");
      select.property("value", selected);
    };
    const apply = (tenant) => {
      selected = tenant;
      if (!tenant) {
        if (ctx.highlighted?.kind === "tenant") ctx.highlight(null);
        return;
      }
      const u = tenantUnion(ctx.catalog, tenant);
      const show = (parts) => {
        if (selected !== tenant) return;  // another choice was made meanwhile
        const nodes = [...new Set([...u.hosts, ...parts.nodes])].sort((a, b) => a - b);
        const label = parts.partitions.length ? `${tenant} (${parts.partitions.join(", ")})` : tenant;
        ctx.highlight(makeHighlight(ctx.fabric, {kind: "tenant", label, tenant, links: u.links, nodes}));
      };
      show({partitions: [], nodes: []});
      if (api) api.partitions().then((pkeys) => show(tenantPartitions(pkeys, tenant)), () => {});
    };
    ctx.on("catalog.tenants", (jobs) => {
      const tenants = [...new Set(jobs.map((j) => j.tenant))].sort();
      fill(tenants);
      if (initial && tenants.includes(initial)) {
        apply(initial);  // a link such as /fabrics/demo/?tenant=acme opens with the tenant highlighted
        select.property("value", initial);
        initial = "";
      }
    });
    ctx.on("highlight.tenants", (h) => {
      if (h?.kind !== "tenant" && selected) (selected = ""), select.property("value", "");
    });
    fill([]);
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /** The API client (partitions of the tenant come from the P_Key API). */
  chart.api = function (_) {
    return arguments.length ? ((api = _), chart) : api;
  };
  /** The tenant to highlight once the jobs catalog has arrived (from the page's ?tenant= parameter). */
  chart.initial = function (_) {
    return arguments.length ? ((initial = _ || ""), chart) : initial;
  };
  /** The tenant highlighted, "" for none. */
  chart.selected = () => selected;
  return chart;
}
