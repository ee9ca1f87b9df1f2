import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { href } from "../router";
import { useSession } from "../session";

/** The signed-in frame: the sandbox banner, the top bar with the key and sign-out, the menu, then the page. */
export function Shell(props: {
  /** The menu: each page's address and name. */
  pages: { page: string; label: string }[];
  current: string;
  onSignOut: () => void;
  children: ComponentChildren;
}) {
  const { key, sandbox, account } = useSession();
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
