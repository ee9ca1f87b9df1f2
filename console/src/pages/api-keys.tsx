import * as format from "../format";
import { type Area, api, can, type Schemas, session } from "../session";
import {
  ConfirmButton,
  DialogButton,
  type Field,
  Form,
  mfaHeaders,
  Page,
  Secret,
  Show,
  Table,
  useLoad,
  type Values,
} from "../ui";

const AREAS: Area[] = ["account", "billing", "subusers", "isp", "traffic", "reports", "webhooks", "api_keys"];
const NONE = "none";

/** The scopes editor: one select per area, none / read / write, never above the signed-in key's own access. */
function scopeFields(key?: Schemas["ApiKey"]): Field[] {
  const own = session().key.scopes;
  return AREAS.map((area) => ({
    name: `scope_${area}`,
    label: `${area.replace("_", " ")} access`,
    type: "select",
    options: [NONE, ...(own[area] ? ["read"] : []), ...(own[area] === "write" ? ["write"] : [])],
    value: key ? (key.scopes[area] ?? NONE) : NONE,
  }));
}

function changes(values: Values): Schemas["ApiKeyChanges"] {
  const scopes = Object.fromEntries(
    AREAS.flatMap((area) => (values[`scope_${area}`] === NONE ? [] : [[area, values[`scope_${area}`]]])),
  ) as Schemas["ApiKeyScopes"];
  const expires = values.expires_at as string;
  return {
    name: (values.name as string) || null,
    scopes,
    expires_at: expires ? new Date(`${expires}T00:00:00Z`).toISOString() : null,
  };
}

const common = (key?: Schemas["ApiKey"]): Field[] => [
  { name: "name", label: "Name", value: key?.name ?? "" },
  {
    name: "expires_at",
    label: "Expires (UTC date, optional)",
    type: "date",
    value: key?.expires_at?.slice(0, 10) ?? "",
  },
  ...scopeFields(key),
];

export function ApiKeysPage() {
  const keys = useLoad(() => api().get("/api-keys", { params: { query: { limit: 100 } } }), []);
  const writable = can("api_keys", "write");
  const self = session().key.id;
  return (
    <Page
      title="API keys"
      actions={
        writable ? (
          <ConfirmButton
            label="New key"
            title="New API key"
            body={<p>A key never gets more than the key you are signed in with. Its token is shown once.</p>}
            confirmLabel="Create key"
            mfa
            fields={common()}
            run={(values, code) => api().post("/api-keys", { body: changes(values), headers: mfaHeaders(code) })}
            result={(created) => <Secret label="Token" value={created.token} note="Only a hash is kept." />}
            onDone={keys.reload}
          />
        ) : null
      }
    >
      <Show state={keys} empty={(page) => page.data.length === 0} emptyText="No keys.">
        {(page) => (
          <Table
            caption="API keys"
            rows={page.data}
            rowKey={(key) => key.id}
            columns={[
              {
                label: "Key",
                render: (k) => (
                  <>
                    <code>{k.token_hint}…</code> {k.name ?? ""}
                    {k.id === self ? " (this one)" : ""}
                  </>
                ),
              },
              {
                label: "Scopes",
                render: (k) =>
                  AREAS.filter((area) => k.scopes[area])
                    .map((area) => `${area}:${k.scopes[area]}`)
                    .join(" "),
              },
              { label: "Products", render: (k) => k.products?.join(", ") ?? "all" },
              { label: "Expires", render: (k) => format.time(k.expires_at) },
              {
                label: "Last used",
                render: (k) =>
                  k.last_used_at ? `${format.time(k.last_used_at)} from ${k.last_used_ip ?? "?"}` : "never",
              },
              {
                label: "",
                render: (k) =>
                  writable ? (
                    <div class="row-actions">
                      <DialogButton label="Edit" tone="small" title={`Edit ${k.token_hint}…`}>
                        {(close) => (
                          <Form
                            submitLabel="Save"
                            mfa
                            fields={common(k)}
                            submit={(values, code) =>
                              api().patch("/api-keys/{id}", {
                                params: { path: { id: k.id } },
                                body: changes(values),
                                headers: mfaHeaders(code),
                              })
                            }
                            onDone={() => {
                              close();
                              keys.reload();
                            }}
                          />
                        )}
                      </DialogButton>
                      <ConfirmButton
                        label="Rotate"
                        title={`Rotate ${k.token_hint}…`}
                        body={<p>A new token; the old one keeps working for the grace period.</p>}
                        confirmLabel="Rotate"
                        mfa
                        fields={[
                          {
                            name: "grace",
                            label: "Grace (seconds)",
                            type: "number",
                            value: "3600",
                            min: 0,
                            max: 604800,
                          },
                        ]}
                        run={(values, code) =>
                          api().post("/api-keys/{id}/rotate", {
                            params: { path: { id: k.id } },
                            body: { grace_seconds: Number(values.grace) },
                            headers: mfaHeaders(code),
                          })
                        }
                        result={(rotated) => (
                          <Secret
                            label="New token"
                            value={rotated.token}
                            note={
                              rotated.previous_token_expires_at
                                ? `The old one works until ${format.time(rotated.previous_token_expires_at)}.`
                                : ""
                            }
                          />
                        )}
                        onDone={keys.reload}
                      />
                      <ConfirmButton
                        label="Revoke"
                        title={`Revoke ${k.token_hint}…`}
                        danger
                        mfa
                        body={
                          <p>
                            The key stops working at once.
                            {k.id === self ? " It is the key you are signed in with." : ""}
                          </p>
                        }
                        confirmLabel="Revoke"
                        run={(_values, code) =>
                          api().delete("/api-keys/{id}", { params: { path: { id: k.id } }, headers: mfaHeaders(code) })
                        }
                        onDone={keys.reload}
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
