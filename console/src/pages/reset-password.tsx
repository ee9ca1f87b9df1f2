import { MailedLinkPage, newPassword } from "../components/mailed-link";
import type { Route } from "../router";
import { publicClient } from "../session";

/** `#/reset-password?token=…`: a new password from a mailed reset link; every session of the member ends. */
export function ResetPassword({ route }: { route: Route }) {
  return (
    <MailedLinkPage
      route={route}
      title="Choose a new password"
      intro="Your other sessions end when the password changes."
      fields={{ password: newPassword() }}
      submitLabel="Set the password"
      submit={(values, token) => publicClient.post("/auth/password-reset/complete", { body: { ...values, token } })}
      done="Your password is changed."
    />
  );
}
