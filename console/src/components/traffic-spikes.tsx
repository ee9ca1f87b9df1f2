import type { Schemas } from "../api";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import { useSession } from "../session";
import { ConfirmButton } from "./confirm-button";
import { ErrorNote } from "./error-note";
import { Section } from "./layout";
import { Pill } from "./pill";
import { Table } from "./table";

type Spike = Schemas["TrafficSpike"];

/**
 * Spike episodes still open or whose action waits to be acknowledged: the account's (the overview) or one
 * sub-user's (its page). Episodes announced by one notification (`digest`) are shown together, the group's size
 * beside each. Shows nothing when there are none; a pending action gets an acknowledge button.
 */
export function ActiveTrafficSpikes(props: { subuser?: string; onAcknowledged?: () => void }) {
  const { client, can } = useSession();
  const spikes = useLoad(
    () =>
      client.get("/traffic-spikes", {
        params: { query: { active: "true", limit: 20, ...(props.subuser ? { subuser: props.subuser } : {}) } },
      }),
    [props.subuser],
  );
  // Nothing at all while loading or when there is none: the panel is there only when something needs attention.
  if (spikes.error) return <ErrorNote error={spikes.error} />;
  const page = spikes.data;
  if (!page || page.data.length === 0) return null;
  const groups = byDigest(page.data);
  return (
    <Section title="Traffic spikes">
      <Table
        caption="Traffic spikes"
        rows={groups.flat()}
        rowKey={(spike) => spike.id}
        columns={[
          ...(props.subuser
            ? []
            : [
                {
                  label: "Sub-user",
                  render: (spike: Spike) => <a href={`#/subusers/${spike.subuser}`}>{spike.subuser}</a>,
                },
              ]),
          { label: "Since", render: (spike) => format.time(spike.started_at) },
          {
            label: "Notification",
            render: (spike) => {
              const together = groups.find((group) => group.includes(spike))?.length ?? 1;
              return together > 1 ? `one alert for ${together} sub-users` : "";
            },
          },
          {
            label: "Rate",
            render: (spike) =>
              `${format.gb(spike.start.observed.gb_per_hour)}/h (usually ${format.gb(spike.start.baseline.gb_per_hour)}/h)`,
          },
          { label: "Top domains", render: (spike) => spike.start.top_domains.map((d) => d.domain).join(", ") },
          { label: "Sources", render: (spike) => spike.start.top_sources.map((s) => s.block).join(", ") },
          { label: "State", render: (spike) => <SpikeState spike={spike} /> },
          {
            label: "Action",
            render: (spike) =>
              spike.action_pending && can("subusers", "write") ? (
                <ConfirmButton
                  label="Acknowledge"
                  title="Acknowledge the spike"
                  body={
                    <p>
                      {spike.action === "disable"
                        ? "The sub-user is enabled again at once."
                        : "The sub-user's requests per second are no longer capped."}
                    </p>
                  }
                  confirmLabel="Acknowledge"
                  run={() => client.post("/traffic-spikes/{id}/acknowledge", { params: { path: { id: spike.id } } })}
                  onDone={() => {
                    spikes.reload();
                    props.onAcknowledged?.();
                  }}
                />
              ) : null,
          },
        ]}
      />
    </Section>
  );
}

/** The episodes grouped by the notification that announced them, in the order each group first appears. */
function byDigest(spikes: Spike[]): Spike[][] {
  const groups = new Map<string, Spike[]>();
  for (const spike of spikes) {
    const key = spike.digest ?? spike.id;
    groups.set(key, [...(groups.get(key) ?? []), spike]);
  }
  return [...groups.values()];
}

function SpikeState({ spike }: { spike: Spike }) {
  const action =
    spike.action === "disable"
      ? "sub-user disabled"
      : spike.action === "cap"
        ? `capped at ${spike.start.cap_rps} rps`
        : null;
  return (
    <>
      <Pill tone={spike.status === "open" ? "bad" : "warn"}>{spike.status === "open" ? "ongoing" : "ended"}</Pill>
      {spike.action_pending && action ? (
        <>
          {" "}
          <Pill tone="warn">{action}</Pill>
        </>
      ) : null}
    </>
  );
}
