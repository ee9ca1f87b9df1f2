import { Bar } from "../components/bar";
import { BudgetCard } from "../components/budget-card";
import { ConfirmButton } from "../components/confirm-button";
import * as field from "../components/fields";
import { Page, Section } from "../components/layout";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import { ActiveTrafficSpikes } from "../components/traffic-spikes";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import type { PageEntry } from "../router";
import { refreshAccount, useSession } from "../session";

export const overviewPage: PageEntry = { label: "Overview", area: "billing", component: OverviewPage };

const BANDWIDTH = ["residential", "mobile"] as const;

function OverviewPage() {
  const session = useSession();
  const { account, sandbox, client, can, productsOf } = session;
  const pools = useLoad(
    () =>
      Promise.all(
        productsOf(BANDWIDTH).map((product) => client.get("/{product}/balance", { params: { path: { product } } })),
      ),
    [],
  );
  const events = useLoad(
    async () => (can("webhooks") ? (await client.get("/events", { params: { query: { limit: 8 } } })).data : null),
    [],
  );
  return (
    <Page
      title="Overview"
      actions={
        sandbox && can("billing", "write") ? (
          <ConfirmButton
            label="Add test credit"
            title="Add test credit (sandbox)"
            body={<p>Simulated money on the sandbox balance, to try orders with.</p>}
            confirmLabel="Add credit"
            fields={{ amount: field.number("Amount (USD)", { value: "100", min: 1, step: "any" }) }}
            run={(values) =>
              client.post("/test-helpers/balance/top-up", { body: { amount_usd: Number(values.amount) } })
            }
            onDone={() => void refreshAccount(session).then(pools.reload)}
          />
        ) : null
      }
    >
      <div class="grid">
        {account ? (
          <Section title="Balance">
            <p class="big" data-testid="balance">
              {format.usd(account.balance.amount)}
            </p>
            <p class="muted">
              Plan <Pill tone="info">{account.plan}</Pill> · KYC {account.kyc_status}
            </p>
          </Section>
        ) : null}
        <BudgetCard />
        <Show state={pools} empty={(list) => list.length === 0} emptyText="This key covers no bandwidth product.">
          {(list) =>
            list.map((pool) => (
              <Section key={pool.product} title={`${pool.product === "residential" ? "Residential" : "Mobile"} pool`}>
                <Bar
                  label={`${pool.product} GB used`}
                  used={pool.gb_used}
                  total={pool.gb_purchased}
                  text={`${format.gb(pool.gb_used)} used · ${format.gb(pool.gb_remaining)} left`}
                />
                <p data-testid={`pool-${pool.product}`}>
                  {format.gb(pool.gb_remaining)} left of {format.gb(pool.gb_purchased)}
                  {pool.exhausted ? (
                    <>
                      {" "}
                      <Pill tone="bad">exhausted</Pill>
                    </>
                  ) : null}
                </p>
                <p class="muted">
                  {pool.forecast.projected_exhaustion_at
                    ? `Runs out ${format.relative(pool.forecast.projected_exhaustion_at)} at ${format.gb(pool.forecast.avg_daily_gb)} a day (last 7 days).`
                    : pool.gb_remaining <= 0
                      ? "Nothing left: buy bandwidth to use this product."
                      : pool.forecast.avg_daily_gb > 0
                        ? `No run-out in sight: at ${format.gb(pool.forecast.avg_daily_gb)} a day (last 7 days), it lasts over a year.`
                        : "No use in the last 7 days: no run-out in sight."}
                </p>
                {can("billing", "write") ? <a href="#/orders">Buy bandwidth</a> : null}
              </Section>
            ))
          }
        </Show>
      </div>
      {can("subusers") ? <ActiveTrafficSpikes /> : null}
      {can("webhooks") ? (
        <Section title="Latest events">
          <Show state={events} empty={(list) => !list || list.length === 0} emptyText="No events in the last 30 days.">
            {(list) => (
              <Table
                caption="Latest events"
                rows={list ?? []}
                rowKey={(event) => event.id}
                columns={[
                  { label: "When", render: (event) => format.time(event.created_at) },
                  { label: "Event", render: (event) => <code>{event.type}</code> },
                  { label: "Details", render: (event) => eventSummary(event.data) },
                ]}
              />
            )}
          </Show>
        </Section>
      ) : null}
    </Page>
  );
}

function eventSummary(data: Record<string, unknown>): string {
  return Object.entries(data)
    .filter(([, value]) => value !== null && typeof value !== "object")
    .slice(0, 4)
    .map(([key, value]) => `${key}: ${value}`)
    .join(" · ");
}
