import { useState } from "preact/hooks";
import { products as allProducts } from "../../../src/vocabulary";
import type { Schemas } from "../api";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Choice } from "../components/select";
import { Show } from "../components/show";
import { SubuserFilter, SubuserLink, useSubuserLabels } from "../components/subuser-picker";
import { Table } from "../components/table";
import * as format from "../format";
import { useLiveTail } from "../hooks/use-live-tail";
import { useLoad } from "../hooks/use-load";
import { useLocalPages } from "../hooks/use-paged";
import { oneOf } from "../lib/one-of";
import { type PageEntry, useView } from "../router";
import { useSession } from "../session";

export const requestsPage: PageEntry = { label: "Request log", area: "traffic", component: RequestsPage };

/**
 * The sampled request log (last 48 hours): the API's filters (product, sub-user), then a search over the page. "Live"
 * opens the live tail with the same filters and puts each request on top as the gateway reports it.
 */
function RequestsPage() {
  const { client, signer, productsOf } = useSession();
  const products = productsOf(allProducts);
  const [view, change] = useView({ product: products[0] ?? "residential", subuser: "", search: "", failed: "" });
  const product = oneOf(view.product, products, "residential");
  const { subuser, search } = view;
  const failedOnly = view.failed === "1";
  const [live, setLive] = useState(false);
  const tail = useLiveTail(signer.kind === "key" ? signer.apiKey : null, live, product, subuser);
  const log = useLoad(
    () =>
      client.get("/{product}/requests", {
        params: { path: { product }, query: { limit: 1000, ...(subuser ? { subuser } : {}) } },
      }),
    [product, subuser],
  );
  const needle = search.trim().toLowerCase();
  const liveIds = new Set(tail.records.map((entry) => entry.request_id));
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
        <Choice label="Product" value={product} options={products} onChange={(chosen) => change({ product: chosen })} />
        <SubuserFilter value={subuser} product={product} onChange={(id) => change({ subuser: id })} />
        <label>
          Search
          <input
            type="search"
            value={search}
            placeholder="host, status, exit IP, tag…"
            onInput={(event) => change({ search: event.currentTarget.value })}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={failedOnly}
            onChange={(event) => change({ failed: event.currentTarget.checked ? "1" : "" })}
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
        {(page) => (
          <RequestRows
            entries={[...tail.records, ...page.data.filter((entry) => !liveIds.has(entry.request_id))]}
            failedOnly={failedOnly}
            needle={needle}
          />
        )}
      </Show>
    </Page>
  );
}

type Entry = Schemas["RequestLogEntry"];

/** The log's entries after the page's search, a page of them at a time. */
function RequestRows(props: { entries: Entry[]; failedOnly: boolean; needle: string }) {
  const { entries, failedOnly, needle } = props;
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
  const shown = useLocalPages(rows);
  useSubuserLabels(shown.rows.map((entry) => entry.subuser));
  return (
    <>
      <p class="muted" data-testid="request-count">
        {format.count(rows.length)} of {format.count(entries.length)} sampled requests
      </p>
      <Table
        caption="Sampled requests"
        rows={shown.rows}
        rowKey={(entry) => entry.request_id}
        columns={[
          { label: "Time", render: (e) => format.time(e.ts) },
          { label: "Sub-user", render: (e) => <SubuserLink id={e.subuser} /> },
          { label: "Request", render: (e) => `${e.method} ${e.target_host}` },
          { label: "Status", render: (e) => <Pill tone={e.status >= 400 ? "bad" : "good"}>{e.status}</Pill> },
          { label: "Bytes", render: (e) => format.bytes(e.bytes), numeric: true },
          { label: "Exit", render: (e) => `${e.exit_ip} · ${e.exit_geo} · AS${e.exit_asn}` },
          { label: "Tag", render: (e) => e.tag ?? "—" },
        ]}
      />
      <Pager paging={shown.paging} noun="requests" />
    </>
  );
}

function liveStatus(state: "off" | "connecting" | "live" | "stopped", received: number, reason: string): string {
  if (state === "connecting") return "Live: connecting…";
  if (state === "stopped") return `Live stopped: ${reason}`;
  return received === 0 ? "Live: waiting for requests…" : `Live: ${format.count(received)} new`;
}
