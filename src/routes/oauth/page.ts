/**
 * The consent page's HTML: server-rendered, no script, no inline style (its CSP allows neither), labelled controls.
 * Everything that came from a client (its name, the redirect host, the scopes) is escaped.
 */

export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export interface ConsentView {
  clientName: string;
  redirectHost: string;
  redirectIsLoopback: boolean;
  email: string;
  role: string;
  /** The scopes the member's role holds (offered), and those ticked at first (the client's request within them). */
  offered: string[];
  checked: ReadonlySet<string>;
  handle: string;
  csrfToken: string;
  action: string;
  error?: string;
}

export function consentPage(view: ConsentView): string {
  const name = escapeHtml(view.clientName);
  const scopes = view.offered
    .map((scope) => {
      const id = `scope-${scope.replace(":", "-")}`;
      const checked = view.checked.has(scope) ? " checked" : "";
      return `<li><input type="checkbox" id="${id}" name="scope" value="${escapeHtml(scope)}"${checked}> <label for="${id}">${escapeHtml(scopeLabel(scope))}</label></li>`;
    })
    .join("\n");
  const loopback = view.redirectIsLoopback
    ? "<p><strong>This sends access to an app on your computer.</strong> Continue only if you just started connecting it.</p>"
    : "";
  const body = `<h1>Allow ${name} to use your account?</h1>
${view.error ? `<p role="alert">${escapeHtml(view.error)}</p>` : ""}
<p>Signed in as <strong>${escapeHtml(view.email)}</strong> (${escapeHtml(view.role)}). ${name} registered itself: its name is not verified.</p>
<p>Access will be sent to <strong>${escapeHtml(view.redirectHost)}</strong>.</p>
${loopback}
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="handle" value="${escapeHtml(view.handle)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">
<fieldset>
<legend>What ${name} may do (never more than your role allows; you can revoke it any time under connected applications)</legend>
<ul>
${scopes}
</ul>
</fieldset>
<p><button type="submit" name="decision" value="approve">Allow</button> <button type="submit" name="decision" value="deny">Deny</button></p>
</form>`;
  return page(`Authorize ${view.clientName}`, body);
}

export interface SignInView {
  action: string;
  error?: string;
  email?: string;
  askMfa: boolean;
  askAccount: boolean;
}

export function signInPage(view: SignInView): string {
  const body = `<h1>Sign in to connect an application</h1>
${view.error ? `<p role="alert">${escapeHtml(view.error)}</p>` : ""}
<form method="post" action="${escapeHtml(view.action)}">
<p><label for="email">Email</label><br><input type="email" id="email" name="email" autocomplete="username" required value="${escapeHtml(view.email ?? "")}"></p>
<p><label for="password">Password</label><br><input type="password" id="password" name="password" autocomplete="current-password" required></p>
${view.askMfa ? '<p><label for="mfa_code">Authentication code</label><br><input type="text" id="mfa_code" name="mfa_code" autocomplete="one-time-code" inputmode="numeric"></p>' : ""}
${view.askAccount ? '<p><label for="account">Account id</label><br><input type="text" id="account" name="account"></p>' : ""}
<p><button type="submit">Sign in</button></p>
</form>`;
  return page("Sign in", body);
}

export function problemPage(message: string): string {
  return page(
    "Authorization failed",
    `<h1>This authorization cannot go on</h1>\n<p role="alert">${escapeHtml(message)}</p>`,
  );
}

function scopeLabel(scope: string): string {
  const [area, access] = scope.split(":");
  const what = (area ?? "").replace("_", " ");
  return access === "write" ? `Read and change ${what} (${scope})` : `Read ${what} (${scope})`;
}
