// The tenants and policy page: the member search answers as you type (the list is swapped in place and the
// address follows), and choosing a partition with the pointer shows it at once (from the keyboard: arrows, then
// Enter). Without JavaScript both are plain GET forms.

/**
 * Wire the page: `policyPage(document.querySelector("[data-page=policy]"))`.
 * @param {Element} root
 * @param {object} [options] {delay: ms after the last keystroke, fetch}
 * @returns {{search: function(string): Promise<boolean>}}
 */
export function policyPage(root, {delay = 300, fetch = (...args) => globalThis.fetch(...args)} = {}) {
  const switcher = root.querySelector(".partition-switch select");
  if (switcher) {
    // A choice made with the pointer shows the partition at once; arrow keys only move through the list (a page
    // that changed on every arrow press would lose the keyboard's place), and Enter shows the one chosen.
    let keyed = false;
    switcher.addEventListener("pointerdown", () => (keyed = false));
    switcher.addEventListener("keydown", (e) => {
      keyed = e.key !== "Enter";
      if (e.key === "Enter") {
        e.preventDefault();
        switcher.form.requestSubmit();
      }
    });
    switcher.addEventListener("change", () => keyed || switcher.form.requestSubmit());
  }
  const form = root.querySelector(".member-search");
  let timer = null;
  let seq = 0;

  async function search() {
    const params = new URLSearchParams(new FormData(form));
    const url = `${location.pathname}?${params}`;
    const mine = ++seq;
    const list = root.querySelector("#members-list");
    list.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(url, {headers: {Accept: "text/html"}, credentials: "same-origin"});
      if (!response.ok || mine !== seq) return false;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("#members-list");
      if (!fresh) return false;
      for (const part of [".member-table", ".pager", "nav.pager"]) {
        const now = list.querySelector(part);
        const next = fresh.querySelector(part);
        if (now && next) now.replaceWith(next);
        else if (now) now.remove();
        else if (next) list.append(next);
      }
      history.replaceState(null, "", `${url}#members`);
      root.dataset.searches = String(Number(root.dataset.searches ?? 0) + 1);
      return true;
    } catch (error) {
      console.warn(`ibweb: member search failed: ${error.message}`);
      return false;
    } finally {
      list.setAttribute("aria-busy", "false");
    }
  }

  form?.querySelector("input[name=q]")?.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, delay);
  });
  return {search};
}
