import type { Schemas } from "../api";
import type { NonEmpty } from "../lib/non-empty";
import { useSession } from "../session";
import { ConfirmButton } from "./confirm-button";
import * as field from "./fields";

type Role = Schemas["MemberRole"];

const ROLES: NonEmpty<{ value: Role; label: string }> = [
  { value: "viewer", label: "Viewer: reads everything, changes nothing" },
  { value: "developer", label: "Developer: sub-users, traffic, their own API keys" },
  { value: "billing", label: "Billing: orders, balance, budget, invoices" },
  { value: "admin", label: "Admin: everything but money and owners" },
  { value: "owner", label: "Owner: everything" },
];

/** The role field of an invitation or a role change. */
export function roleField(value?: Role) {
  return field.select("Role", ROLES, {
    value,
    hint: "You can give only a role within your own: the API refuses any other.",
  });
}

/** "Invite a person": mails a link (one use, 24 hours) to join the account with a role. */
export function InviteButton(props: { onDone: () => void }) {
  const { client } = useSession();
  return (
    <ConfirmButton
      label="Invite a person"
      title="Invite a person"
      body={<p>We mail them a link to join this account: it works once, for 24 hours.</p>}
      confirmLabel="Send the invitation"
      fields={{
        email: field.text("Email", { type: "email", required: true }),
        role: roleField(),
      }}
      run={(body) => client.post("/invitations", { body })}
      onDone={props.onDone}
    />
  );
}
