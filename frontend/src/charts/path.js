// Path view: pick two hosts, see the routed path (from the path API) drawn on the map.
import {makeHighlight} from "../highlight.js";

let forms = 0;

/**
 * The path form: `selection.call(pathView().context(ctx).api(client))`.
 * @returns {function} the chart, with chained accessors context, api and read-out hops()
 */
export function pathView() {
  let ctx = null;
  let client = null;
  let hops = [];
  const id = `ibweb-hosts-${++forms}`;

  function chart(selection) {
    const form = selection.append("form").attr("class", "ibweb-path").attr("aria-label", "Routed path between two hosts");
    const list = form.append("datalist").attr("id", id);
    const field = (label, name) => {
      const wrap = form.append("label").text(label);
      return wrap.append("input").attr("name", name).attr("list", id).attr("autocomplete", "off").attr("size", 10)
        .attr("required", true);
    };
    const src = field("From", "src");
    const dst = field("To", "dst");
    form.append("button").attr("type", "submit").text("Path");
    form.append("button").attr("type", "button").attr("class", "ibweb-clear").text("Clear")
      .attr("aria-label", "Clear the path").on("click", () => ctx.highlighted?.kind === "path" && ctx.highlight(null));
    const out = form.append("output").attr("class", "ibweb-path-out").attr("aria-live", "polite");

    form.on("submit", async (event) => {
      event.preventDefault();
      const [a, b] = [src.property("value").trim(), dst.property("value").trim()];
      out.text("routing…");
      try {
        const body = await client.path(a, b);
        hops = body.hops;
        ctx.highlight(makeHighlight(ctx.fabric, {kind: "path", label: `${a} → ${b}`, links: body.links,
          nodes: hops.map((h) => h.node)}));
        out.text(hops.map((h) => (h.out_port ? `${h.name}:${h.out_port}` : h.name)).join(" → "));
      } catch (error) {
        hops = [];
        out.text(error.message);
      }
    });
    ctx.on("highlight.path", (h) => {
      if (h?.kind !== "path") (hops = []), out.text("");
    });
    ctx.on("snapshot.path", (fabric) => {
      const names = [];
      for (let i = 0; i < fabric.n; ++i) if (fabric.nodes.isHost[i]) names.push(fabric.nodes.name[i]);
      list.selectAll("option").data(names.length <= 5000 ? names : []).join("option").attr("value", (d) => d);
    });
  }

  chart.context = function (_) {
    return arguments.length ? ((ctx = _), chart) : ctx;
  };
  chart.api = function (_) {
    return arguments.length ? ((client = _), chart) : client;
  };
  /** Hops of the path shown (path API), [] when none. */
  chart.hops = () => hops;
  return chart;
}
