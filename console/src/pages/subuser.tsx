import type { GatewayProduct, Product, Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { Secret } from "../components/copy";
import { DialogButton } from "../components/dialog";
import * as field from "../components/fields";
import { Form } from "../components/form";
import { Page, Section } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { ProxyGenerator } from "../components/proxy-generator";
import { Show } from "../components/show";
import { Table } from "../components/table";
import { TargetRules } from "../components/target-rules";
import { TimeChart } from "../components/time-chart";
import { ActiveTrafficSpikes } from "../components/traffic-spikes";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import { usePagedList } from "../hooks/use-paged";
import { isNonEmpty } from "../lib/non-empty";
import { navigate, type PageEntry, type Route } from "../router";
import { useSession } from "../session";
import { limitChanges, limitFields } from "../subuser-limits";
import { lastHours, trafficSeries, trafficSource } from "../traffic-data";

/** A sub-user's own page, at `#/subusers/<id>`: not in the menu, reached from the sub-users' list. */
export const subuserPage: PageEntry = { label: "Sub-user", area: "subusers", component: SubuserPage };

const STATUSES = ["active", "disabled"] as const;
const SPIKE_SENSITIVITIES = ["off", "low", "medium", "high"] as const;
const SPIKE_ACTIONS = ["none", "disable", "cap"] as const;

function SubuserPage(props: { route: Route }) {
  const { client } = useSession();
  const id = props.route.id!;
  const subuser = useLoad(() => client.get("/subusers/{id}", { params: { path: { id } } }), [id]);
  return (
    <Show state={subuser}>
      {(one) => {
        const gatewayProducts = one.products.filter(servedByGateway);
        return (
          <Page title={one.label} actions={<SubuserActions subuser={one} reload={subuser.reload} />}>
            <ActiveTrafficSpikes subuser={one.id} onAcknowledged={subuser.reload} />
            <Facts subuser={one} />
            {isNonEmpty(gatewayProducts) ? <ProxyGenerator subuser={one} products={gatewayProducts} /> : null}
            <Usage subuser={one} />
            <TargetRules subuser={one} onSaved={subuser.reload} />
            <div class="grid two">
              <Sources subuser={one} />
              <Whitelist subuser={one} />
            </div>
          </Page>
        );
      }}
    </Show>
  );
}

function servedByGateway(product: Product): product is GatewayProduct {
  return product !== "isp";
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
        <dt>Today (UTC)</dt>
        <dd>
          {format.gb(subuser.traffic_used_today_gb)}
          {subuser.daily_limit_gb === null ? " (no daily cap)" : ` of ${format.gb(subuser.daily_limit_gb)} a day (UTC)`}
        </dd>
        <dt>Lifetime</dt>
        <dd>
          {format.gb(subuser.traffic_used_lifetime_gb)}
          {subuser.lifetime_limit_gb === null
            ? " (no lifetime cap)"
            : ` of ${format.gb(subuser.lifetime_limit_gb)} in all`}
        </dd>
        <dt>Expires</dt>
        <dd>
          {subuser.expires_at === null ? "never" : format.time(subuser.expires_at)}
          {subuser.expires_at !== null && Date.parse(subuser.expires_at) <= Date.now() ? (
            <>
              {" "}
              <Pill tone="warn">expired</Pill>
            </>
          ) : null}
        </dd>
        <dt>Spike alerts</dt>
        <dd>
          {subuser.spike_sensitivity}
          {subuser.spike_action === "none" ? "" : ` · on a spike: ${subuser.spike_action}`}
        </dd>
        <dt>Created</dt>
        <dd>{format.time(subuser.created_at)}</dd>
      </dl>
    </Section>
  );
}

