// Tenant filter: highlights a tenant's hosts and the links its jobs use.
import {makeHighlight, tenantUnion} from "../highlight.js";

/**
 * The tenant filter: `selection.call(tenantFilter().context(ctx))`; tenants come from the jobs catalog.
 * @returns {function} the chart, with chained accessor context and read-out selected()
 */
export function tenantFilter() {
  let ctx = null;
  let selected = "";

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
      ctx.highlight(makeHighlight(ctx.fabric, {kind: "tenant", label: tenant, links: u.links, nodes: u.hosts}));
    };
    ctx.on("catalog.tenants", (jobs) => fill([...new Set(jobs.map((j) => j.tenant))].sort()));
    ctx.on("highlight.tenants", (h) => {
      if (h?.kind !== "tenant" && selected) (selected = ""), select.property("value", "");
    });
    fill([]);
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  /** The tenant highlighted, "" for none. */
  chart.selected = () => selected;
  return chart;
}
