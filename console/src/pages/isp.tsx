import { mfaHeaders, type Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { Copyable, Secret } from "../components/copy";
import { DialogButton } from "../components/dialog";
import * as field from "../components/fields";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const ispPage: PageEntry = { label: "ISP batches", area: "isp", component: IspPage };

function IspPage() {
  const { client } = useSession();
  const batches = usePagedList({}, (_filters, page) => client.get("/isp/batches", { params: { query: page } }));
  return (
    <Page title="ISP batches">
      <Show
        state={batches}
        empty={(page) => page.data.length === 0}
        emptyText="No ISP batches: static IPs are bought with an ISP order (POST /orders)."
      >
        {(page) => (
          <>
            <Table
              caption="ISP batches"
              rows={page.data}
              rowKey={(batch) => batch.id}
              columns={[
                { label: "Batch", render: (b) => <code>{b.id}</code> },
                { label: "Where", render: (b) => `${b.country}${b.city ? `/${b.city}` : ""} · AS${b.asn}` },
                { label: "IPs", render: (b) => b.quantity, numeric: true },
                { label: "Expires", render: (b) => format.time(b.expires_at) },
                {
                  label: "Status",
                  render: (b) => (
                    <Pill tone={b.status === "active" ? "good" : "warn"}>
                      {b.status}
                      {b.auto_renew ? " · auto-renew" : ""}
                    </Pill>
                  ),
                },
                { label: "", render: (b) => <BatchActions batch={b} reload={batches.reload} /> },
              ]}
            />
            <Pager paging={batches.paging} noun="batches" />
          </>
        )}
      </Show>
    </Page>
  );
}

function BatchActions({ batch, reload }: { batch: Schemas["IspBatch"]; reload: () => void }) {
  const { client, can } = useSession();
  const path = { params: { path: { id: batch.id } } };
  const writable = can("isp", "write");
  return (
    <div class="row-actions">
      <DialogButton label="Proxy list" tone="small" title={`IPs of ${batch.id}`}>
        {() => <ProxyList id={batch.id} />}
      </DialogButton>
      {writable && batch.status === "active" ? (
        <>
          <ConfirmButton
            label="Renew"
            title="Renew the batch"
            body={<p>Same IPs and password; the period is extended.</p>}
            confirmLabel="Renew"
            fields={{ months: field.number("Months", { value: "1", min: 1, max: 12 }) }}
            run={(values) =>
              client.post("/isp/batches/{id}/renew", { ...path, body: { months: Number(values.months) } })
            }
            onDone={reload}
          />
          <ConfirmButton
            label="Rotate password"
            title="Rotate the batch password"
            body={<p>Every IP of the batch takes the new password.</p>}
            confirmLabel="Rotate"
            run={() => client.post("/isp/batches/{id}/rotate-password", path)}
            result={(answer) => <Secret label="New batch password" value={answer.password} />}
            onDone={reload}
          />
          <ConfirmButton
            label="Release"
            title="Release the whole batch"
            danger
            mfa
            body={<p>Every IP stops working at once. No refund.</p>}
            confirmLabel="Release batch"
            run={(_values, code) => client.delete("/isp/batches/{id}", { ...path, headers: mfaHeaders(code) })}
            onDone={reload}
          />
        </>
      ) : null}
    </div>
  );
}

function ProxyList({ id }: { id: string }) {
  const { client } = useSession();
  const ips = useLoad(
    () => client.get("/isp/batches/{id}/ips", { params: { path: { id }, query: { format: "json" } } }),
    [id],
  );
  return (
    <Show state={ips} empty={(list) => list.length === 0} emptyText="The batch is still being provisioned.">
      {(list) => {
        const lines = list.map((line) => `${line.ip}:${line.port}:${line.user}:${line.pass}`);
        return <Copyable label="ip:port:user:pass" value={lines.join("\n")} />;
      }}
    </Show>
  );
}
