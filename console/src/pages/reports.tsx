import type { Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNote } from "../components/error-note";
import * as field from "../components/fields";
import { Page, Section } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import { usePagedList } from "../hooks/use-paged";
import type { PageEntry } from "../router";
import { useSession } from "../session";

export const reportsPage: PageEntry = { label: "Reports", area: "reports", component: ReportsPage };

const TYPES = ["traffic", "requests", "invoices", "subusers", "isp_batches"] as const;
const FORMATS = ["csv", "tsv", "json", "parquet"] as const;

function ReportsPage() {
  const { client, can } = useSession();
  const reports = usePagedList({}, (_filters, page) => client.get("/reports", { params: { query: page } }));
  const writable = can("reports", "write");
  return (
    <Page
      title="Reports"
      actions={
        writable ? (
          <ConfirmButton
            label="New report"
            title="New report"
            body={
              <p>Delivered by email with a download link (1 hour); runs are kept 90 days. Reports need the Pro plan.</p>
            }
            confirmLabel="Create"
            fields={{
              name: field.text("Name", { required: true }),
              type: field.select("Content", TYPES),
              format: field.select("Format", FORMATS),
              email: field.text("Email to", { type: "email", required: true }),
              schedule: field.text("Schedule (cron, UTC, optional)", { placeholder: "0 6 * * 1" }),
            }}
            run={({ email, schedule, ...report }) =>
              client.post("/reports", {
                body: { ...report, destination: { type: "email", email }, schedule: schedule || null },
              })
            }
            onDone={reports.reload}
          />
        ) : null
      }
    >
      <Show state={reports} empty={(page) => page.data.length === 0} emptyText="No reports yet.">
        {(page) => (
          <>
            {page.data.map((report) => (
              <ReportCard key={report.id} report={report} reload={reports.reload} />
            ))}
            <Pager paging={reports.paging} noun="reports" />
          </>
        )}
      </Show>
    </Page>
  );
}

function ReportCard({ report, reload }: { report: Schemas["ReportWithRuns"]; reload: () => void }) {
  const { client, can } = useSession();
  const writable = can("reports", "write");
  const today = new Date().toISOString().slice(0, 10);
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
  return (
    <Section
      title={report.name}
      actions={
        writable ? (
          <>
            <ConfirmButton
              label="Run now"
              title={`Run ${report.name}`}
              body={<p>Days in UTC; `to` is exclusive.</p>}
              confirmLabel="Run"
              fields={{
                from: field.text("From", { type: "date", value: weekAgo }),
                to: field.text("To", { type: "date", value: today }),
              }}
              run={(days) => client.post("/reports/{id}/run", { params: { path: { id: report.id } }, body: days })}
              onDone={reload}
            />
            <ConfirmButton
              label="Delete"
              title={`Delete ${report.name}`}
              danger
              body={<p>Its schedule stops; past runs stay downloadable until they expire.</p>}
              confirmLabel="Delete"
              run={() => client.delete("/reports/{id}", { params: { path: { id: report.id } } })}
              onDone={reload}
            />
          </>
        ) : null
      }
    >
      <p class="muted">
        {report.type} · {report.format} · to{" "}
        {report.destination.email ?? report.destination.url ?? report.destination.bucket} ·{" "}
        {report.schedule ? `cron ${report.schedule}, next ${format.time(report.next_run_at)}` : "on demand"}
      </p>
      {report.recent_runs.length === 0 ? (
        <p class="empty">No runs yet.</p>
      ) : (
        <Table
          caption={`Runs of ${report.name}`}
          rows={report.recent_runs}
          rowKey={(run) => run.run_id}
          columns={[
            { label: "Requested", render: (r) => format.time(r.created_at) },
            { label: "Days", render: (r) => `${r.from.slice(0, 10)} → ${r.to.slice(0, 10)}` },
            {
              label: "Status",
              render: (r) => (
                <Pill tone={r.status === "completed" ? "good" : r.status === "failed" ? "bad" : "info"}>
                  {r.status}
                </Pill>
              ),
            },
            { label: "Rows", render: (r) => (r.rows === null ? "—" : format.count(r.rows)), numeric: true },
            { label: "", render: (r) => (r.status === "completed" ? <Download id={r.run_id} /> : (r.error ?? null)) },
          ]}
        />
      )}
    </Section>
  );
}

/** A run's signed download link (valid an hour) is fetched when asked for, then opened. */
function Download({ id }: { id: string }) {
  const { client } = useSession();
  const run = useLoad(() => client.get("/reports/runs/{id}", { params: { path: { id } } }), [id]);
  if (run.error) return <ErrorNote error={run.error} />;
  if (!run.data) return null;
  return run.data.download_url ? (
    <a href={run.data.download_url} download>
      Download
    </a>
  ) : (
    <span class="muted">pushed to the destination</span>
  );
}
