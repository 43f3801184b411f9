// Focus from the page's address: `?focus=link:<directed link>`, `?focus=node:<name>` or `?focus=job:<id>` opens the
// live map on what an event (or any link elsewhere) is about. Pure parsing; `applyFocus` acts on the context.
import {jobHighlight, makeHighlight} from "./highlight.js";

/**
 * What `?focus=` asks for.
 * @param {string} search location.search
 * @returns {{kind: "link"|"node"|"job", value: string}|null}
 */
export function parseFocus(search) {
  const raw = new URLSearchParams(search ?? "").get("focus") ?? "";
  const at = raw.indexOf(":");
  if (at < 1) return null;
  const kind = raw.slice(0, at);
  const value = raw.slice(at + 1).trim();
  if (!value || !["link", "node", "job"].includes(kind)) return null;
  if (kind === "link" && !/^\d+$/.test(value)) return null;
  return {kind, value};
}

/**
 * Focus the map: select the link (the port detail opens on its cable) or node and highlight it; a job is
 * highlighted once the jobs catalog is known. Returns whether the focus could be applied now.
 * @param {object} ctx the context (after a snapshot)
 * @param {{kind: string, value: string}} focus from parseFocus
 * @returns {boolean}
 */
export function applyFocus(ctx, focus) {
  const fabric = ctx.fabric;
  if (!fabric || !focus) return false;
  if (focus.kind === "link") {
    const d = Number(focus.value);
    if (d >= 2 * fabric.L) return false;
    ctx.select({kind: "link", index: d % fabric.L});
    ctx.highlight(makeHighlight(fabric, {kind: "focus", label: `link ${d}`, links: [d]}));
    return true;
  }
  if (focus.kind === "node") {
    const index = fabric.nodes.name.indexOf(focus.value);
    if (index < 0) return false;
    ctx.select({kind: "node", index});
    ctx.highlight(makeHighlight(fabric, {kind: "focus", label: focus.value, nodes: [index]}));
    return true;
  }
  if (!ctx.catalog.some((j) => j.id === focus.value)) return false;
  ctx.highlight(jobHighlight(fabric, ctx.catalog, ctx.frame?.jobs ?? [], focus.value));
  return true;
}
