import { useEffect } from "preact/hooks";
import { Shell } from "./components/shell";
import { apiKeysPage } from "./pages/api-keys";
import { auditPage } from "./pages/audit";
import { ispPage } from "./pages/isp";
import { ordersPage } from "./pages/orders";
import { overviewPage } from "./pages/overview";
import { reportsPage } from "./pages/reports";
import { requestsPage } from "./pages/requests";
import { sessionsPage } from "./pages/sessions";
import { SignIn } from "./pages/sign-in";
import { subscriptionsPage } from "./pages/subscriptions";
import { subuserPage } from "./pages/subuser";
import { subusersPage } from "./pages/subusers";
import { trafficPage } from "./pages/traffic";
import { webhooksPage } from "./pages/webhooks";
import { type PageEntry, type Route, useRoute } from "./router";
import { signOut, useSignedIn } from "./session";

/** A page at its address (`#/<page>`). */
interface AddressedPage extends PageEntry {
  page: string;
}

/** The menu, in order, by address; a key that cannot read a page's area does not see it. */
const MENU: AddressedPage[] = Object.entries({
  overview: overviewPage,
  traffic: trafficPage,
  subusers: subusersPage,
  requests: requestsPage,
  sessions: sessionsPage,
  orders: ordersPage,
  subscriptions: subscriptionsPage,
  isp: ispPage,
  "api-keys": apiKeysPage,
  webhooks: webhooksPage,
  reports: reportsPage,
  audit: auditPage,
}).map(([page, entry]) => ({ page, ...entry }));

/** A sub-user's own page, under the sub-users' address (`#/subusers/<id>`); not in the menu. */
const SUBUSER: AddressedPage = { page: "subusers", ...subuserPage };

export function App() {
  const session = useSignedIn();
  const route = useRoute();
  if (!session) return <SignIn />;
  const visible = MENU.filter((entry) => session.can(entry.area));
  const entry =
    route.page === SUBUSER.page && route.id ? SUBUSER : (visible.find((one) => one.page === route.page) ?? visible[0]);
  return (
    <Shell
      pages={visible}
      current={entry?.page ?? ""}
      onSignOut={() => {
        signOut();
        history.replaceState(null, "", location.pathname);
      }}
    >
      {entry ? <Routed entry={entry} route={route} /> : <p class="empty">This key can read no page of the console.</p>}
    </Shell>
  );
}

/**
 * The page, keyed by its address so state resets on navigation (a page's own view changes replace the address without
 * a `hashchange`, so only an address from outside, a link or a typed one, rebuilds it); focus moves to its title for
 * screen readers.
 */
function Routed(props: { entry: PageEntry; route: Route }) {
  const { entry, route } = props;
  const Component = entry.component;
  useEffect(() => {
    document.title = `${entry.label} · Console`;
    document.getElementById("page-title")?.focus({ preventScroll: true });
  }, [entry, route.id]);
  return <Component key={`${route.page}/${route.id ?? ""}?${route.query}`} route={route} />;
}
