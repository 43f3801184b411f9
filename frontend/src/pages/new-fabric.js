// The new-fabric page: shows the chosen generator's parameters, previews the fabric as you type (debounced),
// uploads a file with a progress bar and shows an error at its line, creates with a progress bar, and copies
// the same request as a curl command. For a real fabric (telemetry) it shows the collector's fields for the
// chosen way of reaching the tools and runs a test sweep (POST /api/telemetry/trial-sweep/, nothing saved).
import {csrfToken, errorText} from "../api.js";
import {
  apiCall, collectParams, collectorBody, errorContext, previewFacts, trialCall, trialFacts, warningLines,
} from "./fabric-form.js";

const DEBOUNCE_MS = 350;
const LINES_READ = 4 * 1024 * 1024; // bytes of a file read to show the lines around an error

/** POST with upload progress (fetch has none): resolves {status, body}. */
function send(url, data, {onProgress, accept = "application/json"} = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("Accept", accept);
    xhr.setRequestHeader("X-CSRFToken", csrfToken(document.cookie));
    if (!(data instanceof FormData)) xhr.setRequestHeader("Content-Type", "application/json");
    if (onProgress) xhr.upload.addEventListener("progress", (e) => e.lengthComputable && onProgress(e.loaded / e.total));
    xhr.addEventListener("load", () => {
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      resolve({status: xhr.status, body});
    });
    xhr.addEventListener("error", () => reject(new Error("network error")));
    xhr.send(data instanceof FormData ? data : JSON.stringify(data));
  });
}

/**
 * Wire the page: `newFabricPage(document.querySelector("[data-page=new-fabric]"))`.
 * @param {Element} root
 * @returns {object} {state} for tests
 */
