import { useState } from "preact/hooks";
import { TimeChart } from "../chart";
import * as format from "../format";
import { curlLine, gatewayUsername, type ProxyTarget, proxyLine, targetProblem } from "../proxy-string";
import { navigate, type Route } from "../router";
import { api, can, type Schemas, session, shownPasswords } from "../session";
import { lastHours, trafficSeries } from "../traffic-data";
import {
  ConfirmButton,
  Copyable,
  DialogButton,
  ErrorNote,
  Form,
  Page,
  Pill,
  Secret,
  Section,
  Show,
  Table,
  useLoad,
} from "../ui";
import { limitFields, limitValues } from "./subusers";

export function SubuserPage(props: { route: Route }) {
  const id = props.route.id!;
  const subuser = useLoad(() => api().get("/subusers/{id}", { params: { path: { id } } }), [id]);
  return (
    <Show state={subuser}>
      {(one) => (
        <Page title={one.label} actions={<SubuserActions subuser={one} reload={subuser.reload} />}>
          <Facts subuser={one} />
          {one.products.some((product) => product !== "isp") ? <Generator subuser={one} /> : null}
          <Usage subuser={one} />
          <div class="grid two">
            <Sources subuser={one} />
            <Whitelist subuser={one} />
          </div>
        </Page>
      )}
    </Show>
  );
}

function Facts({ subuser }: { subuser: Schemas["Subuser"] }) {
  return (
    <Section title="Details">
      <dl class="facts">
        <dt>Gateway name</dt>
        <dd>
          <code>{subuser.name}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <Pill tone={subuser.status === "active" ? "good" : "warn"}>{subuser.status}</Pill>
        </dd>
        <dt>Products</dt>
        <dd>{subuser.products.join(", ")}</dd>
        <dt>Limits</dt>
        <dd>
          {format.count(subuser.concurrent_max)} concurrent · {format.count(subuser.rps_max)} requests/s
        </dd>
        <dt>This month</dt>
        <dd>
          {format.gb(subuser.traffic_used_gb)}
          {subuser.traffic_limit_gb === null ? " (no cap)" : ` of ${format.gb(subuser.traffic_limit_gb)} cap`}
        </dd>
        <dt>Created</dt>
        <dd>{format.time(subuser.created_at)}</dd>
      </dl>
    </Section>
  );
}

function SubuserActions({ subuser, reload }: { subuser: Schemas["Subuser"]; reload: () => void }) {
  const { sandbox } = session();
  if (!can("subusers", "write") && !(sandbox && can("traffic", "write"))) return null;
  const path = { params: { path: { id: subuser.id } } };
  return (
    <>
      {sandbox && can("traffic", "write") ? (
        <ConfirmButton
          label="Generate test traffic"
          title="Generate test traffic (sandbox)"
          body={<p>Requests reported as the gateway would: within seconds they show in traffic and the request log.</p>}
          confirmLabel="Generate"
          fields={[
            { name: "requests", label: "Requests", type: "number", value: "200", min: 1, max: 10000 },
            { name: "product", label: "Product", type: "select", options: subuser.products },
            {
              name: "error_rate",
              label: "Share of failed requests (0-1)",
              type: "number",
              value: "0.05",
              min: 0,
              max: 1,
              step: "any",
            },
          ]}
          run={(values) =>
            api().post("/test-helpers/traffic", {
              body: {
                subuser: subuser.id,
                product: values.product as "residential",
                requests: Number(values.requests),
                error_rate: Number(values.error_rate),
                regions: ["us", "de", "gb"],
              },
            })
          }
          result={(answer) => (
            <p role="status">
              {format.count(answer.accepted)} requests ({format.bytes(answer.bytes)}) accepted; they show within
              seconds.
            </p>
          )}
          onDone={reload}
        />
      ) : null}
      {can("subusers", "write") ? (
        <>
          <DialogButton label="Edit" title={`Edit ${subuser.label}`} tone="small">
            {(close) => (
              <Form
                submitLabel="Save"
                fields={[
                  { name: "label", label: "Label", value: subuser.label, required: true, pattern: "[a-z0-9-]{1,64}" },
                  {
                    name: "status",
                    label: "Status",
                    type: "select",
                    options: ["active", "disabled"],
                    value: subuser.status,
                    hint: "Disabled: every gateway request gets 403 at once.",
                  },
                  ...limitFields(subuser),
                  {
                    name: "alert_on_new_source",
                    label: "Event when traffic comes from a new client block",
                    type: "checkbox",
                    value: subuser.alert_on_new_source,
                  },
                ]}
                submit={(values) =>
                  api().patch("/subusers/{id}", {
                    ...path,
                    body: {
                      label: values.label as string,
                      status: values.status as "active" | "disabled",
                      alert_on_new_source: values.alert_on_new_source as boolean,
                      ...limitValues(values, true),
                    },
                  })
                }
                onDone={() => {
                  close();
                  reload();
                }}
              />
            )}
          </DialogButton>
          <ConfirmButton
            label="Rotate password"
            title="Rotate the password"
            body={<p>A new password; the old one keeps working for 60 seconds, then the gateway answers 407.</p>}
            confirmLabel="Rotate"
            run={() => api().post("/subusers/{id}/rotate-password", path)}
            result={(answer) => {
              shownPasswords.set(subuser.id, answer.password);
              return (
                <Secret
                  label="New password"
                  value={answer.password}
                  note={`The old one works until ${format.time(answer.previous_password_expires_at)}.`}
                />
              );
            }}
            onDone={reload}
          />
          <ConfirmButton
            label="Delete"
            title={`Delete ${subuser.label}`}
            danger
            body={<p>Irreversible. Requests in flight may take up to 60 seconds to drain.</p>}
            confirmLabel="Delete sub-user"
            run={() => api().delete("/subusers/{id}", path)}
            onDone={() => navigate("subusers")}
          />
        </>
      ) : null}
    </>
  );
}

