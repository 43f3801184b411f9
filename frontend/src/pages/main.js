// The plain pages (fabrics overview, cluster, new fabric, tenants and policy, events): one bundle, each page's
// module runs on the element that names it (data-page).
import {clusterPage} from "./cluster.js";
import {eventsPage} from "./events.js";
import {newFabricPage} from "./new-fabric.js";
import {overviewPage} from "./overview.js";
import {policyPage} from "./policy.js";

const PAGES = {cluster: clusterPage, events: eventsPage, "new-fabric": newFabricPage, overview: overviewPage, policy: policyPage};

for (const root of document.querySelectorAll("[data-page]")) {
  const page = PAGES[root.dataset.page];
  if (page) page(root);
}
