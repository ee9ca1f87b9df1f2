import type { Schemas } from "../api";
import { useSession } from "../session";
import { DialogButton } from "./dialog";
import * as field from "./fields";
import { Form } from "./form";
import { Section } from "./layout";

const MODES = [
  { value: "none", label: "Anywhere (no rules)" },
  { value: "allow", label: "Only the listed destinations" },
  { value: "deny", label: "Anywhere but the listed destinations" },
] as const;

type Rules = Schemas["Subuser"]["target_rules"];

/**
 * Where a sub-user's requests may go: the rules as they stand, and an editor (a mode, then domains and IP ranges,
 * one a line). The gateway refuses other targets 403 `target-denied`; a change reaches every node within a second.
 */
export function TargetRules({ subuser, onSaved }: { subuser: Schemas["Subuser"]; onSaved: () => void }) {
  const { client, can } = useSession();
  const rules = subuser.target_rules;
  return (
    <Section
      title="Target rules"
      actions={
        can("subusers", "write") ? (
          <DialogButton label="Edit rules" title={`Target rules of ${subuser.label}`} tone="small">
            {(close) => (
              <Form
                submitLabel="Save rules"
                fields={{
                  mode: field.select<"none" | "allow" | "deny">("Requests may reach", MODES, {
                    value: rules?.mode ?? "none",
                  }),
                  domains: field.lines("Domains", {
                    value: rules?.domains.join("\n") ?? "",
                    hint: "One a line, at most 200; a domain covers its subdomains (example.com covers www.example.com).",
                  }),
                  ip_ranges: field.lines("IP ranges", {
                    value: rules?.ip_ranges.join("\n") ?? "",
                    rows: 4,
                    hint: "One a line, at most 200: addresses or CIDR blocks; they match targets written as an address.",
                  }),
                }}
                submit={({ mode, domains, ip_ranges }) =>
                  client.patch("/subusers/{id}", {
                    params: { path: { id: subuser.id } },
                    body: {
                      target_rules:
                        mode === "none"
                          ? null
                          : { mode, domains: field.splitLines(domains), ip_ranges: field.splitLines(ip_ranges) },
                    },
                  })
                }
                onDone={() => {
                  close();
                  onSaved();
                }}
              />
            )}
          </DialogButton>
        ) : null
      }
    >
      <RulesSummary rules={rules} />
    </Section>
  );
}

function RulesSummary({ rules }: { rules: Rules }) {
  if (!rules) return <p class="muted">No rules: every destination is reachable.</p>;
  const listed = [...rules.domains, ...rules.ip_ranges];
  return (
    <>
      <p>
        {rules.mode === "allow" ? "Only these destinations are reachable" : "Every destination but these is reachable"}
        {listed.length === 0 ? (rules.mode === "allow" ? ": none listed, so nothing is." : ": none listed.") : ":"}
      </p>
      {listed.length > 0 ? (
        <ul>
          {listed.map((entry) => (
            <li key={entry}>
              <code>{entry}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
