import { ConfirmButton } from "../components/confirm-button";
import * as field from "../components/fields";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Choice } from "../components/select";
import { Show } from "../components/show";
import { SubuserFilter, SubuserLink, subuserChoice, useSubuserLabels } from "../components/subuser-picker";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import { oneOf } from "../lib/one-of";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const sessionsPage: PageEntry = { label: "Sessions", area: "traffic", component: SessionsPage };

/** Each product's sticky sessions, at a path of its own. */
const SESSIONS = { residential: "/residential/sessions", mobile: "/mobile/sessions" } as const;
const SESSION = { residential: "/residential/sessions/{id}", mobile: "/mobile/sessions/{id}" } as const;

const REPINNED = [
  { value: "", label: "Any" },
  { value: "true", label: "Repinned" },
  { value: "false", label: "Not repinned" },
] as const;
type Repinned = (typeof REPINNED)[number]["value"];

function SessionsPage() {
  const { client, can, productsOf, sandbox } = useSession();
  const products = productsOf(["residential", "mobile"] as const);
  const sessions = usePagedList(
    { product: products[0] ?? "residential", subuser: "", repinned: "" as Repinned },
    ({ product, subuser, repinned }, page) =>
      client.get(SESSIONS[oneOf(product, products, "residential")], {
        params: { query: { ...page, ...(subuser ? { subuser } : {}), ...(repinned ? { repinned } : {}) } },
      }),
  );
  const { subuser, repinned } = sessions.filters;
  useSubuserLabels(sessions.data?.data.map((one) => one.subuser) ?? []);
  const product = oneOf(sessions.filters.product, products, "residential");
  const writable = can("traffic", "write");
  return (
    <Page
      title="Sessions"
      actions={
        <>
          <button type="button" class="small" onClick={sessions.reload}>
            Refresh
          </button>
          {sandbox && writable ? (
            <ConfirmButton
              label="Start test session"
              title="Start a sticky session (sandbox)"
              body={<p>A sticky session as the gateway would open it, to try termination with.</p>}
              confirmLabel="Start"
              fields={{
                subuser: subuserChoice("Sub-user", { product }),
                session_id: field.text("Session id", { value: "console1", pattern: "[a-z0-9]{1,32}" }),
                region: field.text("Country", { value: "us" }),
              }}
              run={(values) =>
                client.post("/test-helpers/sessions", {
                  body: { ...values, product, sesstime: 10, requests: 1, bytes_per_request: 2000 },
                })
              }
              onDone={sessions.reload}
            />
          ) : null}
        </>
      }
    >
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <Choice
          label="Product"
          value={product}
          options={products}
          onChange={(chosen) => sessions.filter({ product: chosen })}
        />
        <SubuserFilter value={subuser} product={product} onChange={(id) => sessions.filter({ subuser: id })} />
        <Choice
          label="Repinned"
          value={repinned}
          options={REPINNED}
          onChange={(chosen) => sessions.filter({ repinned: chosen })}
        />
      </form>
      <Show
        state={sessions}
        empty={(page) => page.data.length === 0}
        emptyText="No sticky sessions: they start with a session segment in the username."
      >
        {(page) => (
          <>
            <Table
              caption="Sticky sessions"
              rows={page.data}
              rowKey={(one) => one.id}
              columns={[
                { label: "Session", render: (s) => <code>{s.session_id}</code> },
                {
                  label: "Sub-user",
                  render: (s) => <SubuserLink id={s.subuser} />,
                },
                { label: "Geo", render: (s) => [s.region, s.state, s.city].filter(Boolean).join("/") },
                { label: "Exit IP", render: (s) => s.exit_ip ?? "—" },
                {
                  label: "Use",
                  render: (s) => `${format.bytes(s.bytes_used)} · ${format.count(s.requests)} req`,
                  numeric: true,
                },
                // A terminated session no longer expires: its pin ended when it was terminated.
                { label: "Expires", render: (s) => (s.status === "active" ? format.relative(s.expires_at) : "—") },
                {
                  label: "Status",
                  render: (s) => (
                    <Pill tone={s.status === "active" ? "good" : "warn"}>
                      {s.status}
                      {s.repinned ? " · repinned" : ""}
                    </Pill>
                  ),
                },
                {
                  label: "",
                  render: (s) =>
                    writable && s.status === "active" ? (
                      <ConfirmButton
                        label="Terminate"
                        title={`Terminate session ${s.session_id}`}
                        danger
                        body={<p>The next request with this username gets a new exit IP.</p>}
                        confirmLabel="Terminate"
                        run={() => client.delete(SESSION[product], { params: { path: { id: s.id } } })}
                        onDone={sessions.reload}
                      />
                    ) : null,
                },
              ]}
            />
            <Pager paging={sessions.paging} noun="sessions" />
          </>
        )}
      </Show>
    </Page>
  );
}
