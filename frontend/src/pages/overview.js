// The fabrics overview: every card follows its fabric, from the overview API (a few numbers per fabric, never a
// whole frame), polled once per second while the tab is visible.
import {format} from "d3";
import {formatRate} from "../format.js";
import {pollPage} from "./poll.js";

const count = format(",d");
const pct = format(".0%");

/**
 * The text of a card's fields from one overview entry.
 * @param {object} c the API's card
 * @returns {object} {state, size, throughput, congested, hottest, alerts, progress, fraction}
 */
export function cardText(c) {
  const h = c.hottest ?? {};
  return {
    state: c.state,
    size: c.hosts ? ` · ${count(c.hosts)} hosts, ${count(c.switches)} switches, ${count(c.links)} links` : "",
    throughput: c.throughput_gbps == null ? "–" : formatRate(c.throughput_gbps),
    congested: c.congested_links == null ? "–" : count(c.congested_links),
    hottest: h.label ? `${h.label} at ${pct(h.util ?? 0)}` : "–",
    alerts: `${c.alerts.critical} critical, ${c.alerts.warning} warning, ${c.alerts.info} info`,
    progress: c.progress?.message ?? "",
    fraction: c.progress?.fraction ?? 0,
  };
}

/** A fabric's line in its cluster's row: state, throughput, hottest link, alerts. */
function clusterRow(row, c, text) {
  row.dataset.state = c.state;
  const badge = row.querySelector(".engine-state");
  badge.dataset.state = c.state;
  badge.textContent = c.state;
  for (const field of ["throughput", "hottest"]) row.querySelector(`[data-field=${field}]`).textContent = text[field];
  row.querySelector("[data-field=alerts] a").textContent = text.alerts;
}

/**
 * Wire the overview: `overviewPage(document.querySelector("[data-page=overview]"))`.
 * @param {Element} root
 * @param {object} [options] {every: ms, fetch}
 * @returns {{refresh: function(): Promise<boolean>, stop: function()}}
 */
export function overviewPage(root, options = {}) {
  return pollPage(root, ({fabrics}) => {
    for (const c of fabrics) {
      const text = cardText(c);
      for (const row of root.querySelectorAll(`.cluster-fabric[data-slug="${CSS.escape(c.slug)}"]`)) {
        clusterRow(row, c, text);
      }
      const card = root.querySelector(`.fabric-card[data-slug="${CSS.escape(c.slug)}"]`);
      if (!card) continue;
      card.dataset.state = c.state;
      card.dataset.seq = c.seq ?? "";
      const badge = card.querySelector(".engine-state");
      badge.dataset.state = c.state;
      badge.textContent = c.state;
      for (const field of ["size", "throughput", "congested", "hottest", "progress"]) {
        const el = card.querySelector(`[data-field=${field}]`);
        if (el) el.textContent = text[field];
      }
      const alerts = card.querySelector("[data-field=alerts] a");
      if (alerts) alerts.textContent = text.alerts;
      card.querySelector(".card-progress").hidden = c.state !== "starting";
      card.querySelector(".card-progress progress").value = text.fraction;
    }
  }, {what: "overview", ...options});
}
