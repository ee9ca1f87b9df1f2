import { products as allProducts } from "../../../src/vocabulary";
import { Bar } from "../components/bar";
import { Page, Section } from "../components/layout";
import { Choice } from "../components/select";
import { Show } from "../components/show";
import { SubuserLink } from "../components/subuser-picker";
import { Table } from "../components/table";
import { TimeChart } from "../components/time-chart";
import * as format from "../format";
import { type Loaded, useLoad } from "../hooks/use-load";
import { oneOf } from "../lib/one-of";
import { type PageEntry, useView } from "../router";
import { useSession } from "../session";
import {
  failures,
  heaviest,
  lastHours,
  type Range,
  rowLabel,
  type Series,
  type Split,
  type TrafficRow,
  trafficSeries,
  trafficSource,
} from "../traffic-data";

export const trafficPage: PageEntry = { label: "Traffic", area: "traffic", component: TrafficPage };

const RANGES = [
  { value: "24h", label: "24 hours", hours: 24 },
  { value: "7d", label: "7 days", hours: 7 * 24 },
  { value: "30d", label: "30 days", hours: 30 * 24 },
  { value: "90d", label: "90 days", hours: 90 * 24 },
  { value: "custom", label: "Custom", hours: 0 },
];

const SPLITS = [
  { value: "total", label: "Nothing (total)" },
  { value: "subuser", label: "Sub-user" },
  { value: "domain", label: "Domain" },
] as const satisfies readonly { value: Split; label: string }[];
/** ISP traffic has no target domains to stack by. */
const ISP_SPLITS = SPLITS.filter((split) => split.value !== "domain");

const METRICS = [
  { title: "Bytes in", values: (series: Series) => series.bytesIn, format: format.bytes },
  { title: "Bytes out", values: (series: Series) => series.bytesOut, format: format.bytes },
  { title: "Requests", values: (series: Series) => series.requests, format: format.count },
];

