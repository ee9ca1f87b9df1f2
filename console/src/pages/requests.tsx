import { useState } from "preact/hooks";
import { products as allProducts } from "../../../src/vocabulary";
import type { Product } from "../api";
import { Page } from "../components/layout";
import { Pill } from "../components/pill";
import { Choice } from "../components/select";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { useLiveTail } from "../hooks/use-live-tail";
import { useLoad } from "../hooks/use-load";
import { href, type PageEntry } from "../router";
import { useSession } from "../session";

export const requestsPage: PageEntry = { label: "Request log", area: "traffic", component: RequestsPage };

/** Rows shown at first, and added by each "Show more". */
const PAGE_ROWS = 50;

/**
 * The sampled request log (last 48 hours): the API's filters (product, sub-user), then a search over the page. "Live"
 * opens the live tail with the same filters and puts each request on top as the gateway reports it.
 */
function RequestsPage() {
  const { client, apiKey, productsOf } = useSession();
  const products = productsOf(allProducts);
  const [product, setProduct] = useState<Product>(products[0] ?? "residential");
  const [subuser, setSubuser] = useState("");
  const [search, setSearch] = useState("");
  const [failedOnly, setFailedOnly] = useState(false);
  const [shown, setShown] = useState(PAGE_ROWS);
  const [live, setLive] = useState(false);
  const tail = useLiveTail(apiKey, live, product, subuser);
  const log = useLoad(
    () =>
      client.get("/{product}/requests", {
        params: { path: { product }, query: { limit: 1000, ...(subuser ? { subuser } : {}) } },
      }),
    [product, subuser],
  );
  const subusers = useLoad(() => client.get("/subusers", { params: { query: { limit: 100 } } }), []);
  const needle = search.trim().toLowerCase();
  return (
    <Page
      title="Request log"
      actions={
        <button type="button" class="small" onClick={log.reload}>
          Refresh
        </button>
      }
    >
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <Choice label="Product" value={product} options={products} onChange={setProduct} />
        <Choice
          label="Sub-user"
          value={subuser}
          options={[
            { value: "", label: "All" },
            ...(subusers.data?.data.map((one) => ({ value: one.id, label: one.label })) ?? []),
          ]}
          onChange={setSubuser}
        />
        <label>
          Search
          <input
            type="search"
            value={search}
            placeholder="host, status, exit IP, tag…"
            onInput={(event) => setSearch(event.currentTarget.value)}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={failedOnly}
            onChange={(event) => setFailedOnly(event.currentTarget.checked)}
          />
          Failed only
        </label>
        <label class="check">
          <input type="checkbox" checked={live} onChange={(event) => setLive(event.currentTarget.checked)} />
          Live
        </label>
      </form>
      {live || tail.state === "stopped" ? (
        <p class="muted" aria-live="polite" data-testid="live-status">
          {liveStatus(tail.state, tail.records.length, tail.reason)}
        </p>
      ) : null}
      <p class="muted">
        Sampled: every request under 100 a minute, a uniform sample above; not for billing (use Traffic).
      </p>
      <Show
        state={log}
        empty={(page) => page.data.length === 0 && tail.records.length === 0}
        emptyText="No requests in the last 48 hours."
      >
        {(page) => {
          const liveIds = new Set(tail.records.map((entry) => entry.request_id));
          const entries = [...tail.records, ...page.data.filter((entry) => !liveIds.has(entry.request_id))];
          const rows = entries.filter(
            (entry) =>
              (!failedOnly || entry.status >= 400) &&
              (!needle ||
                [
                  entry.target_host,
                  String(entry.status),
                  entry.exit_ip,
                  entry.exit_geo,
                  entry.tag ?? "",
                  entry.method,
                  entry.request_id,
                ].some((value) => value.toLowerCase().includes(needle))),
          );
          return (
            <>
              <p class="muted" data-testid="request-count">
                {format.count(rows.length)} of {format.count(entries.length)} sampled requests
              </p>
              <Table
                caption="Sampled requests"
                rows={rows.slice(0, shown)}
                rowKey={(entry) => entry.request_id}
                columns={[
                  { label: "Time", render: (e) => format.time(e.ts) },
                  {
                    label: "Sub-user",
                    render: (e) => (
                      <a href={href("subusers", e.subuser)}>
                        {subusers.data?.data.find((s) => s.id === e.subuser)?.label ?? e.subuser}
                      </a>
                    ),
                  },
                  { label: "Request", render: (e) => `${e.method} ${e.target_host}` },
                  { label: "Status", render: (e) => <Pill tone={e.status >= 400 ? "bad" : "good"}>{e.status}</Pill> },
                  { label: "Bytes", render: (e) => format.bytes(e.bytes), numeric: true },
                  { label: "Exit", render: (e) => `${e.exit_ip} · ${e.exit_geo} · AS${e.exit_asn}` },
                  { label: "Tag", render: (e) => e.tag ?? "—" },
                ]}
              />
              {rows.length > shown ? (
                <button type="button" class="more" onClick={() => setShown(shown + PAGE_ROWS)}>
                  Show {Math.min(PAGE_ROWS, rows.length - shown)} more
                </button>
              ) : null}
            </>
          );
        }}
      </Show>
    </Page>
  );
}

function liveStatus(state: "off" | "connecting" | "live" | "stopped", received: number, reason: string): string {
  if (state === "connecting") return "Live: connecting…";
  if (state === "stopped") return `Live stopped: ${reason}`;
  return received === 0 ? "Live: waiting for requests…" : `Live: ${format.count(received)} new`;
}
