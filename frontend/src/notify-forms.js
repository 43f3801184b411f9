// The notifications page's forms as API bodies: each field says how it is read (data-as), so one function turns
// every form of the page (channels, rules, silences) into the JSON the notifications API takes.

/** A field that cannot be read (its name and why), shown next to the form. */
export class FieldError extends Error {
  constructor(field, message) {
    super(`${field}: ${message}`);
    this.name = "FieldError";
    this.field = field;
  }
}

/**
 * The body of a form from its fields: [{name, as, value, checked, optional}] in document order.
 * `as`: "json" (an object; empty: left out when optional, else {}), "list" (comma-separated strings), "int",
 * "bool" (checkbox), "ints" (checkboxes of one name: the checked values), "nullable" (empty: null), "start"
 * (datetime-local, empty: now) and "hours" (with a start: ends_at that many hours later); anything else as text.
 * @param {{name: string, as?: string, value: string, checked?: boolean, optional?: boolean}[]} fields
 * @param {Date} [now]
 * @returns {object}
 */
export function bodyOf(fields, now = new Date()) {
  const body = {};
  let start = null;
  let hours = null;
  for (const {name, as = "", value = "", checked = false, optional = false} of fields) {
    const text = String(value).trim();
    if (as === "json") {
      if (!text) {
        if (!optional) body[name] = {};
        continue;
      }
      let parsed;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new FieldError(name, `not JSON (${error.message})`);
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new FieldError(name, "a JSON object {…}");
      body[name] = parsed;
    } else if (as === "list") {
      body[name] = text ? text.split(",").map((s) => s.trim()).filter(Boolean) : [];
    } else if (as === "int") {
      if (!/^\d+$/.test(text)) throw new FieldError(name, "a whole number");
      body[name] = Number(text);
    } else if (as === "bool") {
      body[name] = Boolean(checked);
    } else if (as === "ints") {
      body[name] ??= [];
      if (checked) body[name].push(Number(text));
    } else if (as === "nullable") {
      body[name] = text || null;
    } else if (as === "start") {
      const when = text ? new Date(text) : now;
      if (Number.isNaN(when.getTime())) throw new FieldError(name, "a date and time");
      start = when;
    } else if (as === "hours") {
      hours = Number(text);
      if (!(hours > 0)) throw new FieldError(name, "a number of hours above 0");
    } else if (!(optional && !text)) {
      body[name] = text;
    }
  }
  if (start || hours !== null) {
    const from = start ?? now;
    body.starts_at = from.toISOString();
    body.ends_at = new Date(from.getTime() + (hours ?? 1) * 3600 * 1000).toISOString();
  }
  return body;
}

/**
 * The fields of a form element for bodyOf.
 * @param {HTMLFormElement} form
 * @returns {object[]}
 */
export function fieldsOf(form) {
  return [...form.elements].filter((el) => el.name && !el.disabled && el.tagName !== "BUTTON" && el.tagName !== "FIELDSET")
    .map((el) => ({name: el.name, as: el.dataset.as ?? "", value: el.value, checked: el.checked,
      optional: "optional" in el.dataset}));
}

/**
 * One line saying how a test or a digest went, from the API's answer (a delivery or a list of them).
 * @param {object|object[]} answer
 * @returns {string}
 */
export function resultText(answer) {
  const list = Array.isArray(answer) ? answer : [answer];
  if (!list.length) return "nothing to send (no channel of the rule takes a digest)";
  return list.map((d) => `${d.state}${d.detail ? `: ${d.detail}` : ""}`).join("; ");
}
