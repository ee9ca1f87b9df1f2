import type { ComponentType } from "preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./styles.css";
import { ApiKeysPage } from "./pages/api-keys";
import { AuditPage } from "./pages/audit";
import { IspPage } from "./pages/isp";
import { OrdersPage } from "./pages/orders";
import { OverviewPage } from "./pages/overview";
import { ReportsPage } from "./pages/reports";
import { RequestsPage } from "./pages/requests";
import { SessionsPage } from "./pages/sessions";
import { SignIn } from "./pages/sign-in";
import { SubscriptionsPage } from "./pages/subscriptions";
import { SubuserPage } from "./pages/subuser";
import { SubusersPage } from "./pages/subusers";
import { TrafficPage } from "./pages/traffic";
import { WebhooksPage } from "./pages/webhooks";
import { href, type Route, useRoute } from "./router";
import { type Area, can, type Session, session, signedIn, signOut } from "./session";

interface PageEntry {
  page: string;
  label: string;
  area: Area;
  component: ComponentType<{ route: Route }>;
}

/** Every page, the area of the key scopes it reads (a key that cannot read it does not see it). */
const PAGES: PageEntry[] = [
  { page: "overview", label: "Overview", area: "billing", component: OverviewPage },
  { page: "traffic", label: "Traffic", area: "traffic", component: TrafficPage },
  { page: "subusers", label: "Sub-users", area: "subusers", component: SubusersPage },
  { page: "requests", label: "Request log", area: "traffic", component: RequestsPage },
  { page: "sessions", label: "Sessions", area: "traffic", component: SessionsPage },
  { page: "orders", label: "Orders", area: "billing", component: OrdersPage },
  { page: "subscriptions", label: "Subscriptions", area: "billing", component: SubscriptionsPage },
  { page: "isp", label: "ISP batches", area: "isp", component: IspPage },
  { page: "api-keys", label: "API keys", area: "api_keys", component: ApiKeysPage },
  { page: "webhooks", label: "Webhooks", area: "webhooks", component: WebhooksPage },
  { page: "reports", label: "Reports", area: "reports", component: ReportsPage },
  { page: "audit", label: "Audit log", area: "account", component: AuditPage },
];

function App() {
  const [, setSignedIn] = useState<Session | null>(null);
  const route = useRoute();
  if (!signedIn()) return <SignIn onSignedIn={setSignedIn} />;
  const visible = PAGES.filter((entry) => can(entry.area));
  const entry =
    route.page === "subusers" && route.id
      ? { page: "subusers", label: "Sub-user", area: "subusers" as Area, component: SubuserPage }
      : (visible.find((candidate) => candidate.page === route.page) ?? visible[0]);
  return (
    <Shell
      pages={visible}
      current={entry?.page ?? ""}
      onSignOut={() => {
        signOut();
        setSignedIn(null);
        history.replaceState(null, "", location.pathname);
      }}
    >
      {entry ? <Routed entry={entry} route={route} /> : <p class="empty">This key can read no page of the console.</p>}
    </Shell>
  );
}

/** The page, keyed by its address so state resets on navigation; focus moves to its title for screen readers. */
function Routed(props: { entry: PageEntry; route: Route }) {
  const { entry, route } = props;
  const Component = entry.component;
  useEffect(() => {
    document.title = `${entry.label} · Console`;
    document.getElementById("page-title")?.focus({ preventScroll: true });
  }, [entry.page, route.id]);
  return <Component key={`${route.page}/${route.id ?? ""}`} route={route} />;
}

function Shell(props: {
  pages: PageEntry[];
  current: string;
  onSignOut: () => void;
  children: preact.ComponentChildren;
}) {
  const { key, sandbox, account } = session();
  const [menuOpen, setMenuOpen] = useState(false);
  return (
    <div class={`shell ${sandbox ? "sandbox" : ""}`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      {sandbox ? (
        <div class="sandbox-banner" role="note">
          <strong>Sandbox</strong> — a <code>test_</code> key: simulated money and traffic on the account's sandbox
          twin. Nothing here touches live data.
        </div>
      ) : null}
      <header class="topbar">
        <button
          type="button"
          class="ghost menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <span class="brand">Proxy Account</span>
        <span class="who">
          {sandbox ? "Sandbox" : (account?.email ?? "API key")} · <code>{key.token_hint}…</code>
          {key.name ? ` (${key.name})` : ""}
        </span>
        <button type="button" class="ghost" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <div class="body">
        <nav id="nav" aria-label="Console" class={menuOpen ? "open" : ""}>
          <ul>
            {props.pages.map((entry) => (
              <li key={entry.page}>
                <a
                  href={href(entry.page)}
                  aria-current={entry.page === props.current ? "page" : undefined}
                  onClick={() => setMenuOpen(false)}
                >
                  {entry.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">{props.children}</main>
      </div>
    </div>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
