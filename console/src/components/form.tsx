import type { ComponentChildren } from "preact";
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { useAction } from "../hooks/use-action";
import { useNeedsMfa } from "../session";
import { ErrorNote } from "./error-note";
import type { Fields } from "./fields";

/**
 * A form of fields whose `submit` calls the API with their values, typed by the fields (`fields.tsx`). While it
 * runs the button is busy; an API error is shown with its message and link; on success `onDone` gets the answer.
 * `mfa` adds the second-factor field when the account has MFA (the API consumes each code once, so a gated action
 * asks for a fresh one).
 */
export function Form<V extends object, Answer>(props: {
  fields?: Fields<V>;
  submitLabel: string;
  submit: (values: V, mfaCode: string | undefined) => Promise<Answer>;
  onDone: (answer: Answer) => void;
  mfa?: boolean;
  danger?: boolean;
  children?: ComponentChildren;
}) {
  const [values, setValues] = useState(() => initialValues(props.fields));
  const [mfaCode, setMfaCode] = useState("");
  const action = useAction();
  const needsMfa = useNeedsMfa();
  const gated = props.mfa === true && needsMfa;

  const onSubmit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => props.onDone(await props.submit(values, gated ? mfaCode.trim() : undefined)));
  };

  return (
    <form class="form" onSubmit={onSubmit}>
      {namesOf(props.fields).map((name) => (
        <Fragment key={name}>
          {props.fields?.[name].render({
            name,
            value: values[name],
            onChange: (value) => setValues((previous) => ({ ...previous, [name]: value })),
          })}
        </Fragment>
      ))}
      {gated ? <MfaCode value={mfaCode} onChange={setMfaCode} /> : null}
      {props.children}
      {action.error ? <ErrorNote error={action.error} /> : null}
      <div class="form-actions">
        <button
          type="submit"
          class={props.danger ? "danger" : "primary"}
          disabled={action.busy}
          aria-busy={action.busy}
        >
          {action.busy ? "Working…" : props.submitLabel}
        </button>
      </div>
    </form>
  );
}

function MfaCode(props: { value: string; onChange: (code: string) => void }) {
  return (
    <label>
      MFA code
      <input
        name="mfa"
        inputMode="numeric"
        autoComplete="one-time-code"
        required
        value={props.value}
        onInput={(event) => props.onChange(event.currentTarget.value)}
      />
      <small>A current code from your authenticator, or a recovery code.</small>
    </label>
  );
}

// `Object.keys` and `Object.fromEntries` know nothing of the object's own keys: the fields' keys are `V`'s.
function namesOf<V>(fields: Fields<V> | undefined): (keyof V & string)[] {
  return fields ? (Object.keys(fields) as (keyof V & string)[]) : [];
}

function initialValues<V>(fields: Fields<V> | undefined): V {
  return Object.fromEntries(namesOf(fields).map((name) => [name, fields?.[name].initial])) as V;
}
