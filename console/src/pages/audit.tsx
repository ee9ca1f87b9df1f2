import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const auditPage: PageEntry = { label: "Audit log", area: "account", component: AuditPage };

function AuditPage() {
  const { client } = useSession();
  const audit = usePagedList({ resource: "" }, ({ resource }, page) =>
    client.get("/audit-events", {
      params: { query: { ...page, ...(resource.trim() ? { resource: resource.trim() } : {}) } },
    }),
  );
  return (
    <Page title="Audit log">
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <label>
          Resource (type or id)
          <input
            type="search"
            value={audit.filters.resource}
            placeholder="subuser, sub_…"
            onChange={(event) => audit.filter({ resource: event.currentTarget.value })}
          />
        </label>
      </form>
      <Show state={audit} empty={(page) => page.data.length === 0} emptyText="No audit entries.">
        {(page) => (
          <>
            <Table
              caption="Audit entries"
              rows={page.data}
              rowKey={(entry) => entry.id}
              columns={[
                { label: "When", render: (e) => format.time(e.created_at) },
                { label: "Action", render: (e) => <code>{e.action}</code> },
                { label: "Resource", render: (e) => <code>{e.resource_id}</code> },
                { label: "By", render: (e) => <code>{e.actor_key}</code> },
                { label: "From", render: (e) => e.source_ip ?? "—" },
                { label: "Changes", render: (e) => (e.changes ? Object.keys(e.changes).join(", ") : "—") },
              ]}
            />
            <Pager paging={audit.paging} noun="audit entries" />
          </>
        )}
      </Show>
    </Page>
  );
}