function SubuserActions({ subuser, reload }: { subuser: Schemas["Subuser"]; reload: () => void }) {
  const session = useSession();
  const { sandbox, client, can } = session;
  const { products } = subuser;
  if (!can("subusers", "write") && !(sandbox && can("traffic", "write"))) return null;
  const path = { params: { path: { id: subuser.id } } };
  return (
    <>
      {sandbox && can("traffic", "write") && isNonEmpty(products) ? (
        <ConfirmButton
          label="Generate test traffic"
          title="Generate test traffic (sandbox)"
          body={<p>Requests reported as the gateway would: within seconds they show in traffic and the request log.</p>}
          confirmLabel="Generate"
          fields={{
            requests: field.number("Requests", { value: "200", min: 1, max: 10000 }),
            product: field.select("Product", products),
            error_rate: field.number("Share of failed requests (0-1)", { value: "0.05", min: 0, max: 1, step: "any" }),
          }}
          run={(values) =>
            client.post("/test-helpers/traffic", {
              body: {
                subuser: subuser.id,
                product: values.product,
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
                fields={{
                  label: field.text("Label", { value: subuser.label, required: true, pattern: "[a-z0-9-]{1,64}" }),
                  status: field.select("Status", STATUSES, {
                    value: subuser.status,
                    hint: "Disabled: every gateway request gets 403 at once.",
                  }),
                  ...limitFields(subuser),
                  alert_on_new_source: field.checkbox("Event when traffic comes from a new client block", {
                    value: subuser.alert_on_new_source,
                  }),
                  spike_sensitivity: field.select("Spike alerts", SPIKE_SENSITIVITIES, {
                    value: subuser.spike_sensitivity,
                    hint: "Against its own usual traffic at this hour of the week; high alerts soonest.",
                  }),
                  spike_action: field.select("On a spike", SPIKE_ACTIONS, {
                    value: subuser.spike_action,
                    hint: "Disable, or cap at its usual rate, until someone acknowledges the spike.",
                  }),
                }}
                submit={({ label, status, alert_on_new_source, spike_sensitivity, spike_action, ...limits }) =>
                  client.patch("/subusers/{id}", {
                    ...path,
                    body: {
                      label,
                      status,
                      alert_on_new_source,
                      spike_sensitivity,
                      spike_action,
                      ...limitChanges(limits, subuser),
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
            run={() => client.post("/subusers/{id}/rotate-password", path)}
            result={(answer) => {
              session.shownPasswords.set(subuser.id, answer.password);
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
            run={() => client.delete("/subusers/{id}", path)}
            onDone={() => navigate("subusers")}
          />
        </>
      ) : null}
    </>
  );
}

function Usage({ subuser }: { subuser: Schemas["Subuser"] }) {
  const { client } = useSession();
  const product = subuser.products[0]!;
  const usage = useLoad(
    () => trafficSeries(trafficSource(client, product, subuser.id), lastHours(7 * 24), "total"),
    [subuser.id],
  );
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
  const { client } = useSession();
  const sources = usePagedList(
    {},
    (_filters, page) => client.get("/subusers/{id}/sources", { params: { path: { id: subuser.id }, query: page } }),
    { prefix: "sources_" },
  );
  return (
    <Section title="Client sources (30 days)">
      <Show state={sources} empty={(page) => page.data.length === 0} emptyText="No traffic from any client yet.">
        {(page) => (
          <>
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
            <Pager paging={sources.paging} noun="sources" />
          </>
        )}
      </Show>
    </Section>
  );
}

function Whitelist({ subuser }: { subuser: Schemas["Subuser"] }) {
  const { client, can } = useSession();
  const { products } = subuser;
  const entries = usePagedList(
    {},
    (_filters, page) => client.get("/whitelists", { params: { query: { ...page, subuser: subuser.id } } }),
    { prefix: "whitelist_" },
  );
  const writable = can("subusers", "write");
  return (
    <Section
      title="Whitelist"
      actions={
        writable && isNonEmpty(products) ? (
          <DialogButton label="Add IP" tone="small">
            {(close) => (
              <Form
                submitLabel="Add"
                fields={{
                  ip: field.text("IP or CIDR", { required: true, hint: "IPv4, IPv4 /24-/32, IPv6 or IPv6 up to /64." }),
                  product: field.select("Product", products),
                  label: field.text("Label"),
                }}
                submit={({ label, ...entry }) =>
                  client.post("/whitelists", { body: { ...entry, subuser: subuser.id, label: label || null } })
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
          <>
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
                        run={() => client.delete("/whitelists/{id}", { params: { path: { id: entry.id } } })}
                        onDone={entries.reload}
                      />
                    ) : null,
                },
              ]}
            />
            <Pager paging={entries.paging} noun="whitelisted IPs" />
          </>
        )}
      </Show>
    </Section>
  );
}