/** The proxy-string generator: country, state, city, ASN, session → the username, `host:port:user:pass`, curl. */
function Generator({ subuser }: { subuser: Schemas["Subuser"] }) {
  const { gateway } = session();
  const gatewayProducts = subuser.products.filter((product): product is "residential" | "mobile" => product !== "isp");
  const [target, setTarget] = useState<ProxyTarget>({
    product: gatewayProducts[0]!,
    country: "us",
    state: "",
    city: "",
    asn: "",
    session: "",
    sesstime: "10",
  });
  const [password, setPassword] = useState(shownPasswords.get(subuser.id) ?? "");
  const set = (field: keyof ProxyTarget) => (event: Event) =>
    setTarget({ ...target, [field]: (event.currentTarget as HTMLInputElement).value });
  const problem = targetProblem(target, gateway);
  const username = problem ? null : gatewayUsername(subuser.name, target, gateway.username_prefix);
  const pass = password || "PASSWORD";
  return (
    <Section title="Proxy string">
      <form class="generator" onSubmit={(event) => event.preventDefault()}>
        <label>
          Product
          <select value={target.product} onChange={set("product")}>
            {gatewayProducts.map((product) => (
              <option key={product}>{product}</option>
            ))}
          </select>
        </label>
        <label>
          Country
          <input value={target.country} onInput={set("country")} maxLength={2} placeholder="us" />
        </label>
        <label>
          State
          <input value={target.state} onInput={set("state")} maxLength={3} placeholder="ca (optional)" />
        </label>
        <label>
          City
          <input value={target.city} onInput={set("city")} maxLength={40} placeholder="losangeles (optional)" />
        </label>
        <label>
          ASN
          <input value={target.asn} onInput={set("asn")} inputMode="numeric" placeholder="optional" />
        </label>
        <label>
          Session
          <input value={target.session} onInput={set("session")} maxLength={32} placeholder="sticky id (optional)" />
        </label>
        <label>
          Session time (min)
          <input value={target.sesstime} onInput={set("sesstime")} inputMode="numeric" disabled={!target.session} />
        </label>
        <label>
          Password
          <input
            type="password"
            value={password}
            autoComplete="off"
            placeholder="shown at creation or rotation"
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
      </form>
      {username ? (
        <div class="strings" data-testid="proxy-strings">
          <Copyable label="Username" value={username} />
          <Copyable label="host:port:user:pass" value={proxyLine(gateway, username, pass)} />
          <Copyable label="curl" value={curlLine(gateway, username, pass)} />
          <p class="muted">
            {target.session
              ? `Sticky: the same exit IP for ${target.sesstime} minutes from the first request.`
              : "Rotating: every new connection gets a new exit IP."}
            {session().sandbox ? " Sandbox sub-users are not served by the gateway: test the string here instead." : ""}
          </p>
          {password && can("subusers", "write") ? <ProxyTest username={username} password={password} /> : null}
        </div>
      ) : (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </Section>
  );
}

/** One request through the gateway with the generated string (the API's proxy test; in the sandbox, simulated). */
function ProxyTest(props: { username: string; password: string }) {
  const [result, setResult] = useState<Schemas["ProxyTestResult"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setResult(
        await api().post("/tools/proxy-test", {
          body: { username: props.username, password: props.password, protocol: "http" },
        }),
      );
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="proxy-test">
      <button type="button" class="small" disabled={busy} aria-busy={busy} onClick={() => void run()}>
        {busy ? "Testing…" : "Test this string"}
      </button>
      {result ? (
        <p role="status" data-testid="proxy-test">
          {result.auth_ok ? (
            <Pill tone="good">accepted</Pill>
          ) : (
            <Pill tone="bad">{result.error_code ?? "refused"}</Pill>
          )}{" "}
          {result.exit_ip ? `exit ${result.exit_ip}` : ""}
          {result.status !== null ? ` · HTTP ${result.status}` : ""}
        </p>
      ) : null}
      {error ? <ErrorNote error={error} /> : null}
    </div>
  );
}

function Usage({ subuser }: { subuser: Schemas["Subuser"] }) {
  const product = subuser.products[0]!;
  const usage = useLoad(() => trafficSeries(product, lastHours(7 * 24), "total", (id) => id, subuser.id), [subuser.id]);
  return (
    <Section title={`Usage, last 7 days (${product})`}>
      <Show
        state={usage}
        empty={(data) => data.series[0]!.requests.every((value) => value === 0)}
        emptyText="No traffic in the last 7 days."
      >
        {(data) => (
          <div class="charts">
            <TimeChart
              title="Bytes in and out"
              x={data.x}
              series={[
                { label: "In", values: data.series[0]!.bytesIn },
                { label: "Out", values: data.series[0]!.bytesOut },
              ]}
              format={format.bytes}
            />
            <TimeChart
              title="Requests"
              x={data.x}
              series={[{ label: "Requests", values: data.series[0]!.requests }]}
              format={format.count}
            />
          </div>
        )}
      </Show>
    </Section>
  );
}

function Sources({ subuser }: { subuser: Schemas["Subuser"] }) {
  const sources = useLoad(
    () => api().get("/subusers/{id}/sources", { params: { path: { id: subuser.id }, query: { limit: 20 } } }),
    [subuser.id],
  );
  return (
    <Section title="Client sources (30 days)">
      <Show state={sources} empty={(page) => page.data.length === 0} emptyText="No traffic from any client yet.">
        {(page) => (
          <Table
            caption="Client sources"
            rows={page.data}
            rowKey={(source) => source.block}
            columns={[
              { label: "Block", render: (source) => <code>{source.block}</code> },
              { label: "Last seen", render: (source) => format.time(source.last_seen) },
              { label: "Requests", render: (source) => format.count(source.requests), numeric: true },
              { label: "Bytes", render: (source) => format.bytes(source.bytes), numeric: true },
            ]}
          />
        )}
      </Show>
    </Section>
  );
}

function Whitelist({ subuser }: { subuser: Schemas["Subuser"] }) {
  const entries = useLoad(
    () => api().get("/whitelists", { params: { query: { subuser: subuser.id, limit: 100 } } }),
    [subuser.id],
  );
  const writable = can("subusers", "write");
  return (
    <Section
      title="Whitelist"
      actions={
        writable ? (
          <DialogButton label="Add IP" tone="small">
            {(close) => (
              <Form
                submitLabel="Add"
                fields={[
                  {
                    name: "ip",
                    label: "IP or CIDR",
                    required: true,
                    hint: "IPv4, IPv4 /24-/32, IPv6 or IPv6 up to /64.",
                  },
                  { name: "product", label: "Product", type: "select", options: subuser.products },
                  { name: "label", label: "Label" },
                ]}
                submit={(values) =>
                  api().post("/whitelists", {
                    body: {
                      subuser: subuser.id,
                      product: values.product as "residential",
                      ip: values.ip as string,
                      label: (values.label as string) || null,
                    },
                  })
                }
                onDone={() => {
                  close();
                  entries.reload();
                }}
              />
            )}
          </DialogButton>
        ) : null
      }
    >
      <Show
        state={entries}
        empty={(page) => page.data.length === 0}
        emptyText="No whitelisted IPs: the gateway asks for the password."
      >
        {(page) => (
          <Table
            caption="Whitelisted IPs"
            rows={page.data}
            rowKey={(entry) => entry.id}
            columns={[
              { label: "IP", render: (entry) => <code>{entry.ip}</code> },
              { label: "Product", render: (entry) => entry.product },
              { label: "Label", render: (entry) => entry.label ?? "—" },
              {
                label: "",
                render: (entry) =>
                  writable ? (
                    <ConfirmButton
                      label="Remove"
                      title={`Remove ${entry.ip}`}
                      danger
                      body={<p>Takes effect within 60 seconds.</p>}
                      confirmLabel="Remove"
                      run={() => api().delete("/whitelists/{id}", { params: { path: { id: entry.id } } })}
                      onDone={entries.reload}
                    />
                  ) : null,
              },
            ]}
          />
        )}
      </Show>
    </Section>
  );
}
