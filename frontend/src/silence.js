// "Silence…" where the thing is (issue 39): on an event's row of the events page, and on a port or a switch in the
// map's detail panel. Shown only when the server says this user may create silences (GET
// /api/notify/silences/draft/: the access layer decides); a silence is POSTed to /api/notify/silences/ with its
// matchers, window and reason (the server records the author).
import {csrfToken, errorText} from "./api.js";

const API = "/api/notify/silences/";
/** Hours a silence made here lasts (the first is the default). */
export const DURATIONS = [2, 1, 4, 8, 24, 72];

/**
 * The body of a silence: `matchers` ({fabrics, kinds, switches, ports, hosts}) for `hours` from `now`, `reason`.
 * @param {object} matchers
 * @param {number} hours
 * @param {string} reason
 * @param {Date} [now]
 * @returns {object}
 */
export function silenceBody(matchers, hours, reason, now = new Date()) {
  const ends = new Date(now.getTime() + Number(hours) * 3600 * 1000);
  return {...matchers, starts_at: now.toISOString(), ends_at: ends.toISOString(), reason: String(reason).trim()};
}

/**
 * What may be silenced for a map item: [{label, matchers}] (a cable: each switch end's port and the switch; a
 * switch: itself; a host: itself), on the fabric `slug`.
 * @param {object} fabric decoded fabric (nodes.name, nodes.kind, links.a, links.b, links.aPort, links.bPort)
 * @param {string} slug
 * @param {{kind: string, index: number}|null} item
 * @returns {{label: string, matchers: object}[]}
 */
export function mapTargets(fabric, slug, item) {
  if (!fabric || !item) return [];
  const {name, kind} = fabric.nodes;
  const fabrics = [slug];
  const ofNode = (i) => (kind[i] === "host" ? [{label: `host ${name[i]}`, matchers: {fabrics, hosts: [name[i]]}}]
    : [{label: `switch ${name[i]}`, matchers: {fabrics, switches: [name[i]]}}]);
  if (item.kind === "node") return ofNode(item.index);
  if (item.kind !== "link") return [];
  const {a, b, aPort, bPort} = fabric.links;
  const out = [];
  for (const [node, port] of [[a[item.index], aPort[item.index]], [b[item.index], bPort[item.index]]]) {
    if (kind[node] === "host") continue;
    const label = `${name[node]} port ${port}`;
    out.push({label: `port ${label}`, matchers: {fabrics, ports: [label]}});
  }
  for (const node of [a[item.index], b[item.index]]) if (kind[node] !== "host") out.push(...ofNode(node));
  return out;
}

/**
 * One line saying what a silence matches.
 * @param {object} matchers
 * @returns {string}
 */
export function describe(matchers) {
  return Object.entries(matchers ?? {}).filter(([, v]) => v?.length).map(([k, v]) => `${k}: ${v.join(", ")}`)
    .join("; ") || "everything";
}

const cache = new Map();

/**
 * Whether this user may create silences (asked once per page).
 * @param {function} fetcher
 * @returns {Promise<boolean>}
 */
export function maySilence(fetcher = (...args) => globalThis.fetch(...args)) {
  if (!cache.has(fetcher)) {
    cache.set(fetcher, fetcher(`${API}draft/`, {headers: {Accept: "application/json"}, credentials: "same-origin"})
      .then((r) => (r.ok ? r.json() : {})).then((body) => Boolean(body.may_create)).catch(() => false));
  }
  return cache.get(fetcher);
}

async function postSilence(fetcher, body) {
  const response = await fetcher(API, {method: "POST", credentials: "same-origin", body: JSON.stringify(body),
    headers: {Accept: "application/json", "Content-Type": "application/json",
      "X-CSRFToken": csrfToken(globalThis.document?.cookie ?? "")}});
  const answer = await response.json().catch(() => null);
  return response.ok ? {ok: true, silence: answer} : {ok: false, text: errorText(answer, response.status)};
}

/**
 * A small form: what is silenced, for how long, why; on submit POSTs the silence and says how it went.
 * @param {Document} doc
 * @param {{about: string, matchers: object, fetcher: function, onDone?: function, idPrefix: string}} options
 * @returns {HTMLFormElement}
 */
