import { ConfirmButton } from "../components/confirm-button";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { signOut, useSession } from "../session";

export const mySessionsPage: PageEntry = { label: "My sessions", area: "own", component: MySessionsPage };

/** Where the signed-in member is signed in: this session marked, another one revoked, or every one ended. */
function MySessionsPage() {
  const session = useSession();
  const { client } = session;
  const sessions = usePagedList({}, (_filters, page) => client.get("/auth/sessions", { params: { query: page } }));
  return (
    <Page
      title="My sessions"
      actions={
        <ConfirmButton
          label="Sign out everywhere"
          title="Sign out everywhere"
          danger
          body={<p>Every session of yours ends, this one too: each browser has to sign in again.</p>}
          confirmLabel="Sign out everywhere"
          run={() => signOut(session, { everywhere: true })}
          onDone={() => history.replaceState(null, "", location.pathname)}
        />
      }
    >
      <Show state={sessions} empty={(page) => page.data.length === 0} emptyText="No open sessions.">
        {(page) => (
          <>
            <Table
              caption="My sessions"
              rows={page.data}
              rowKey={(one) => one.id}
              columns={[
                {
                  label: "Signed in",
                  render: (s) => (
                    <>
                      {format.time(s.created_at)} {s.current ? <Pill tone="good">this session</Pill> : null}
                    </>
                  ),
                },
                { label: "Last seen", render: (s) => format.relative(s.last_seen_at) },
                { label: "Ends at the latest", render: (s) => format.time(s.expires_at) },
                { label: "Address", render: (s) => s.ip ?? "—" },
                { label: "Browser", render: (s) => s.user_agent ?? "—" },
                {
                  label: "",
                  render: (s) =>
                    s.current ? null : (
                      <ConfirmButton
                        label="Revoke"
                        title="Revoke this session"
                        danger
                        body={<p>That browser is signed out at its next request.</p>}
                        confirmLabel="Revoke"
                        run={() => client.delete("/auth/sessions/{id}", { params: { path: { id: s.id } } })}
                        onDone={sessions.reload}
                      />
                    ),
                },
              ]}
            />
            <Pager paging={sessions.paging} noun="sessions" />
          </>
        )}
      </Show>
    </Page>
  );
}
