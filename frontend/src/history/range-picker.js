// The time-range picker of the per-port history (issue 40): a button per preset (1 h … 90 d) and a custom
// from/to in UTC; compact (the port panel, the Health page), one select with the same choices and the custom
// fields folded under it. `selection.call(rangePicker().value(range).on("change", fn))`; `extra` presets (such as
// the port panel's live ring) come first.
import {dispatch} from "d3";
import {RANGES, customRange, rangeWindow, toUtcInput} from "./time-range.js";

let pickers = 0;

/**
 * @returns {function} the picker, with chained accessors value, compact, extra, now, on and set(range) (redraws
 *   without telling the listeners)
 */
export function rangePicker() {
  const events = dispatch("change");
  let value = {key: "24h"};
  let compact = false;
  let extra = []; // [{key, label}] before the presets
  let now = () => Date.now() / 1000;
  let redraw = () => {};
  const id = `ibweb-range-${++pickers}`;

  function chart(selection) {
    const root = selection.append("div").attr("class", `ibweb-range${compact ? " ibweb-range-compact" : ""}`)
      .attr("role", "group").attr("aria-label", "Time range");
    const choices = [...extra, ...RANGES.map((r) => ({key: r.key, label: compact ? r.label : `Last ${r.label}`})),
      {key: "custom", label: "Custom…"}];
    let buttons = null;
    let select = null;
    if (compact) {
      select = root.append("select").attr("aria-label", "Time range")
        .on("change", () => (select.property("value") === "custom" ? openCustom() : pick({key: select.property("value")})));
      select.selectAll("option").data(choices).join("option").attr("value", (c) => c.key).text((c) => c.label);
    } else {
      buttons = root.selectAll("button.ibweb-range-choice").data(choices).join("button").attr("type", "button")
        .attr("class", "ibweb-range-choice").attr("data-range", (c) => c.key).text((c) => c.label)
        .on("click", (_, c) => (c.key === "custom" ? openCustom() : pick({key: c.key})));
    }
    const custom = root.append("form").attr("class", "ibweb-range-custom").property("hidden", true)
      .attr("aria-label", "Custom window (UTC)")
      .on("submit", (event) => {
        event.preventDefault();
        const got = customRange(from.property("value"), to.property("value"), now());
        error.text(got.error ?? "");
        from.attr("aria-invalid", got.error?.startsWith("from") ? "true" : null);
        to.attr("aria-invalid", got.error?.startsWith("to") ? "true" : null);
        if (got.range) pick(got.range);
      });
    const field = (label, name) => custom.append("label").text(`${label} `).append("input")
      .attr("type", "datetime-local").attr("name", name).attr("required", "").attr("id", `${id}-${name}`);
    const from = field("From (UTC)", "from");
    const to = field("to (UTC)", "to");
    custom.append("button").attr("type", "submit").text("Apply");
    const error = custom.append("span").attr("class", "error").attr("role", "alert");

    function openCustom() {
      const w = rangeWindow(value, now()); // an extra choice (the live ring): the default preset's window
      if (!from.property("value")) from.property("value", toUtcInput(w.start));
      if (!to.property("value")) to.property("value", toUtcInput(w.end));
      custom.property("hidden", false);
      if (select) select.property("value", "custom");
      buttons?.attr("aria-pressed", (c) => String(c.key === "custom"));
      from.node().focus();
    }

    function pick(range) {
      value = range;
      draw();
      events.call("change", chart, range);
    }

    function draw() {
      const key = value.key;
      buttons?.attr("aria-pressed", (c) => String(c.key === key));
      if (select) select.property("value", key);
      custom.property("hidden", key !== "custom");
      if (key === "custom") from.property("value", toUtcInput(value.start)), to.property("value", toUtcInput(value.end));
      error.text("");
    }

    redraw = draw;
    draw();
  }

  /** The range shown: {key} of a preset (or of an `extra` choice) or {key: "custom", start, end}. */
  chart.value = function (_) {
    return arguments.length ? ((value = _), chart) : value;
  };
  /** Show `range` without telling the listeners (the page's address changed it). */
  chart.set = (range) => ((value = range), redraw(), chart);
  chart.compact = function (_) {
    return arguments.length ? ((compact = Boolean(_)), chart) : compact;
  };
  chart.extra = function (_) {
    return arguments.length ? ((extra = _), chart) : extra;
  };
  /** A function returning the time now, s (a stand-in for tests). */
  chart.now = function (_) {
    return arguments.length ? ((now = _), chart) : now;
  };
  chart.on = (...args) => (events.on(...args), chart);
  return chart;
}
