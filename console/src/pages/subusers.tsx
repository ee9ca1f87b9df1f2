import { useState } from "preact/hooks";
import { products as allProducts } from "../../../src/vocabulary";
import type { Schemas } from "../api";
import { Secret } from "../components/copy";
import { DialogButton } from "../components/dialog";
import * as field from "../components/fields";
import { Form } from "../components/form";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Choice } from "../components/select";
import { Show } from "../components/show";
import { rememberLabels } from "../components/subuser-picker";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import { href, navigate, type PageEntry } from "../router";
import { useSession } from "../session";
import { limitChanges, limitFields } from "../subuser-limits";

export const subusersPage: PageEntry = { label: "Sub-users", area: "subusers", component: SubusersPage };

const STATUSES = [
  { value: "", label: "Any" },
  { value: "active", label: "Active" },
  { value: "disabled", label: "Disabled" },
] as const;

type Status = (typeof STATUSES)[number]["value"];

function SubusersPage() {
  const session = useSession();
  const { client, can, productsOf, shownPasswords } = session;
  const list = usePagedList({ label: "", status: "" as Status }, async ({ label, status }, page) => {
    const answer = await client.get("/subusers", {
      params: {
        query: {
          ...page,
          ...(label.trim() ? { label_contains: label.trim().toLowerCase() } : {}),
          ...(status ? { status } : {}),
        },
      },
    });
    rememberLabels(session, answer.data);
    return answer;
  });
  const { label: search, status } = list.filters;
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
                  fields={{
                    label: field.text("Label", {
                      required: true,
                      pattern: "[a-z0-9-]{1,64}",
                      hint: "1-64 characters of a-z, 0-9 and -; unique in the account.",
                    }),
                    products: field.checkboxes("Products (fixed after creation)", productsOf(allProducts), {
                      value: ["residential"],
                    }),
                    ...limitFields(),
                  }}
                  submit={({ label, products, ...limits }) =>
                    client.post("/subusers", { body: { label, products, ...limitChanges(limits) } })
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
            onInput={(event) => list.filter({ label: event.currentTarget.value })}
          />
        </label>
        <Choice
          label="Status"
          value={status}
          options={STATUSES}
          onChange={(chosen) => list.filter({ status: chosen })}
        />
      </form>
      <Show
        state={list}
        empty={(page) => page.data.length === 0}
        emptyText={search ? "No sub-user matches." : "No sub-users yet: create one to use the gateway."}
      >
        {(page) => (
          <>
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
            <Pager paging={list.paging} noun="sub-users" />
          </>
        )}
      </Show>
    </Page>
  );
}
