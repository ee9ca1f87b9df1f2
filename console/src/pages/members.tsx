import type { Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { Page } from "../components/layout";
import { InviteButton, roleField } from "../components/member-roles";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const membersPage: PageEntry = { label: "Members", area: "members", liveOnly: true, component: MembersPage };

/** The account's people and their roles; an owner or admin invites, changes roles and removes. */
function MembersPage() {
  const { client, can, signer } = useSession();
  const members = usePagedList({}, (_filters, page) => client.get("/members", { params: { query: page } }));
  const writable = can("members", "write");
  const self = signer.kind === "member" ? signer.member.id : null;
  return (
    <Page title="Members" actions={writable ? <InviteButton onDone={() => undefined} /> : null}>
      <Show state={members} empty={(page) => page.data.length === 0} emptyText="No members yet.">
        {(page) => (
          <>
            <Table
              caption="Members"
              rows={page.data}
              rowKey={(member) => member.id}
              columns={[
                {
                  label: "Name",
                  render: (m) => (
                    <>
                      {m.name} {m.id === self ? <Pill tone="info">you</Pill> : null}
                    </>
                  ),
                },
                { label: "Email", render: (m) => m.email },
                { label: "Role", render: (m) => m.role },
                { label: "MFA", render: (m) => (m.mfa_enabled ? "on" : "off") },
                { label: "Last sign-in", render: (m) => format.time(m.last_sign_in_at) },
                {
                  label: "",
                  render: (m) =>
                    writable && m.id !== self ? <MemberActions member={m} onDone={members.reload} /> : null,
                },
              ]}
            />
            <Pager paging={members.paging} noun="members" />
          </>
        )}
      </Show>
    </Page>
  );
}

function MemberActions(props: { member: Schemas["Member"]; onDone: () => void }) {
  const session = useSession();
  const { client } = session;
  const { member, onDone } = props;
  const path = { id: member.id };
  return (
    <div class="row-actions">
      <ConfirmButton
        label="Change role"
        title={`Change ${member.name}'s role`}
        body={<p>The new role is in force from their next request.</p>}
        confirmLabel="Change"
        fields={{ role: roleField(session, member.role) }}
        run={(body) => client.patch("/members/{id}", { params: { path }, body })}
        onDone={onDone}
      />
      <ConfirmButton
        label="Remove"
        title={`Remove ${member.name}`}
        danger
        body={<p>{member.email} loses access at once: every session of theirs ends.</p>}
        confirmLabel="Remove"
        run={() => client.delete("/members/{id}", { params: { path } })}
        onDone={onDone}
      />
    </div>
  );
}