export function newFabricPage(root) {
  const schema = JSON.parse(document.getElementById("generator-schema").textContent);
  const background = JSON.parse(document.getElementById("fabric-background").textContent);
  const form = root.querySelector("form");
  const $ = (selector) => root.querySelector(selector);
  const field = (name) => form.elements.namedItem(name);
  const state = {seq: 0, previews: 0, last: null, uploadLine: null, trials: 0, trial: null};
  const status = $(".preview-state");
  const facts = $(".preview-facts");
  let timer = null;

  const source = () => form.querySelector("input[name=source]:checked")?.value ?? "generator";
  const generator = () => form.querySelector("input[name=generator]:checked")?.value ?? "fat_tree";
  const file = () => field("topology_file")?.files?.[0] ?? null;
  const engine = () => field("routing_engine").value;
  const fabricFields = () => ({name: field("name").value.trim(), slug: field("slug").value.trim(),
    description: field("description").value.trim(), routing_engine: engine(), tick_s: Number(field("tick_s").value) || 1,
    congestion_model: field("congestion_model")?.value ?? ""});

  const checked = (name, fallback) => form.querySelector(`input[name="${name}"]:checked`)?.value ?? fallback;
  const collectorSource = () => checked("collector-source", "commands");
  const trialBody = () => collectorBody((name) => field(`collector-${name}`)?.value ?? "", engine());

  function show() {
    const src = source();
    for (const section of root.querySelectorAll("[data-source]")) section.hidden = !section.dataset.source.split(" ").includes(src);
    for (const set of root.querySelectorAll("[data-generator]")) set.hidden = set.dataset.generator !== generator();
    for (const set of root.querySelectorAll("[data-collector]")) set.hidden = !set.dataset.collector.split(" ").includes(collectorSource());
    for (const set of root.querySelectorAll("[data-jobs]")) set.hidden = set.dataset.jobs !== checked("twin-job_source", "");
    $(".test-sweep").hidden = collectorSource() === "push";
  }

  function clearErrors() {
    for (const e of root.querySelectorAll(".live-error")) e.remove();
    for (const input of root.querySelectorAll("[aria-invalid=true][data-live-invalid]")) {
      input.removeAttribute("aria-invalid");
      input.removeAttribute("data-live-invalid");
    }
  }

  function fieldError(name, message) {
    const input = field(name);
    const box = input?.closest?.(".field");
    if (!box) return false;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("data-live-invalid", "");
    const p = document.createElement("p");
    p.className = "error live-error";
    p.id = `${input.id}_live_error`;
    p.textContent = message;
    box.append(p);
    input.setAttribute("aria-describedby", [input.getAttribute("aria-describedby"), p.id].filter(Boolean).join(" "));
    box.closest("details")?.setAttribute("open", "");
    return true;
  }

  function updateCall(topology) {
    const fields = fabricFields();
    const call = source() === "upload" ? apiCall(location.origin, fields, {file: file()?.name ?? "fabric.txt"}, background)
      : apiCall(location.origin, fields, {topology}, background);
    const code = $(".create-call code");
    code.textContent = call.command;
    code.dataset.body = call.body ? JSON.stringify(call.body) : "";
  }

  function showWarnings(lines) {
    const box = $(".preview-warnings");
    box.hidden = !lines.length;
    $(".preview-warnings-count").textContent = `${lines.length} line${lines.length === 1 ? "" : "s"} skipped or adjusted while reading`;
    $(".preview-warnings-list").replaceChildren(...lines.map((line) => Object.assign(document.createElement("li"), {textContent: line})));
  }

  function showPreview(answer) {
    const text = previewFacts(answer);
    for (const dd of facts.querySelectorAll("[data-fact]")) dd.textContent = text[dd.dataset.fact];
    facts.querySelector("[data-optional=read]").hidden = !text.read;
    showWarnings(warningLines(answer.warnings));
    $(".lid-meter").value = answer.lids;
    facts.hidden = false;
    status.textContent = `${answer.name}: ${text.hosts} hosts, ${text.switches} switches.`;
    state.last = answer;
    ++state.previews;
    root.dataset.previews = String(state.previews);
  }

  async function previewGenerated() {
    const g = generator();
    const valueOf = (name) => field(`${g}__${name}`)?.value ?? "";
    const {params, missing, invalid} = collectParams(schema[g], valueOf);
    clearErrors();
    for (const name of missing) fieldError(`${g}__${name}`, "required");
    for (const name of invalid) fieldError(`${g}__${name}`, "not a number of the right kind");
    updateCall({generator: g, ...params});
    if (missing.length || invalid.length) return void (status.textContent = "Fix the marked parameters for a preview.");
    const seq = ++state.seq;
    status.textContent = "Building the preview…";
    let answer;
    try {
      answer = await send(root.dataset.preview, {generator: g, params, routing_engine: engine()});
    } catch (error) {
      return void (status.textContent = `No preview: ${error.message}`);
    }
    if (seq !== state.seq) return; // a newer preview is on its way
    if (answer.status === 200 && answer.body.valid) return showPreview(answer.body);
    facts.hidden = true;
    showWarnings([]);
    const errors = answer.body?.errors ?? answer.body ?? {};
    for (const [name, messages] of Object.entries(errors.params ?? {})) fieldError(`${g}__${name}`, messages.join(" "));
    const general = errors.topology ?? errors.detail ?? (errors.params ? null : errorText(errors, answer.status));
    status.textContent = general ? `Not a valid design: ${[].concat(general).join(" ")}` : "Fix the marked parameters.";
  }

  async function showFileError(message, line) {
    const box = $(".upload-error");
    box.hidden = false;
    box.querySelector(".error").textContent = message;
    const pre = box.querySelector(".error-context");
    pre.replaceChildren();
    state.uploadLine = line;
    const f = file();
    if (!line || !f || /\.gz$/i.test(f.name)) return;
    const {first, lines} = errorContext(await f.slice(0, LINES_READ).text(), line);
    lines.forEach((text, i) => {
      const row = document.createElement(first + i === line ? "mark" : "span");
      row.textContent = `${String(first + i).padStart(6)}  ${text}\n`;
      pre.append(row);
    });
  }

  function progress(fraction) {
    const bar = $(".upload-progress");
    bar.hidden = fraction == null;
    if (fraction == null) return;
    $("#upload-progress").value = fraction;
    $(".upload-percent").textContent = `${Math.round(fraction * 100)}%`;
  }

  async function previewUpload() {
    const f = file();
    $(".upload-error").hidden = true;
    updateCall(null);
    if (!f) return void (status.textContent = "Choose a file for a preview.");
    const data = new FormData();
    data.append("topology_file", f);
    data.append("routing_engine", engine());
    const seq = ++state.seq;
    status.textContent = `Uploading ${f.name} for a preview…`;
    progress(0);
    let answer;
    try {
      answer = await send(root.dataset.preview, data, {onProgress: progress});
    } catch (error) {
      progress(null);
      return void (status.textContent = `No preview: ${error.message}`);
    }
    progress(null);
    if (seq !== state.seq) return;
    if (answer.status === 200 && answer.body.valid) return showPreview(answer.body);
    facts.hidden = true;
    showWarnings([]);
    const errors = answer.body?.errors ?? answer.body;
    const message = [].concat(errors?.topology_file ?? errorText(errors, answer.status)).join(" ");
    status.textContent = "The file has an error.";
    await showFileError(message, errors?.line ?? null);
  }

  function updateTrialCall() {
    $(".trial-call code").textContent = trialCall(new URL(root.dataset.trial, location.origin).href, trialBody());
  }

  function showTrial(report) {
    const text = trialFacts(report);
    for (const dd of root.querySelectorAll("[data-trial]")) dd.textContent = text[dd.dataset.trial];
    $(".trial-facts").hidden = false;
    const errors = $(".trial-errors");
    errors.hidden = !text.errors.length;
    errors.querySelector("ol").replaceChildren(...text.errors.map((t) => Object.assign(document.createElement("li"), {textContent: t})));
    const warned = $(".trial-warnings");
    warned.hidden = !text.warnings.length;
    $(".trial-warnings-count").textContent = `${text.warnings.length} line${text.warnings.length === 1 ? "" : "s"} skipped or adjusted while reading`;
    warned.querySelector("ol").replaceChildren(...text.warnings.map((t) => Object.assign(document.createElement("li"), {textContent: t})));
    $(".trial-state").textContent = text.summary;
    state.trial = report;
    root.dataset.trials = String(++state.trials);
  }

  async function testSweep() {
    clearErrors();
    const body = trialBody();
    const done = $(".trial-state");
    done.textContent = body.source === "commands" ? "Running iblinkinfo and perfquery…" : "Reading the drop directory…";
    $(".test-sweep").disabled = true;
    let answer;
    try {
      answer = await send(root.dataset.trial, body);
    } catch (error) {
      return void (done.textContent = `No test sweep: ${error.message}`);
    } finally {
      $(".test-sweep").disabled = false;
    }
    if (answer.status === 200) return showTrial(answer.body);
    const errors = answer.body?.errors;
    if (!errors) return void (done.textContent = `No test sweep: ${errorText(answer.body, answer.status)}`);
    const general = Object.entries(errors).filter(([name, messages]) => !fieldError(`collector-${name}`, messages.join(" ")))
      .map(([, messages]) => messages.join(" "));
    done.textContent = `Fix the marked fields for a test sweep.${general.length ? ` ${general.join(" ")}` : ""}`;
  }

  function previewWatched() {
    updateTrialCall();
    status.textContent = "";
  }

  const preview = () => (source() === "telemetry" ? previewWatched() : source() === "upload" ? previewUpload() : previewGenerated());
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(preview, DEBOUNCE_MS);
  };

  form.addEventListener("input", (event) => {
    if (event.target.name === "topology_file") return;
    if (event.target.name === "source" || event.target.name === "generator") show();
    if (/^(collector|twin)-/.test(event.target.name)) {
      show();
      return void updateTrialCall();
    }
    if (["name", "slug", "description", "tick_s", "congestion_model"].includes(event.target.name)) return void updateCall(state.last?.topology);
    later();
  });
  form.addEventListener("change", (event) => {
    if (event.target.name === "topology_file") preview();
    else if (event.target.name === "source" || event.target.name === "generator" || event.target.name === "routing_engine") {
      show();
      later();
    }
  });

  // An upload is created with a progress bar; a generated design is a plain form post.
  form.addEventListener("submit", async (event) => {
    if (source() !== "upload" || !file()) return;
    event.preventDefault();
    const created = $(".create-state");
    created.textContent = "Uploading…";
    progress(0);
    let answer;
    try {
      answer = await send(form.action, new FormData(form), {onProgress: progress});
    } catch (error) {
      progress(null);
      return void (created.textContent = `Not created: ${error.message}`);
    }
    progress(null);
    if (answer.status === 201) {
      created.textContent = "Created; opening its live view…";
      location.assign(answer.body.url);
      return;
    }
    clearErrors();
    created.textContent = "Not created: see the marked fields.";
    for (const [name, messages] of Object.entries(answer.body?.errors ?? {})) {
      if (name === "topology_file") await showFileError(messages.join(" "), answer.body.line);
      else if (!fieldError(name, messages.join(" "))) created.textContent = `Not created: ${messages.join(" ")}`;
    }
  });

  $(".test-sweep").addEventListener("click", testSweep);

  $(".copy-api").addEventListener("click", async () => {
    const text = $(".create-call code").textContent;
    const done = $(".copy-state");
    try {
      await navigator.clipboard.writeText(text);
      done.textContent = "Copied.";
    } catch {
      const range = document.createRange();
      range.selectNodeContents($(".create-call code"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      done.textContent = "Selected: press Ctrl+C to copy.";
    }
  });

  show();
  preview();
  return {state};
}
