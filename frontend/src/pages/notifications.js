// The notifications page: its forms and buttons call the notifications API (/api/notify/) and the page's tables
// are then read again from the server (the page renders them per the user's view). Forms: create and edit channels,
// rules and silences; buttons (data-action, data-url, optional data-method and data-body): send a test (its result
// shown in the row), send a digest now, enable or disable a rule, expire a silence, delete.
import {csrfToken, errorText} from "../api.js";
import {FieldError, bodyOf, fieldsOf, resultText} from "../notify-forms.js";

/**
 * Wire the page: `notificationsPage(document.querySelector("[data-page=notifications]"))`.
 * @param {Element} root
 * @param {object} [options] {fetch}
 * @returns {{refresh: function(): Promise<boolean>, call: function}}
 */
export function notificationsPage(root, {fetch = (...args) => globalThis.fetch(...args)} = {}) {
  const status = root.querySelector("#notify-status");
  const say = (text) => status && (status.textContent = text);

  async function call(url, method, body) {
    const headers = {Accept: "application/json", "X-CSRFToken": csrfToken(globalThis.document?.cookie ?? "")};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(url, {method, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body)});
    const answer = response.status === 204 ? null : await response.json().catch(() => null);
    return {ok: response.ok, status: response.status, answer};
  }

  async function refresh() {
    const response = await fetch(location.href, {headers: {Accept: "text/html"}, credentials: "same-origin"});
    if (!response.ok) return false;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const part of root.querySelectorAll("[data-refresh][id]")) {
      const fresh = doc.getElementById(part.id);
      if (fresh) part.replaceChildren(...fresh.childNodes);
    }
    root.dataset.refreshed = String(Number(root.dataset.refreshed ?? 0) + 1);
    return true;
  }

  root.addEventListener("submit", async (e) => {
    const form = e.target.closest("form.api-form");
    if (!form) return;
    e.preventDefault();
    const error = form.querySelector("[data-error]");
    if (error) error.textContent = "";
    let body;
    try {
      body = bodyOf(fieldsOf(form));
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      if (error) error.textContent = err.message;
      return;
    }
    const submit = form.querySelector("button[type=submit]");
    if (submit) submit.disabled = true;
    try {
      const result = await call(form.dataset.api, form.dataset.method ?? "POST", body);
      if (!result.ok) {
        if (error) error.textContent = errorText(result.answer, result.status);
        return;
      }
      say(form.dataset.done ?? "Saved");
      if (form.dataset.method === "POST") form.reset();
      form.closest("details")?.removeAttribute("open");
      await refresh();
    } finally {
      if (submit) submit.disabled = false;
    }
  });

  root.addEventListener("click", async (e) => {
    const button = e.target.closest("button[data-action]");
    if (!button) return;
    const {action, url, out, confirm: question, method, body} = button.dataset;
    if (question && !globalThis.confirm?.(question)) return;
    const output = out ? root.querySelector(`#${CSS.escape(out)}`) : null;
    button.disabled = true;
    if (output) output.textContent = action === "test" ? "sending…" : "…";
    try {
      const verb = method ?? (action === "delete" ? "DELETE" : "POST");
      const result = await call(url, verb, verb === "DELETE" ? undefined : JSON.parse(body ?? "{}"));
      const text = result.ok ? (action === "test" || action === "digest" ? resultText(result.answer) : "done")
        : errorText(result.answer, result.status);
      if (output) output.textContent = text;
      say(`${action}: ${text}`);
      if (result.ok) {
        await refresh();
        // the row was read again: its result stays shown
        const again = out ? root.querySelector(`#${CSS.escape(out)}`) : null;
        if (again) again.textContent = text;
      }
    } catch (error) {
      if (output) output.textContent = error.message;
    } finally {
      button.disabled = false;
    }
  });
  return {refresh, call};
}