function TrafficPage() {
  const { client, productsOf, subuserLabels } = useSession();
  const products = productsOf(allProducts);
  const [view, change] = useView({
    product: products[0] ?? "residential",
    range: "24h",
    from: "",
    to: "",
    split: "total",
  });
  const product = oneOf(view.product, products, "residential");
  const rangeName = view.range;
  const custom = { from: view.from, to: view.to };
  const split = oneOf(
    view.split,
    SPLITS.map((one) => one.value),
    "total",
  );
  const range = rangeOf(rangeName, custom);

  const source = trafficSource(client, product);
  // A row's own label (`labels=true` on sub-user rows), else one this session has seen, else the id.
  const labelOf = (row: TrafficRow) => rowLabel(row) ?? subuserLabels.get(row.subuser!) ?? row.subuser!;
  const chart = useLoad(
    () => (range ? trafficSeries(source, range, split, labelOf) : Promise.resolve(null)),
    [product, range?.from, range?.to, split],
  );
  const subusers = useLoad(
    () => (range ? heaviest(source, range, "subuser") : Promise.resolve([])),
    [product, range?.from, range?.to],
  );
  const domains = useLoad(
    () => (range ? heaviest(source, range, "domain") : Promise.resolve([])),
    [product, range?.from, range?.to],
  );
  const statuses = useLoad(
    () => (range ? failures(source, range, "status") : Promise.resolve([])),
    [product, range?.from, range?.to],
  );
  const codes = useLoad(
    () => (range ? failures(source, range, "error_code") : Promise.resolve([])),
    [product, range?.from, range?.to],
  );

  return (
    <Page title="Traffic">
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <Choice label="Product" value={product} options={products} onChange={(chosen) => change({ product: chosen })} />
        <fieldset class="segmented">
          <legend>Range</legend>
          {RANGES.map((one) => (
            <label key={one.value}>
              <input
                type="radio"
                name="range"
                value={one.value}
                checked={rangeName === one.value}
                onChange={() => change({ range: one.value })}
              />
              <span class="segment">{one.label}</span>
            </label>
          ))}
        </fieldset>
        {rangeName === "custom" ? (
          <>
            <label>
              From (UTC)
              <input type="date" value={custom.from} onInput={(e) => change({ from: e.currentTarget.value })} />
            </label>
            <label>
              To (UTC, exclusive)
              <input type="date" value={custom.to} onInput={(e) => change({ to: e.currentTarget.value })} />
            </label>
          </>
        ) : null}
        <Choice
          label="Stack by"
          value={split}
          options={product === "isp" ? ISP_SPLITS : SPLITS}
          onChange={(chosen) => change({ split: chosen })}
        />
      </form>
      {range ? null : <p class="muted">Pick both dates of the custom range.</p>}
      <Section title="Over time">
        <Show
          state={chart}
          empty={(data) => data?.series.every((one) => one.requests.every((value) => value === 0)) === true}
          emptyText="No traffic in this range."
        >
          {(data) =>
            data ? (
              <>
                <p class="muted" data-testid="resolution">
                  {format.time(new Date(data.x[0]! * 1000).toISOString())} to{" "}
                  {format.time(new Date(range!.to).toISOString())} · data resolution {data.resolution} (by the age of
                  the range's start: 1 minute under 24 h, 5 minutes to 14 days, 1 hour to 90 days)
                </p>
                <div class="charts">
                  {METRICS.map((metric) => (
                    <TimeChart
                      key={metric.title}
                      title={metric.title}
                      x={data.x}
                      series={data.series.map((one) => ({ label: one.label, values: metric.values(one) }))}
                      stacked={split !== "total"}
                      format={metric.format}
                    />
                  ))}
                </div>
              </>
            ) : null
          }
        </Show>
      </Section>
      <div class="grid two">
        <Section title="Top sub-users">
          <Show state={subusers} empty={(rows) => rows.length === 0} emptyText="No traffic in this range.">
            {(rows) => (
              <UsageTable
                caption="Top sub-users"
                rows={rows.slice(0, 10)}
                keyOf={(row) => row.subuser!}
                name={(row) => <SubuserLink id={row.subuser!} label={rowLabel(row)} />}
              />
            )}
          </Show>
        </Section>
        {product === "isp" ? null : (
          <Section title="Top domains">
            <Show state={domains} empty={(rows) => rows.length === 0} emptyText="No traffic in this range.">
              {(rows) => (
                <UsageTable
                  caption="Top domains"
                  rows={rows.slice(0, 10)}
                  keyOf={(row) => row.domain!}
                  name={(row) => row.domain}
                />
              )}
            </Show>
          </Section>
        )}
      </div>
      <div class="grid two">
        <Section title="Failed requests by status">
          <FailureBars state={statuses} name={(row) => `HTTP ${row.status ?? "(not recorded)"}`} />
        </Section>
        <Section title="Failed requests by gateway code">
          <FailureBars state={codes} name={(row) => row.error_code ?? "(none)"} />
        </Section>
      </div>
    </Page>
  );
}

function rangeOf(name: string, custom: { from: string; to: string }): Range | null {
  const preset = RANGES.find((one) => one.value === name && one.hours > 0);
  if (preset) return lastHours(preset.hours);
  if (!custom.from || !custom.to) return null;
  return { from: Date.parse(`${custom.from}T00:00:00Z`), to: Date.parse(`${custom.to}T00:00:00Z`) };
}

function UsageTable(props: {
  caption: string;
  rows: TrafficRow[];
  keyOf: (row: TrafficRow) => string;
  name: (row: TrafficRow) => preact.ComponentChildren;
}) {
  return (
    <Table
      caption={props.caption}
      rows={props.rows}
      rowKey={props.keyOf}
      columns={[
        { label: "Name", render: props.name },
        { label: "In", render: (row) => format.bytes(row.bytes_in), numeric: true },
        { label: "Out", render: (row) => format.bytes(row.bytes_out), numeric: true },
        { label: "Requests", render: (row) => format.count(row.requests), numeric: true },
        { label: "Errors", render: (row) => format.percent(row.error_rate), numeric: true },
      ]}
    />
  );
}

/** Failed requests of the range per status or code: exact counts, as the API sums them. */
function FailureBars(props: { state: Loaded<TrafficRow[]>; name: (row: TrafficRow) => string }) {
  return (
    <Show state={props.state} empty={(rows) => rows.length === 0} emptyText="No failed request in this range.">
      {(rows) => {
        const failed = rows.reduce((sum, row) => sum + row.errors, 0);
        return (
          <>
            {rows.map((row) => (
              <Bar
                key={props.name(row)}
                label={props.name(row)}
                used={row.errors}
                total={failed}
                text={`${format.count(row.errors)} requests`}
              />
            ))}
          </>
        );
      }}
    </Show>
  );
}
