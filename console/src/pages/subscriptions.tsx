import { ConfirmButton } from "../components/confirm-button";
import { DialogButton } from "../components/dialog";
import * as field from "../components/fields";
import { Form } from "../components/form";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import { isNonEmpty } from "../lib/non-empty";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const subscriptionsPage: PageEntry = { label: "Subscriptions", area: "billing", component: SubscriptionsPage };

const TIERS = ["starter", "pro", "business"] as const;
const CYCLES = ["monthly", "annual"] as const;

function SubscriptionsPage() {
  const { client, can, productsOf } = useSession();
  const list = usePagedList({}, (_filters, page) => client.get("/subscriptions", { params: { query: page } }));
  const writable = can("billing", "write");
  const products = productsOf(["residential", "mobile"] as const);
  return (
    <Page
      title="Subscriptions"
      actions={
        writable && isNonEmpty(products) ? (
          <DialogButton label="Subscribe" tone="primary" title="Subscribe to a bandwidth tier">
            {(close) => (
              <Form
                submitLabel="Subscribe"
                fields={{
                  product: field.select("Product", products),
                  plan: field.select("Tier", TIERS),
                  cycle: field.select("Cycle", CYCLES, { hint: "Annual: 10% below twelve months." }),
                }}
                submit={(subscription) => client.post("/subscriptions", { body: subscription })}
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
          <>
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
                          run={() => client.post("/subscriptions/{id}/pause", { params: { path: { id: s.id } } })}
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
                          run={() => client.post("/subscriptions/{id}/cancel", { params: { path: { id: s.id } } })}
                          onDone={list.reload}
                        />
                      </div>
                    ) : null,
                },
              ]}
            />
            <Pager paging={list.paging} noun="subscriptions" />
          </>
        )}
      </Show>
    </Page>
  );
}
