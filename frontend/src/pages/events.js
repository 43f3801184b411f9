// The events page: the table refreshes itself (every 10 s while the box is ticked and the tab is visible),
// keeping open comment boxes; it waits while focus is on a field or button of the table or a comment
// is typed and not sent.
// Everything else is plain HTML forms, but "Silence…" on each row for who may silence (../silence.js).
import {silenceEvents} from "../silence.js";

/** A row's comment box (its other boxes, "Silence…", keep their own state: ../silence.js). */
const COMMENTS = "details:not(.silence-action)";

/**
 * Ids of the events whose comment box is open in `section`.
 * @param {Element} section
 * @returns {Set<string>}
 */
export function openDetails(section) {
  return new Set([...section.querySelectorAll(`tr[data-event] ${COMMENTS}[open]`)]
    .map((d) => d.closest("tr").dataset.event));
}

/**
 * Whether refreshing `section` now would take something from the user: focus on one of its fields or
 * buttons (where a keyboard user tabbed to) or a comment typed and not yet sent.
 * @param {Element} section
 * @returns {boolean}
 */
export function busy(section) {
  const active = document.activeElement;
  if (active && section.contains(active) && active.matches("textarea, input, select, button")) return true;
  return [...section.querySelectorAll("textarea")].some((t) => t.value.trim() !== "");
}

/**
 * Wire the events page: `eventsPage(document.querySelector("[data-page=events]"))`.
 * @param {Element} root the page's main element
 * @param {object} [options] {every: ms between refreshes, fetch}
 * @returns {{refresh: function(): Promise<boolean>, stop: function()}}
 */
export function eventsPage(root, {every = 10000, fetch = (...args) => globalThis.fetch(...args)} = {}) {
  const toggle = root.querySelector("#events-live");
  let timer = null;

  async function refresh() {
    const section = root.querySelector("#event-table");
    if (!section || busy(section)) return false;
    const open = openDetails(section);
    section.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(location.href, {headers: {Accept: "text/html"}, credentials: "same-origin"});
      if (!response.ok) return false;
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = doc.querySelector("#event-table");
      const counts = doc.querySelector(".event-counts");
      if (!fresh) return false;
      section.replaceChildren(...fresh.childNodes);
      for (const id of open) section.querySelector(`tr[data-event="${CSS.escape(id)}"] ${COMMENTS}`)?.setAttribute("open", "");
      if (counts) root.querySelector(".event-counts")?.replaceChildren(...counts.childNodes);
      root.dataset.refreshed = String(Number(root.dataset.refreshed ?? 0) + 1);
      return true;
    } catch (error) {
      console.warn(`ibweb: events not refreshed: ${error.message}`);
      return false;
    } finally {
      section.setAttribute("aria-busy", "false");
    }
  }

  const schedule = () => {
    clearInterval(timer);
    timer = toggle?.checked ? setInterval(() => document.visibilityState === "visible" && refresh(), every) : null;
  };
  // Back from a comment or an acknowledgement: the row's comments open at the event.
  const target = location.hash.startsWith("#event-") ? root.querySelector(`tr#${CSS.escape(location.hash.slice(1))}`) : null;
  target?.querySelector(COMMENTS)?.setAttribute("open", "");
  toggle?.addEventListener("change", schedule);
  globalThis.addEventListener?.("ibweb:refresh-events", () => refresh());
  silenceEvents(root, {fetch});
  schedule();
  return {refresh, stop: () => clearInterval(timer)};
}
