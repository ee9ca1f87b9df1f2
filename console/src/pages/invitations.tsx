import { ConfirmButton } from "../components/confirm-button";
import { Page } from "../components/layout";
import { InviteButton } from "../components/member-roles";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const invitationsPage: PageEntry = {
  label: "Invitations",
  area: "members",
  liveOnly: true,
  component: InvitationsPage,
};

const TONES = { pending: "info", accepted: "good", revoked: "bad", expired: "warn" } as const;

/** The invitations sent, newest first, with their status; a pending one can be withdrawn. */
function InvitationsPage() {
  const { client, can } = useSession();
  const invitations = usePagedList({}, (_filters, page) => client.get("/invitations", { params: { query: page } }));
  const writable = can("members", "write");
  return (
    <Page title="Invitations" actions={writable ? <InviteButton onDone={invitations.reload} /> : null}>
      <Show state={invitations} empty={(page) => page.data.length === 0} emptyText="No invitations sent.">
        {(page) => (
          <>
            <Table
              caption="Invitations"
              rows={page.data}
              rowKey={(invitation) => invitation.id}
              columns={[
                { label: "Email", render: (i) => i.email },
                { label: "Role", render: (i) => i.role },
                { label: "Status", render: (i) => <Pill tone={TONES[i.status]}>{i.status}</Pill> },
                { label: "Expires", render: (i) => format.time(i.expires_at) },
                { label: "Sent", render: (i) => format.time(i.created_at) },
                {
                  label: "",
                  render: (i) =>
                    writable && i.status === "pending" ? (
                      <ConfirmButton
                        label="Withdraw"
                        title={`Withdraw the invitation of ${i.email}`}
                        danger
                        body={<p>Its link stops working at once.</p>}
                        confirmLabel="Withdraw"
                        run={() => client.delete("/invitations/{id}", { params: { path: { id: i.id } } })}
                        onDone={invitations.reload}
                      />
                    ) : null,
                },
              ]}
            />
            <Pager paging={invitations.paging} noun="invitations" />
          </>
        )}
      </Show>
    </Page>
  );
}
