import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { DialogButton } from "./dialog";
import type { Fields } from "./fields";
import { Form } from "./form";

/**
 * An action behind a confirming dialog (delete, terminate, rotate): the dialog says what happens, and may ask for
 * a few values first; the answer, when it holds a secret, stays on screen until closed.
 */
export function ConfirmButton<V extends object, Answer>(props: {
  label: string;
  title: string;
  body: ComponentChildren;
  confirmLabel: string;
  run: (values: V, mfaCode: string | undefined) => Promise<Answer>;
  onDone: () => void;
  mfa?: boolean;
  danger?: boolean;
  fields?: Fields<V>;
  result?: (answer: Answer) => ComponentChildren;
}) {
  const [answer, setAnswer] = useState<{ value: Answer } | null>(null);
  return (
    <DialogButton label={props.label} title={props.title} tone={props.danger ? "danger" : "small"}>
      {(close) =>
        answer && props.result ? (
          <>
            {props.result(answer.value)}
            <div class="form-actions">
              <button
                type="button"
                class="primary"
                onClick={() => {
                  setAnswer(null);
                  close();
                  props.onDone();
                }}
              >
                Done
              </button>
            </div>
          </>
        ) : (
          <Form
            fields={props.fields}
            submitLabel={props.confirmLabel}
            danger={props.danger}
            mfa={props.mfa}
            submit={props.run}
            onDone={(value) => {
              if (props.result) setAnswer({ value });
              else {
                close();
                props.onDone();
              }
            }}
          >
            <div class="confirm-body">{props.body}</div>
          </Form>
        )
      }
    </DialogButton>
  );
}
