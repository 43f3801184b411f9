// A page that follows its API: fetch `root.dataset.api` every `every` ms while the tab is visible and hand the
// JSON to `apply`; one request at a time. `root.dataset.updates` counts the answers applied, `drawMs` the last
// apply's time (what the browser tests and benches read).

/**
 * @param {Element} root the page's element, with `data-api`
 * @param {function(object): void} apply draws one answer
 * @param {object} options {every: ms, fetch, what: the page's name in warnings}
 * @returns {{refresh: function(): Promise<boolean>, stop: function()}}
 */
export function pollPage(root, apply, {every = 1000, fetch = (...args) => globalThis.fetch(...args), what = "page"} = {}) {
  let busy = false;

  async function refresh() {
    if (busy) return false;
    busy = true;
    try {
      const response = await fetch(root.dataset.api, {headers: {Accept: "application/json"}, credentials: "same-origin"});
      if (!response.ok) return false;
      const data = await response.json();
      const started = performance.now();
      apply(data);
      root.dataset.drawMs = (performance.now() - started).toFixed(1);
      root.dataset.updates = String(Number(root.dataset.updates ?? 0) + 1);
      return true;
    } catch (error) {
      console.warn(`ibweb: ${what} not refreshed: ${error.message}`);
      return false;
    } finally {
      busy = false;
    }
  }

  const timer = setInterval(() => document.visibilityState === "visible" && refresh(), every);
  refresh();
  return {refresh, stop: () => clearInterval(timer)};
}
