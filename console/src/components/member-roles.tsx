import type { Schemas } from "../api";
import { isNonEmpty, type NonEmpty } from "../lib/non-empty";
import { type Session, useSession } from "../session";
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

const RANK: Record<Role, number> = { viewer: 0, developer: 1, billing: 2, admin: 3, owner: 4 };

/**
 * The roles the signed-in member or key may give, as the API decides: an owner (or a full key) every one; below
 * it, roles ranked under the caller's own (a scoped key ranks as an admin), billing only to who writes money. So
 * an admin gives developer and viewer.
 */
function grantableRoles(session: Session): NonEmpty<{ value: Role; label: string }> {
  const { signer, can } = session;
  const full =
    signer.kind === "member"
      ? signer.member.role === "owner"
      : signer.key.scopes === null && signer.key.products === null;
  if (full) return ROLES;
  const rank = signer.kind === "member" ? RANK[signer.member.role] : RANK.admin;
  const roles = ROLES.filter(
    (role) => RANK[role.value] < rank && (role.value !== "billing" || can("billing", "write")),
  );
  return isNonEmpty(roles) ? roles : [ROLES[0]];
}

/** The role field of an invitation or a role change: the roles the caller may give. */
export function roleField(session: Session, value?: Role) {
  return field.select("Role", grantableRoles(session), {
    value,
    hint: "Only the roles you may give: within your own, and below it unless you are an owner.",
  });
}

/** "Invite a person": mails a link (one use, 24 hours) to join the account with a role. */
export function InviteButton(props: { onDone: () => void }) {
  const session = useSession();
  const { client } = session;
  return (
    <ConfirmButton
      label="Invite a person"
      title="Invite a person"
      body={<p>We mail them a link to join this account: it works once, for 24 hours.</p>}
      confirmLabel="Send the invitation"
      fields={{
        email: field.text("Email", { type: "email", required: true }),
        role: roleField(session),
      }}
      run={(body) => client.post("/invitations", { body })}
      onDone={props.onDone}
    />
  );
}
