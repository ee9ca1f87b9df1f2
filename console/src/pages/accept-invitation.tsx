import { text } from "../components/fields";
import { MailedLinkPage, newPassword } from "../components/mailed-link";
import type { Route } from "../router";
import { publicClient } from "../session";

/** `#/accept-invitation?token=…`: the invited person chooses a name and a password, then signs in. */
export function AcceptInvitation({ route }: { route: Route }) {
  return (
    <MailedLinkPage
      route={route}
      title="Accept the invitation"
      intro="Choose the name your team sees and a password; then sign in with the invited address."
      fields={{ name: text("Your name", { required: true, autoComplete: "name" }), password: newPassword() }}
      submitLabel="Join the account"
      submit={(values, token) => publicClient.post("/invitations/accept", { body: { ...values, token } })}
      done="You are a member now: sign in with the invited address and your password."
    />
  );
}
