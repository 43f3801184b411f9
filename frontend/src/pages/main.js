// The plain pages (fabrics overview, cluster, new fabric, tenants and policy, events): one bundle, each page's
// module runs on the element that names it (data-page).
import {clusterPage} from "./cluster.js";
import {eventsPage} from "./events.js";
import {healthSparklines} from "../history/health-sparklines.js";
import {historyPage} from "../history/history-page.js";
import {newFabricPage} from "./new-fabric.js";
import {notificationsPage} from "./notifications.js";
import {overviewPage} from "./overview.js";
import {policyPage} from "./policy.js";
import {validationPage} from "./validation.js";

const PAGES = {cluster: clusterPage, events: eventsPage, health: healthSparklines, history: historyPage, "new-fabric": newFabricPage, notifications: notificationsPage,
  overview: overviewPage, policy: policyPage,
  validation: validationPage};

for (const root of document.querySelectorAll("[data-page]")) {
  const page = PAGES[root.dataset.page];
  if (page) page(root);
}
