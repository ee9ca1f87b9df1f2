import * as format from "../format";
import { api, can, productsOf } from "../session";
import { ConfirmButton, DialogButton, Form, Page, Pill, Show, Table, useLoad } from "../ui";

export function SubscriptionsPage() {
  const list = useLoad(() => api().get("/subscriptions", { params: { query: { limit: 100 } } }), []);
  const writable = can("billing", "write");
  return (
    <Page
      title="Subscriptions"
      actions={
        writable ? (
          <DialogButton label="Subscribe" tone="primary" title="Subscribe to a bandwidth tier">
            {(close) => (
              <Form
                submitLabel="Subscribe"
                fields={[
                  {
                    name: "product",
                    label: "Product",
                    type: "select",
                    options: productsOf(["residential", "mobile"] as const),
                  },
                  { name: "plan", label: "Tier", type: "select", options: ["starter", "pro", "business"] },
                  {
                    name: "cycle",
                    label: "Cycle",
                    type: "select",
                    options: ["monthly", "annual"],
                    hint: "Annual: 10% below twelve months.",
                  },
                ]}
                submit={(values) =>
                  api().post("/subscriptions", {
                    body: {
                      product: values.product as "residential",
                      plan: values.plan as string,
                      cycle: values.cycle as "monthly",
                    },
                  })
                }
                onDone={() => {
                  close();
                  list.reload();
                }}
              />
            )}
          </DialogButton>
        ) : null
      }
    >
      <Show
        state={list}
        empty={(page) => page.data.length === 0}
        emptyText="No subscriptions: bandwidth is bought by order, and ISP batches renew by themselves."
      >
        {(page) => (
          <Table
            caption="Subscriptions"
            rows={page.data}
            rowKey={(one) => one.id}
            columns={[
              { label: "Product", render: (s) => s.product },
              { label: "Plan", render: (s) => (s.batch_id ? <code>{s.batch_id}</code> : s.plan) },
              { label: "Cycle", render: (s) => s.cycle },
              {
                label: "Included",
                render: (s) => (s.gb_included === null ? `${s.quantity} IPs` : format.gb(s.gb_included)),
              },
              { label: "Price", render: (s) => format.usd(s.price_usd), numeric: true },
              { label: "Renews", render: (s) => format.time(s.renews_at) },
              {
                label: "Status",
                render: (s) => <Pill tone={s.status === "active" ? "good" : "warn"}>{s.status}</Pill>,
              },
              {
                label: "",
                render: (s) =>
                  writable && s.status === "active" ? (
                    <div class="row-actions">
                      <ConfirmButton
                        label="Pause"
                        title="Pause renewal"
                        body={<p>The current period's resources are kept; renewal stops.</p>}
                        confirmLabel="Pause"
                        run={() => api().post("/subscriptions/{id}/pause", { params: { path: { id: s.id } } })}
                        onDone={list.reload}
                      />
                      <ConfirmButton
                        label="Cancel"
                        title="Cancel at the end of the period"
                        danger
                        body={
                          <p>
                            Effective at the end of the period
                            {s.batch_id ? "; the batch then has a 7-day grace period" : ""}.
                          </p>
                        }
                        confirmLabel="Cancel subscription"
                        run={() => api().post("/subscriptions/{id}/cancel", { params: { path: { id: s.id } } })}
                        onDone={list.reload}
                      />
                    </div>
                  ) : null,
              },
            ]}
          />
        )}
      </Show>
    </Page>
  );
}
