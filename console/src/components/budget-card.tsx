import { mfaHeaders, type Schemas } from "../api";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import { useSession } from "../session";
import { Bar } from "./bar";
import { ConfirmButton } from "./confirm-button";
import * as field from "./fields";
import { Section } from "./layout";
import { Pill } from "./pill";
import { Show } from "./show";

/**
 * The month's spend against the account's budget, beside the balance: set, change or remove the budget (its
 * thresholds raise `budget.threshold` events; a hard stop refuses charges past it). The budget spans every product,
 * so only a key without a product scope sees it.
 */
export function BudgetCard() {
  const { client, can, accountWide } = useSession();
  const budget = useLoad(async () => (can("billing") && accountWide ? client.get("/budget") : null), []);
  if (!can("billing") || !accountWide) return null;
  return (
    <Section title="Monthly budget">
      <Show state={budget}>
        {(current) => (current ? <BudgetFigures budget={current} onChange={budget.reload} /> : null)}
      </Show>
    </Section>
  );
}

function BudgetFigures(props: { budget: Schemas["Budget"]; onChange: () => void }) {
  const { client, can } = useSession();
  const { budget } = props;
  return (
    <>
      {budget.amount_usd === null ? (
        <p data-testid="budget">
          {format.usd(budget.spent_this_month_usd)} spent in {budget.month} (UTC) · no budget set
        </p>
      ) : (
        <>
          <Bar
            label={`Spend in ${budget.month} (UTC)`}
            used={budget.spent_this_month_usd}
            total={budget.amount_usd}
            text={`${format.usd(budget.spent_this_month_usd)} of ${format.usd(budget.amount_usd)}`}
          />
          <p data-testid="budget">
            {format.usd(budget.remaining_usd)} left · alerts at {budget.thresholds_percent.join(", ")} %
            {budget.hard_stop ? (
              <>
                {" "}
                <Pill tone="info">hard stop</Pill>
              </>
            ) : null}
          </p>
        </>
      )}
      {can("billing", "write") ? (
        <div class="form-actions">
          <ConfirmButton
            label={budget.amount_usd === null ? "Set a budget" : "Change"}
            title="Monthly budget"
            body={<p>Thresholds raise `budget.threshold` events; a hard stop refuses orders and renewals past it.</p>}
            confirmLabel="Save"
            mfa
            fields={{
              amount: field.number("Amount (USD)", { value: String(budget.amount_usd ?? 100), min: 0.01, step: 0.01 }),
              thresholds: field.text("Thresholds (%)", {
                value: (budget.amount_usd === null ? [50, 80, 100] : budget.thresholds_percent).join(", "),
                pattern: "^\\s*\\d+(\\s*,\\s*\\d+)*\\s*$|^\\s*$",
              }),
              hardStop: field.checkbox("Hard stop", { value: budget.hard_stop }),
            }}
            run={(values, code) =>
              client.put("/budget", {
                body: {
                  amount_usd: Number(values.amount),
                  thresholds_percent: values.thresholds
                    .split(",")
                    .filter((part) => part.trim())
                    .map(Number),
                  hard_stop: values.hardStop,
                },
                headers: mfaHeaders(code),
              })
            }
            onDone={props.onChange}
          />
          {budget.amount_usd === null ? null : (
            <ConfirmButton
              label="Remove"
              title="Remove the budget"
              body={<p>No more threshold events or hard stop; the month's spend still shows.</p>}
              confirmLabel="Remove"
              mfa
              danger
              run={(_values, code) => client.delete("/budget", { headers: mfaHeaders(code) })}
              onDone={props.onChange}
            />
          )}
        </div>
      ) : null}
    </>
  );
}
