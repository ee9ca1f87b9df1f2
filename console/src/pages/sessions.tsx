import { useState } from "preact/hooks";
import * as format from "../format";
import { href } from "../router";
import { api, can, productsOf, session } from "../session";
import { Choice, ConfirmButton, Page, Pill, Show, Table, useLoad } from "../ui";

type GatewayProduct = "residential" | "mobile";

export function SessionsPage() {
  const products = productsOf(["residential", "mobile"] as const);
  const [product, setProduct] = useState<GatewayProduct>(products[0] ?? "residential");
  const sessions = useLoad(
    () => api().get(`/${product}/sessions` as "/residential/sessions", { params: { query: { limit: 100 } } }),
    [product],
  );
  const subusers = useLoad(() => api().get("/subusers", { params: { query: { limit: 100 } } }), []);
  const writable = can("traffic", "write");
  return (
    <Page
      title="Sessions"
      actions={
        <>
          <button type="button" class="small" onClick={sessions.reload}>
            Refresh
          </button>
          {session().sandbox && writable && subusers.data?.data.length ? (
            <ConfirmButton
              label="Start test session"
              title="Start a sticky session (sandbox)"
              body={<p>A sticky session as the gateway would open it, to try termination with.</p>}
              confirmLabel="Start"
              fields={[
                {
                  name: "subuser",
                  label: "Sub-user",
                  type: "select",
                  options: subusers.data.data
                    .filter((s) => s.products.includes(product))
                    .map((s) => ({ value: s.id, label: s.label })),
                },
                { name: "session_id", label: "Session id", value: "console1", pattern: "[a-z0-9]{1,32}" },
                { name: "region", label: "Country", value: "us" },
              ]}
              run={(values) =>
                api().post("/test-helpers/sessions", {
                  body: {
                    subuser: values.subuser as string,
                    product,
                    session_id: values.session_id as string,
                    region: values.region as string,
                    sesstime: 10,
                    requests: 1,
                    bytes_per_request: 2000,
                  },
                })
              }
              onDone={sessions.reload}
            />
          ) : null}
        </>
      }
    >
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <Choice label="Product" value={product} options={products} onChange={setProduct} />
      </form>
      <Show
        state={sessions}
        empty={(page) => page.data.length === 0}
        emptyText="No sticky sessions: they start with a session segment in the username."
      >
        {(page) => (
          <Table
            caption="Sticky sessions"
            rows={page.data}
            rowKey={(one) => one.id}
            columns={[
              { label: "Session", render: (s) => <code>{s.session_id}</code> },
              {
                label: "Sub-user",
                render: (s) => (
                  <a href={href("subusers", s.subuser)}>
                    {subusers.data?.data.find((one) => one.id === s.subuser)?.label ?? s.subuser}
                  </a>
                ),
              },
              { label: "Geo", render: (s) => [s.region, s.state, s.city].filter(Boolean).join("/") },
              { label: "Exit IP", render: (s) => s.exit_ip ?? "—" },
              {
                label: "Use",
                render: (s) => `${format.bytes(s.bytes_used)} · ${format.count(s.requests)} req`,
                numeric: true,
              },
              { label: "Expires", render: (s) => format.relative(s.expires_at) },
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
                      run={() =>
                        api().delete(`/${product}/sessions/{id}` as "/residential/sessions/{id}", {
                          params: { path: { id: s.id } },
                        })
                      }
                      onDone={sessions.reload}
                    />
                  ) : null,
              },
            ]}
          />
        )}
      </Show>
    </Page>
  );
}
