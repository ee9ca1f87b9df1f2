import { useState } from "preact/hooks";
import { Page } from "../components/layout";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const auditPage: PageEntry = { label: "Audit log", area: "account", component: AuditPage };

function AuditPage() {
  const { client } = useSession();
  const [resource, setResource] = useState("");
  const audit = useLoad(
    () =>
      client.get("/audit-events", {
        params: { query: { limit: 100, ...(resource.trim() ? { resource: resource.trim() } : {}) } },
      }),
    [resource],
  );
  return (
    <Page title="Audit log">
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <label>
          Resource (type or id)
          <input
            type="search"
            value={resource}
            placeholder="subuser, sub_…"
            onChange={(event) => setResource(event.currentTarget.value)}
          />
        </label>
      </form>
      <Show state={audit} empty={(page) => page.data.length === 0} emptyText="No audit entries.">
        {(page) => (
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
        )}
      </Show>
    </Page>
  );
}
