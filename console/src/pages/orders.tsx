import { useState } from "preact/hooks";
import { bandwidthProducts } from "../../../src/vocabulary";
import type { GatewayProduct, Schemas } from "../api";
import { ErrorNote } from "../components/error-note";
import { Page, Section } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Choice } from "../components/select";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { useAction } from "../hooks/use-action";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { refreshAccount, useSession } from "../session";

export const ordersPage: PageEntry = { label: "Orders", area: "billing", component: OrdersPage };

function OrdersPage() {
  const { client, can } = useSession();
  const orders = usePagedList({}, (_filters, page) => client.get("/orders", { params: { query: page } }));
  return (
    <Page title="Orders">
      {can("billing", "write") ? <BuyBandwidth onBought={orders.reload} /> : null}
      <Section title="Order history">
        <Show state={orders} empty={(page) => page.data.length === 0} emptyText="No orders yet.">
          {(page) => (
            <>
              <Table
                caption="Orders"
                rows={page.data}
                rowKey={(order) => order.id}
                columns={[
                  { label: "When", render: (o) => format.time(o.created_at) },
                  { label: "Order", render: (o) => <code>{o.id}</code> },
                  { label: "Product", render: (o) => o.product },
                  { label: "What", render: (o) => describe(o) },
                  {
                    label: "Status",
                    render: (o) => <Pill tone={o.status === "completed" ? "good" : "info"}>{o.status}</Pill>,
                  },
                  { label: "Total", render: (o) => format.usd(o.total_usd), numeric: true },
                ]}
              />
              <Pager paging={orders.paging} noun="orders" />
            </>
          )}
        </Show>
      </Section>
    </Page>
  );
}

function describe(order: Schemas["Order"]): string {
  const details = order.details;
  if ("gb" in details) return `${format.gb(details.gb)} at ${format.usd(details.price_per_gb)}/GB`;
  return `${details.quantity} IPs · ${details.country}${details.city ? `/${details.city}` : ""} · AS${details.asn} · ${details.months} mo`;
}

/** Bandwidth: the quote first (price, balance after, whether it can be bought), then the purchase of that quote. */
function BuyBandwidth(props: { onBought: () => void }) {
  const session = useSession();
  const { client, productsOf } = session;
  const products = productsOf(bandwidthProducts);
  const [product, setProduct] = useState<GatewayProduct>(products[0] ?? "residential");
  const [gb, setGb] = useState("10");
  const [quote, setQuote] = useState<Schemas["OrderQuote"] | null>(null);
  const [bought, setBought] = useState<Schemas["Order"] | null>(null);
  const { run, busy, error } = useAction();
  const body = { product, gb: Number(gb) };
  const getQuote = () =>
    run(async () => {
      setBought(null);
      setQuote(await client.post("/orders/quote", { body }));
    });
  const buy = () =>
    run(async () => {
      const order = await client.post("/orders", { body });
      setBought(order);
      setQuote(null);
      await refreshAccount(session);
      props.onBought();
    });
  return (
    <Section title="Buy bandwidth">
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          void getQuote();
        }}
      >
        <Choice
          label="Product"
          value={product}
          options={products}
          onChange={(chosen) => {
            setProduct(chosen);
            setQuote(null);
          }}
        />
        <label>
          GB
          <input
            type="number"
            min="0.001"
            step="any"
            required
            value={gb}
            onInput={(event) => {
              setGb(event.currentTarget.value);
              setQuote(null);
            }}
          />
        </label>
        <button type="submit" disabled={busy}>
          Get a quote
        </button>
      </form>
      {quote ? (
        <div class="quote" data-testid="quote" role="status">
          <Table
            caption="Quote"
            rows={quote.line_items}
            rowKey={(item) => item.description}
            columns={[
              { label: "Item", render: (item) => item.description },
              {
                label: "Quantity",
                render: (item) => `${item.quantity} ${item.unit === "gb" ? "GB" : "IP-months"}`,
                numeric: true,
              },
              { label: "Unit price", render: (item) => format.usd(item.unit_price_usd), numeric: true },
              { label: "Amount", render: (item) => format.usd(item.amount_usd), numeric: true },
            ]}
          />
          <p>
            Total <strong>{format.usd(quote.total_usd)}</strong> · balance {format.usd(quote.balance_usd)} →{" "}
            {format.usd(quote.balance_after_usd)}
          </p>
          {quote.orderable ? (
            <button type="button" class="primary" disabled={busy} onClick={() => void buy()}>
              Buy {format.gb(Number(gb))} for {format.usd(quote.total_usd)}
            </button>
          ) : (
            <p class="error" role="alert">
              Cannot be bought now: {quote.error?.message} <code>{quote.error?.code}</code> ·{" "}
              <a href={`/docs/errors#${quote.error?.code}`} target="_blank" rel="noopener">
                What this means
              </a>
            </p>
          )}
        </div>
      ) : null}
      {bought ? (
        <p class="success" role="status">
          Bought: order <code>{bought.id}</code>, {format.usd(bought.total_usd)}. The pool grew at once.
        </p>
      ) : null}
      {error ? <ErrorNote error={error} /> : null}
    </Section>
  );
}