export function silenceForm(doc, {about, matchers, fetcher, onDone, idPrefix}) {
  const form = doc.createElement("form");
  form.className = "silence-form";
  Object.assign(form.style, {display: "flex", flexWrap: "wrap", alignItems: "center", gap: "0.3em 0.6em"});
  const what = doc.createElement("p");
  what.textContent = `Silence ${about} (${describe(matchers)})`;
  const hoursLabel = doc.createElement("label");
  hoursLabel.htmlFor = `${idPrefix}-hours`;
  hoursLabel.textContent = "for";
  const hours = doc.createElement("select");
  hours.id = `${idPrefix}-hours`;
  hours.name = "hours";
  for (const h of DURATIONS) hours.append(new Option(h === 1 ? "1 hour" : `${h} hours`, String(h)));
  const reasonLabel = doc.createElement("label");
  reasonLabel.htmlFor = `${idPrefix}-reason`;
  reasonLabel.textContent = "reason";
  const reason = doc.createElement("input");
  reason.id = `${idPrefix}-reason`;
  reason.name = "reason";
  reason.required = true;
  reason.maxLength = 2000;
  reason.placeholder = "maintenance, known issue…";
  const submit = doc.createElement("button");
  submit.type = "submit";
  submit.textContent = "Silence";
  const out = doc.createElement("output");
  out.setAttribute("aria-live", "polite");
  form.append(what, hoursLabel, hours, reasonLabel, reason, submit, out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!reason.value.trim()) {
      out.textContent = "a reason is needed";
      return;
    }
    submit.disabled = true;
    try {
      const result = await postSilence(fetcher, silenceBody(matchers, hours.value, reason.value));
      if (result.ok) {
        const s = result.silence ?? {};
        out.textContent = `silenced until ${String(s.ends_at ?? "").slice(0, 16).replace("T", " ")} UTC by ${s.author_name ?? "you"}`;
        form.dataset.silence = String(s.id ?? "");
        reason.value = "";
        onDone?.(s);
      } else {
        out.textContent = `not silenced: ${result.text}`;
      }
    } catch (error) {
      out.textContent = `not silenced: ${error.message}`;
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

/**
 * The "Silence…" disclosure of event `id`: its form filled with the server's draft of that event (GET
 * draft/?event=<id>: its kind where it is), asked for once however often the box is opened meanwhile.
 * @param {Document} doc
 * @param {string} id
 * @param {function} fetch
 * @returns {HTMLDetailsElement}
 */
export function eventSilenceBox(doc, id, fetch) {
  const box = doc.createElement("details");
  box.className = "silence-action";
  box.dataset.silenceEvent = id;
  const summary = doc.createElement("summary");
  summary.textContent = "Silence…";
  summary.setAttribute("aria-label", `Silence event ${id}`);
  box.append(summary);
  let asked = null;
  box.addEventListener("toggle", () => {
    if (!box.open || asked) return;
    asked = (async () => {
      const response = await fetch(`${API}draft/?event=${encodeURIComponent(id)}`,
        {headers: {Accept: "application/json"}, credentials: "same-origin"});
      const draft = await response.json().catch(() => null);
      if (!response.ok || !draft?.matchers) {
        const p = doc.createElement("p");
        p.className = "error";
        p.textContent = errorText(draft, response.status);
        box.append(p);
        asked = null;  // opened again: asked again
        return;
      }
      box.append(silenceForm(doc, {about: draft.about, matchers: draft.matchers, fetcher: fetch,
        idPrefix: `silence-event-${id}`}));
    })().catch((error) => {
      asked = null;
      console.warn(`ibweb: no silence draft of event ${id}: ${error.message}`);
    });
  });
  return box;
}

/**
 * The events page: a "Silence…" disclosure on each event's row. When the table refreshes (its rows replaced), each
 * row gets back the box it had, as it was: open or not, its form with what was chosen and typed, its answer.
 * @param {Element} root the events page's main element
 * @param {{fetch?: function}} [options]
 * @returns {Promise<boolean>} whether the actions are shown
 */
export async function silenceEvents(root, {fetch = (...args) => globalThis.fetch(...args)} = {}) {
  if (!(await maySilence(fetch))) return false;
  const doc = root.ownerDocument;
  const boxes = new Map();  // event id -> its box, kept across refreshes
  const decorate = () => {
    const shown = new Set();
    for (const row of root.querySelectorAll("tr[data-event]")) {
      const id = row.dataset.event;
      shown.add(id);
      if (!boxes.has(id)) boxes.set(id, eventSilenceBox(doc, id, fetch));
      const box = boxes.get(id);
      if (row.contains(box)) continue;
      row.querySelectorAll(".silence-action").forEach((other) => other.remove());
      (row.lastElementChild ?? row).append(box);
    }
    for (const id of [...boxes.keys()]) if (!shown.has(id)) boxes.delete(id);  // its event is no longer listed
  };
  decorate();
  const table = root.querySelector("#event-table");
  if (table && globalThis.MutationObserver) new MutationObserver(decorate).observe(table, {childList: true, subtree: true});
  return true;
}

/**
 * The map's detail panel: "Silence…" buttons for the selected port(s) and switch(es), each opening its form.
 * @param {object} panel the panel's d3 selection
 * @param {object} ctx the context (fabric, select events)
 * @param {object} client the API client (its fabric() is the slug)
 * @param {{fetch?: function}} [options]
 */
export function silencePanel(panel, ctx, client, {fetch = (...args) => globalThis.fetch(...args)} = {}) {
  const node = panel.node();
  const doc = node.ownerDocument;
  const box = doc.createElement("div");
  box.className = "ibweb-silence";
  box.hidden = true;
  // under the panel's title: its foot may lie under the side panels
  const head = node.querySelector(".ibweb-panel-head");
  if (head) head.after(box);
  else node.append(box);
  let allowed = false;
  let item = null;
  const draw = () => {
    box.replaceChildren();
    const targets = allowed ? mapTargets(ctx.fabric, client.fabric(), item) : [];
    box.hidden = targets.length === 0;
    targets.forEach((target, i) => {
      const button = doc.createElement("button");
      button.type = "button";
      button.textContent = `Silence ${target.label}…`;
      button.addEventListener("click", () => {
        box.querySelector(".silence-form")?.remove();
        box.append(silenceForm(doc, {about: target.label, matchers: target.matchers, fetcher: fetch,
          idPrefix: `silence-map-${i}`}));
        box.querySelector(".silence-form input")?.focus();
      });
      box.append(button);
    });
  };
  maySilence(fetch).then((may) => {
    allowed = may;
    draw();
  });
  ctx.on("select.silence", (selected) => {
    item = selected;
    draw();
  });
  ctx.on("snapshot.silence", () => {
    item = null;
    draw();
  });
}
