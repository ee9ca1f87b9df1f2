import { useEffect } from "preact/hooks";
import { Shell } from "./components/shell";
import { AcceptInvitation } from "./pages/accept-invitation";
import { apiKeysPage } from "./pages/api-keys";
import { auditPage } from "./pages/audit";
import { connectedAppsPage } from "./pages/connected-apps";
import { invitationsPage } from "./pages/invitations";
import { ispPage } from "./pages/isp";
import { membersPage } from "./pages/members";
import { mySessionsPage } from "./pages/my-sessions";
import { ordersPage } from "./pages/orders";
import { overviewPage } from "./pages/overview";
import { reportsPage } from "./pages/reports";
import { requestsPage } from "./pages/requests";
import { ResetPassword } from "./pages/reset-password";
import { securityPage } from "./pages/security";
import { sessionsPage } from "./pages/sessions";
import { SignIn } from "./pages/sign-in";
import { subscriptionsPage } from "./pages/subscriptions";
import { subuserPage } from "./pages/subuser";
import { subusersPage } from "./pages/subusers";
import { trafficPage } from "./pages/traffic";
import { webhooksPage } from "./pages/webhooks";
import { type PageEntry, type Route, useRoute } from "./router";
import { type Session, useSignInState } from "./session";

/** A page at its address (`#/<page>`). */
interface AddressedPage extends PageEntry {
  page: string;
}

/** The menu, in order, by address; a key or member that cannot read a page's area does not see it. */
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
  members: membersPage,
  invitations: invitationsPage,
  "my-sessions": mySessionsPage,
  "connected-apps": connectedAppsPage,
  security: securityPage,
}).map(([page, entry]) => ({ page, ...entry }));

/** A sub-user's own page, under the sub-users' address (`#/subusers/<id>`); not in the menu. */
const SUBUSER: AddressedPage = { page: "subusers", ...subuserPage };

/** The pages of a mailed link, shown signed in or not (`#/accept-invitation?token=…`). */
const LINKED: Record<string, PageEntry["component"]> = {
  "accept-invitation": AcceptInvitation,
  "reset-password": ResetPassword,
};

export function App() {
  const signIn = useSignInState();
  const route = useRoute();
  const Linked = LINKED[route.page];
  if (Linked) return <Linked route={route} />;
  if (signIn.status === "checking") {
    return (
      <main class="sign-in" id="main">
        <p role="status">Checking your sign-in…</p>
      </main>
    );
  }
  if (signIn.status === "signed-out") return <SignIn notice={signIn.notice} />;
  const visible = MENU.filter((entry) => visibleTo(signIn.session, entry));
  const entry =
    route.page === SUBUSER.page && route.id ? SUBUSER : (visible.find((one) => one.page === route.page) ?? visible[0]);
  return (
    <Shell pages={visible} current={entry?.page ?? ""}>
      {entry ? <Routed entry={entry} route={route} /> : <p class="empty">You can read no page of the console.</p>}
    </Shell>
  );
}

function visibleTo(session: Session, entry: PageEntry): boolean {
  if (entry.liveOnly && session.sandbox) return false;
  return entry.area === "own" ? session.signer.kind === "member" : session.can(entry.area);
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
