import type { Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { type Column, Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const connectedAppsPage: PageEntry = {
  label: "Connected applications",
  area: "own",
  component: ConnectedAppsPage,
};

type Grant = Schemas["OAuthGrant"];

/**
 * The AI assistants holding OAuth access on a member's behalf (MCP server): the member's own, or the account's for an
 * owner or an admin (whose role writes members, as the API decides), each revocable at once.
 */
function ConnectedAppsPage() {
  const { client, can, signer } = useSession();
  const grants = usePagedList({}, (_filters, page) => client.get("/oauth/grants", { params: { query: page } }));
  const accountWide = can("members", "write");
  const self = signer.kind === "member" ? signer.member.id : null;
  const columns: Column<Grant>[] = [
    {
      label: "Application",
      render: (g) => g.client_name || g.client_id,
    },
    { label: "Redirects to", render: (g) => <code>{g.redirect_host}</code> },
    { label: "Scopes", render: (g) => g.scopes.join(", ") || "—" },
    { label: "Granted", render: (g) => format.time(g.created_at) },
    { label: "Last used", render: (g) => (g.last_used_at ? format.relative(g.last_used_at) : "never") },
  ];
  if (accountWide) {
    columns.push({
      label: "Member",
      render: (g) => (
        <>
          {g.member.email} {g.member.id === self ? <Pill tone="info">you</Pill> : null}
        </>
      ),
    });
  }
  columns.push({
    label: "",
    render: (g) => (
      <ConfirmButton
        label="Revoke"
        title={`Revoke ${g.client_name || g.client_id}`}
        danger
        body={
          <p>
            Its access stops at once: the next call it makes to the MCP server is refused, and it would have to be
            connected again.
          </p>
        }
        confirmLabel="Revoke"
        run={() => client.delete("/oauth/grants/{id}", { params: { path: { id: g.id } } })}
        onDone={grants.reload}
      />
    ),
  });
  return (
    <Page title="Connected applications">
      <p class="muted">
        {accountWide
          ? "AI assistants the account's members allowed to act for them through the MCP server."
          : "AI assistants you allowed to act for you through the MCP server."}{" "}
        An application names itself (not verified): its redirect host says where its access was sent.
      </p>
      <Show
        state={grants}
        empty={(page) => page.data.length === 0}
        emptyText="No connected applications: none has been allowed."
      >
        {(page) => (
          <>
            <Table caption="Connected applications" rows={page.data} rowKey={(one) => one.id} columns={columns} />
            <Pager paging={grants.paging} noun="applications" />
          </>
        )}
      </Show>
    </Page>
  );
}
