import type { Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { Secret } from "../components/copy";
import * as field from "../components/fields";
import { Page, Section } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Choice } from "../components/select";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { type PagedList, usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const webhooksPage: PageEntry = { label: "Webhooks", area: "webhooks", component: WebhooksPage };

const EVENTS = [
  "*",
  "order.completed",
  "isp_batch.expiring",
  "traffic.threshold",
  "report_run.completed",
  "report_run.failed",
  "subuser.new_source",
] as const;

function WebhooksPage() {
  const { client, can } = useSession();
  const endpoints = usePagedList({}, (_filters, page) => client.get("/webhook-endpoints", { params: { query: page } }));
  // The endpoint whose deliveries are shown is a filter of that list: picking another starts at its first page.
  const deliveries = usePagedList(
    { deliveries_of: "", delivery_status: "" as DeliveryStatus },
    ({ deliveries_of: id, delivery_status: status }, page) =>
      id
        ? client.get("/webhook-endpoints/{id}/deliveries", {
            params: { path: { id }, query: { ...page, ...(status ? { status } : {}) } },
          })
        : Promise.resolve({ data: [], next_cursor: null }),
    { prefix: "deliveries_" },
  );
  const selected = deliveries.filters.deliveries_of;
  const setSelected = (id: string) =>
    id === selected ? deliveries.reload() : deliveries.filter({ deliveries_of: id });
  const writable = can("webhooks", "write");
  return (
    <Page
      title="Webhooks"
      actions={
        writable ? (
          <ConfirmButton
            label="New endpoint"
            title="New webhook endpoint"
            body={<p>Events are signed with the endpoint's secret (Standard Webhooks), shown once.</p>}
            confirmLabel="Create"
            fields={{
              url: field.text("URL", { required: true, placeholder: "https://example.com/hooks" }),
              events: field.checkboxes("Events", EVENTS, { value: ["*"] }),
              description: field.text("Description"),
            }}
            run={({ description, ...endpoint }) =>
              client.post("/webhook-endpoints", { body: { ...endpoint, description: description || null } })
            }
            result={(created) => <Secret label="Signing secret" value={created.secret} />}
            onDone={endpoints.reload}
          />
        ) : null
      }
    >
      <Show
        state={endpoints}
        empty={(page) => page.data.length === 0}
        emptyText="No endpoints: events are still listed under Overview."
      >
        {(page) => (
          <>
            <Table
              caption="Webhook endpoints"
              rows={page.data}
              rowKey={(endpoint) => endpoint.id}
              columns={[
                { label: "URL", render: (e) => <code>{e.url}</code> },
                { label: "Events", render: (e) => e.events.join(", ") },
                {
                  label: "Status",
                  render: (e) => (
                    <Pill tone={e.status === "enabled" ? "good" : "bad"}>
                      {e.status}
                      {e.disabled_reason ? ` (${e.disabled_reason})` : ""}
                    </Pill>
                  ),
                },
                {
                  label: "",
                  render: (e) => (
                    <div class="row-actions">
                      <button
                        type="button"
                        class="small"
                        aria-pressed={selected === e.id}
                        onClick={() => setSelected(e.id)}
                      >
                        Deliveries
                      </button>
                      {writable ? (
                        <>
                          <ConfirmButton
                            label="Send test"
                            title="Send a test event"
                            body={
                              <p>
                                A <code>webhook.test</code> event to this endpoint.
                              </p>
                            }
                            confirmLabel="Send"
                            run={() => client.post("/webhook-endpoints/{id}/test", { params: { path: { id: e.id } } })}
                            onDone={() => setSelected(e.id)}
                          />
                          <ConfirmButton
                            label="Rotate secret"
                            title="Rotate the signing secret"
                            body={<p>Deliveries are signed with both secrets for a day.</p>}
                            confirmLabel="Rotate"
                            run={() =>
                              client.post("/webhook-endpoints/{id}/rotate-secret", { params: { path: { id: e.id } } })
                            }
                            result={(rotated) => <Secret label="New signing secret" value={rotated.secret} />}
                            onDone={endpoints.reload}
                          />
                          <ConfirmButton
                            label="Delete"
                            title="Delete the endpoint"
                            danger
                            body={<p>No more deliveries to {e.url}.</p>}
                            confirmLabel="Delete"
                            run={() => client.delete("/webhook-endpoints/{id}", { params: { path: { id: e.id } } })}
                            onDone={endpoints.reload}
                          />
                        </>
                      ) : null}
                    </div>
                  ),
                },
              ]}
            />
            <Pager paging={endpoints.paging} noun="endpoints" />
          </>
        )}
      </Show>
      {selected ? <Deliveries id={selected} list={deliveries} /> : null}
    </Page>
  );
}

type DeliveryStatus = "" | Schemas["WebhookDelivery"]["status"];
const DELIVERY_STATUSES: { value: DeliveryStatus; label: string }[] = [
  { value: "", label: "Any" },
  { value: "pending", label: "Pending" },
  { value: "succeeded", label: "Succeeded" },
  { value: "failed", label: "Failed" },
];

function Deliveries(props: {
  id: string;
  list: PagedList<Schemas["WebhookDelivery"], { deliveries_of: string; delivery_status: DeliveryStatus }>;
}) {
  const { id, list: deliveries } = props;
  const { client, can } = useSession();
  return (
    <Section
      title="Deliveries"
      actions={
        <button type="button" class="small" onClick={deliveries.reload}>
          Refresh
        </button>
      }
    >
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <Choice
          label="Delivery status"
          value={deliveries.filters.delivery_status}
          options={DELIVERY_STATUSES}
          onChange={(chosen) => deliveries.filter({ delivery_status: chosen })}
        />
      </form>
      <Show state={deliveries} empty={(page) => page.data.length === 0} emptyText="No deliveries.">
        {(page) => (
          <>
            <Table
              caption="Deliveries"
              rows={page.data}
              rowKey={(delivery) => delivery.id}
              columns={[
                { label: "When", render: (d) => format.time(d.created_at) },
                { label: "Event", render: (d) => <code>{d.event_type}</code> },
                {
                  label: "Status",
                  render: (d) => (
                    <Pill tone={d.status === "succeeded" ? "good" : d.status === "failed" ? "bad" : "info"}>
                      {d.status}
                    </Pill>
                  ),
                },
                { label: "Attempts", render: (d) => d.attempt_count, numeric: true },
                {
                  label: "Last answer",
                  render: (d) =>
                    d.last_attempt
                      ? `${d.last_attempt.status_code ?? d.last_attempt.error ?? "—"} in ${d.last_attempt.duration_ms} ms`
                      : "—",
                },
                {
                  label: "",
                  render: (d) =>
                    can("webhooks", "write") && d.status !== "pending" ? (
                      <ConfirmButton
                        label="Retry"
                        title="Retry the delivery"
                        body={<p>One more attempt, now.</p>}
                        confirmLabel="Retry"
                        run={() =>
                          client.post("/webhook-endpoints/{id}/deliveries/{delivery_id}/retry", {
                            params: { path: { id, delivery_id: d.id } },
                          })
                        }
                        onDone={deliveries.reload}
                      />
                    ) : null,
                },
              ]}
            />
            <Pager paging={deliveries.paging} noun="deliveries" />
          </>
        )}
      </Show>
    </Section>
  );
}
