import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { useAction } from "../hooks/use-action";
import { href } from "../router";
import { type Session, signOut, useSession } from "../session";
import { ErrorNote } from "./error-note";

/** The signed-in frame: the sandbox banner, the top bar with who signed in and sign-out, the menu, then the page. */
export function Shell(props: {
  /** The menu: each page's address and name. */
  pages: { page: string; label: string }[];
  current: string;
  children: ComponentChildren;
}) {
  const session = useSession();
  const { sandbox } = session;
  const [menuOpen, setMenuOpen] = useState(false);
  const leaving = useAction();
  const onSignOut = () =>
    void leaving.run(async () => {
      await signOut(session);
      history.replaceState(null, "", location.pathname);
    });
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
          <SignedInAs session={session} />
        </span>
        <button type="button" class="ghost" onClick={onSignOut} disabled={leaving.busy} aria-busy={leaving.busy}>
          Sign out
        </button>
      </header>
      {leaving.error ? <ErrorNote error={leaving.error} /> : null}
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

/** A member by name and role; a key by its hint and name (and the account's email, when it may read it). */
function SignedInAs({ session }: { session: Session }) {
  const { signer, sandbox, account } = session;
  if (signer.kind === "member") {
    return (
      <>
        {signer.member.name} · {signer.member.role}
      </>
    );
  }
  return (
    <>
      {sandbox ? "Sandbox" : (account?.email ?? "API key")} · <code>{signer.key.token_hint}…</code>
      {signer.key.name ? ` (${signer.key.name})` : ""}
    </>
  );
}
