import type { Access } from "../access";
import { type Area, mfaHeaders, type Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { Secret } from "../components/copy";
import { DialogButton } from "../components/dialog";
import * as field from "../components/fields";
import { Form } from "../components/form";
import { Page } from "../components/layout";
import { Pager } from "../components/pager";
import { selectOf } from "../components/select";
import { Show } from "../components/show";
import { subuserPicker } from "../components/subuser-picker";
import { Table } from "../components/table";
import * as format from "../format";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const apiKeysPage: PageEntry = { label: "API keys", area: "api_keys", component: ApiKeysPage };

const AREAS: Area[] = ["account", "billing", "subusers", "isp", "traffic", "reports", "webhooks", "api_keys"];
const NONE = "none";
type Scopes = Schemas["ApiKeyScopes"];
type AccessLevel = NonNullable<Scopes[Area]>;

/** What the create and edit forms ask. */
interface KeyValues {
  name: string;
  /** A UTC date, or empty for a key that never expires. */
  expires_at: string;
  scopes: Scopes;
  /** The sub-users the key is bound to; none: not bound (or, by a bound signed-in key, bound as it is). */
  subuser_ids: string[];
}

function keyFields(own: Scopes, key?: Schemas["ApiKey"]): field.Fields<KeyValues> {
  return {
    name: field.text("Name", { value: key?.name ?? "" }),
    expires_at: field.text("Expires (UTC date, optional)", {
      type: "date",
      value: key?.expires_at?.slice(0, 10) ?? "",
    }),
    scopes: scopesField(own, key?.scopes ?? {}),
    subuser_ids: subuserPicker("Bound to sub-users (optional)", {
      value: key?.subuser_ids ?? [],
      hint: "A bound key sees and manages only these sub-users: none of the account's money or totals.",
    }),
  };
}

/** The scopes of an access (a member's role's), area by area. */
function scopesOf(can: Access["can"]): Scopes {
  const granted = AREAS.map((area) => [area, can(area, "write") ? "write" : can(area) ? "read" : undefined]);
  return Object.fromEntries(granted.filter(([, access]) => access !== undefined));
}

/** The scopes editor: one select per area, none / read / write, never above the signed-in key's own access. */
function scopesField(own: Scopes, initial: Scopes): field.Field<Scopes> {
  return {
    initial,
    render: ({ value, onChange }) =>
      AREAS.map((area) => {
        const choice = selectOf(value[area] ?? NONE, choicesUpTo(own[area]), (chosen) =>
          onChange(withAccess(value, area, chosen)),
        );
        return (
          <label key={area}>
            {`${area.replace("_", " ")} access`}
            <select name={`scope_${area}`} value={choice.value} onChange={choice.onChange}>
              {choice.options}
            </select>
          </label>
        );
      }),
  };
}

function choicesUpTo(own: AccessLevel | undefined): (AccessLevel | typeof NONE)[] {
  if (own === "write") return [NONE, "read", "write"];
  return own === "read" ? [NONE, "read"] : [NONE];
}

function withAccess(scopes: Scopes, area: Area, access: AccessLevel | typeof NONE): Scopes {
  const { [area]: _previous, ...others } = scopes;
  return access === NONE ? others : { ...others, [area]: access };
}

/** `ownBinding`: the signed-in key's; a bound key's keys stay bound, so no pick leaves the binding as it is. */
function changes(values: KeyValues, ownBinding: string[] | null): Schemas["ApiKeyChanges"] {
  const bound = values.subuser_ids.length > 0 ? values.subuser_ids : ownBinding === null ? null : undefined;
  return {
    name: values.name || null,
    scopes: values.scopes,
    ...(bound === undefined ? {} : { subuser_ids: bound }),
    expires_at: values.expires_at ? new Date(`${values.expires_at}T00:00:00Z`).toISOString() : null,
  };
}

function ApiKeysPage() {
  const { client, can, signer } = useSession();
  const keys = usePagedList({}, (_filters, page) => client.get("/api-keys", { params: { query: page } }));
  const writable = can("api_keys", "write");
  // A key makes keys within its own scopes and binding; a member within its role's scopes.
  const signedInKey = signer.kind === "key" ? signer.key : null;
  const own = signedInKey?.scopes ?? scopesOf(can);
  const self = signedInKey?.id ?? null;
  const ownBinding = signedInKey?.subuser_ids ?? null;
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
            fields={keyFields(own)}
            run={(values, code) =>
              client.post("/api-keys", { body: changes(values, ownBinding), headers: mfaHeaders(code) })
            }
            result={(created) => <Secret label="Token" value={created.token} note="Only a hash is kept." />}
            onDone={keys.reload}
          />
        ) : null
      }
    >
      <Show state={keys} empty={(page) => page.data.length === 0} emptyText="No keys.">
        {(page) => (
          <>
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
                { label: "Sub-users", render: (k) => <Binding ids={k.subuser_ids} /> },
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
                              fields={keyFields(own, k)}
                              submit={(values, code) =>
                                client.patch("/api-keys/{id}", {
                                  params: { path: { id: k.id } },
                                  body: changes(values, ownBinding),
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
                          fields={{ grace: field.number("Grace (seconds)", { value: "3600", min: 0, max: 604800 }) }}
                          run={(values, code) =>
                            client.post("/api-keys/{id}/rotate", {
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
                            client.delete("/api-keys/{id}", {
                              params: { path: { id: k.id } },
                              headers: mfaHeaders(code),
                            })
                          }
                          onDone={keys.reload}
                        />
                      </div>
                    ) : null,
                },
              ]}
            />
            <Pager paging={keys.paging} noun="keys" />
          </>
        )}
      </Show>
    </Page>
  );
}

/** A key's binding: "all" for an unbound key, else the sub-users it is bound to (the first few, then how many more). */
function Binding({ ids }: { ids: string[] | null }) {
  if (ids === null) return <>all</>;
  const shown = ids.slice(0, 3);
  return (
    <>
      {shown.map((id) => (
        <span key={id}>
          <code>{id}</code>{" "}
        </span>
      ))}
      {ids.length > shown.length ? ` +${ids.length - shown.length} more` : ""}
    </>
  );
}
