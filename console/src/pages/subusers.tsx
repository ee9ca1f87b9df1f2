import { useState } from "preact/hooks";
import * as format from "../format";
import { href, navigate } from "../router";
import { api, can, productsOf, type Schemas, shownPasswords } from "../session";
import { DialogButton, type Field, Form, Page, Pill, Secret, Show, Table, useLoad, type Values } from "../ui";

export function limitFields(subuser?: Schemas["Subuser"]): Field[] {
  return [
    {
      name: "concurrent_max",
      label: "Concurrent connections",
      type: "number",
      min: 1,
      max: 10000,
      value: String(subuser?.concurrent_max ?? ""),
      hint: "1-10,000, within the plan's limit. Empty: the plan's limit.",
    },
    {
      name: "rps_max",
      label: "Requests per second",
      type: "number",
      min: 1,
      max: 10000,
      value: String(subuser?.rps_max ?? ""),
      hint: "1-10,000. Empty: the plan's limit.",
    },
    {
      name: "traffic_limit_gb",
      label: "Monthly traffic cap (GB)",
      type: "number",
      min: 0.001,
      step: "any",
      value: subuser?.traffic_limit_gb == null ? "" : String(subuser.traffic_limit_gb),
      hint: "Empty: no cap.",
    },
  ];
}

export function limitValues(values: Values, editing: boolean) {
  const number = (name: string) => (values[name] === "" ? undefined : Number(values[name]));
  const cap = values.traffic_limit_gb === "" ? (editing ? null : undefined) : Number(values.traffic_limit_gb);
  return {
    ...(number("concurrent_max") === undefined ? {} : { concurrent_max: number("concurrent_max") }),
    ...(number("rps_max") === undefined ? {} : { rps_max: number("rps_max") }),
    ...(cap === undefined ? {} : { traffic_limit_gb: cap }),
  };
}

export function SubusersPage() {
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState("");
  const list = useLoad(
    () =>
      api().get("/subusers", {
        params: {
          query: {
            limit: 100,
            ...(search.trim() ? { label_contains: search.trim().toLowerCase() } : {}),
            ...(status ? { status: status as "active" | "disabled" } : {}),
          },
        },
      }),
    [search, status],
  );
  const [created, setCreated] = useState<Schemas["SubuserWithPassword"] | null>(null);
  return (
    <Page
      title="Sub-users"
      actions={
        can("subusers", "write") ? (
          <DialogButton label="New sub-user" tone="primary">
            {(close) =>
              created ? (
                <>
                  <p>
                    <strong>{created.label}</strong> is ready: gateway name <code>{created.name}</code>.
                  </p>
                  <Secret label="Password" value={created.password} note="Only a hash is kept." />
                  <div class="form-actions">
                    <button
                      type="button"
                      class="primary"
                      onClick={() => {
                        close();
                        setCreated(null);
                        navigate("subusers", created.id);
                      }}
                    >
                      Open {created.label}
                    </button>
                  </div>
                </>
              ) : (
                <Form
                  submitLabel="Create"
                  fields={[
                    {
                      name: "label",
                      label: "Label",
                      required: true,
                      pattern: "[a-z0-9-]{1,64}",
                      hint: "1-64 characters of a-z, 0-9 and -; unique in the account.",
                    },
                    {
                      name: "products",
                      label: "Products (fixed after creation)",
                      type: "checkboxes",
                      options: productsOf(["residential", "mobile", "isp"] as const),
                      value: ["residential"],
                    },
                    ...limitFields(),
                  ]}
                  submit={(values) =>
                    api().post("/subusers", {
                      body: {
                        label: values.label as string,
                        products: values.products as Schemas["SubuserCreate"]["products"],
                        ...limitValues(values, false),
                      },
                    })
                  }
                  onDone={(answer) => {
                    shownPasswords.set(answer.id, answer.password);
                    setCreated(answer);
                    list.reload();
                  }}
                />
              )
            }
          </DialogButton>
        ) : null
      }
    >
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <label>
          Search labels
          <input
            type="search"
            value={search}
            placeholder="label contains…"
            onInput={(event) => setSearch(event.currentTarget.value)}
          />
        </label>
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
            <option value="">Any</option>
            <option value="active">Active</option>
            <option value="disabled">Disabled</option>
          </select>
        </label>
      </form>
      <Show
        state={list}
        empty={(page) => page.data.length === 0}
        emptyText={search ? "No sub-user matches." : "No sub-users yet: create one to use the gateway."}
      >
        {(page) => (
          <Table
            caption="Sub-users"
            rows={page.data}
            rowKey={(subuser) => subuser.id}
            columns={[
              { label: "Label", render: (s) => <a href={href("subusers", s.id)}>{s.label}</a> },
              { label: "Gateway name", render: (s) => <code>{s.name}</code> },
              { label: "Products", render: (s) => s.products.join(", ") },
              {
                label: "Status",
                render: (s) => <Pill tone={s.status === "active" ? "good" : "warn"}>{s.status}</Pill>,
              },
              {
                label: "Limits",
                render: (s) => `${format.count(s.concurrent_max)} conn · ${format.count(s.rps_max)} rps`,
              },
              {
                label: "This month",
                numeric: true,
                render: (s) =>
                  s.traffic_limit_gb === null
                    ? format.gb(s.traffic_used_gb)
                    : `${format.gb(s.traffic_used_gb)} of ${format.gb(s.traffic_limit_gb)}`,
              },
            ]}
          />
        )}
      </Show>
    </Page>
  );
}
