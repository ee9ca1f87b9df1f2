import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, needsMfa } from "./session";

// ── Loading data ────────────────────────────────────────────────────────────────────────────────────

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change; a newer load wins over an older one still under way. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  // The caller names what the load depends on (`deps`); `load` itself is a new closure on every render.
  useEffect(() => {
    const run = ++latest.current;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => run === latest.current && setState({ data, loading: false }),
      (error) => run === latest.current && setState({ error, loading: false }),
    );
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Loading, error and empty states around what a load answered. */
export function Show<T>(props: {
  state: Loaded<T>;
  empty?: (data: T) => boolean;
  emptyText?: string;
  children: (data: T) => ComponentChildren;
}) {
  const { data, error, loading } = props.state;
  if (error) return <ErrorNote error={error} />;
  if (data === undefined)
    return loading ? (
      <p class="muted" role="status">
        Loading…
      </p>
    ) : null;
  if (props.empty?.(data)) return <p class="empty">{props.emptyText ?? "Nothing here yet."}</p>;
  return <div aria-busy={loading}>{props.children(data)}</div>;
}

// ── Errors ──────────────────────────────────────────────────────────────────────────────────────────

/** An API error as the API gave it: its message, code, request id and a link to the code's documentation. */
export function ErrorNote({ error }: { error: unknown }) {
  if (error instanceof ApiError) {
    return (
      <div class="error" role="alert">
        <strong>{error.message}</strong>
        {error.details?.length ? (
          <ul>
            {error.details.map((problem) => (
              <li key={problem.field}>
                {problem.field}: {problem.message}
              </li>
            ))}
          </ul>
        ) : null}
        <small>
          <code>{error.code}</code> · HTTP {error.status}
          {error.request_id ? <> · request {error.request_id}</> : null}
          {error.doc_url ? (
            <>
              {" · "}
              <a href={error.doc_url} target="_blank" rel="noopener">
                What this means
              </a>
            </>
          ) : null}
        </small>
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      <strong>{error instanceof Error ? error.message : String(error)}</strong>
      <small>The API could not be reached. Check the connection and try again.</small>
    </div>
  );
}

// ── Layout pieces ───────────────────────────────────────────────────────────────────────────────────

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <>
      <header class="page-head">
        <h1 tabIndex={-1} id="page-title">
          {props.title}
        </h1>
        {props.actions ? <div class="actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </>
  );
}

export function Section(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card">
      <div class="card-head">
        <h2>{props.title}</h2>
        {props.actions ? <div class="actions">{props.actions}</div> : null}
      </div>
      {props.children}
    </section>
  );
}

export interface Column<Row> {
  label: string;
  render: (row: Row) => ComponentChildren;
  numeric?: boolean;
}

export function Table<Row>(props: {
  caption: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
}) {
  return (
    // A labelled section (a region): when the table scrolls sideways, the keyboard reaches it too (axe).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
    <section class="table-wrap" tabIndex={0} aria-label={props.caption}>
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column.label} scope="col" class={column.numeric ? "num" : undefined}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((column) => (
                <td key={column.label} class={column.numeric ? "num" : undefined}>
                  {column.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A used/left bar. `tone` turns it amber past 80% and red when full. */
export function Bar(props: { label: string; used: number; total: number; text: string }) {
  const fraction = props.total > 0 ? Math.min(1, props.used / props.total) : props.used > 0 ? 1 : 0;
  const tone = fraction >= 1 ? "full" : fraction >= 0.8 ? "high" : "ok";
  return (
    <div class="bar-block">
      <div class="bar-label">
        <span>{props.label}</span>
        <span>{props.text}</span>
      </div>
      {/* biome-ignore lint/a11y/useSemanticElements: a styled bar (<meter> cannot be styled alike across browsers). */}
      <div
        class={`bar ${tone}`}
        role="meter"
        aria-label={props.label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(fraction * 100)}
        aria-valuetext={props.text}
      >
        <span style={{ width: `${fraction * 100}%` }} />
      </div>
    </div>
  );
}

export function CopyButton(props: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(props.text);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" class="small" onClick={copy} aria-label={`Copy ${props.label}`}>
      {copied ? "Copied" : "Copy"}
    </button>
  );
}

/** A value the API shows once (a password, a token, a signing secret). */
export function Secret(props: { label: string; value: string; note?: string }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{props.label}</strong> — shown once: copy it now. {props.note}
      </p>
      <div class="copy-row">
        <code data-secret>{props.value}</code>
        <CopyButton text={props.value} label={props.label} />
      </div>
    </div>
  );
}

export function Copyable(props: { label: string; value: string }) {
  return (
    <div class="copyable">
      <span class="copy-label">{props.label}</span>
      <div class="copy-row">
        <code>{props.value}</code>
        <CopyButton text={props.value} label={props.label} />
      </div>
    </div>
  );
}

export function Pill(props: { tone?: "good" | "warn" | "bad" | "info"; children: ComponentChildren }) {
  return <span class={`pill ${props.tone ?? ""}`}>{props.children}</span>;
}

// ── Dialogs and forms ───────────────────────────────────────────────────────────────────────────────

/** A modal `<dialog>`: focus moves in, Escape closes it, focus returns to the opener. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onClose={props.onClose}>
      <div class="dialog-head">
        <h2 id="dialog-title">{props.title}</h2>
        <button type="button" class="ghost" onClick={props.onClose} aria-label="Close">
          ✕
        </button>
      </div>
      {props.children}
    </dialog>
  );
}

export type FieldValue = string | boolean | string[];
export type Values = Record<string, FieldValue>;

export interface Field {
  name: string;
  label: string;
  type?: "text" | "number" | "select" | "checkbox" | "checkboxes" | "datetime-local" | "date" | "password" | "email";
  options?: readonly (string | { value: string; label: string })[];
  value?: FieldValue;
  required?: boolean;
  hint?: string;
  placeholder?: string;
  min?: number;
  max?: number;
  step?: number | "any";
  pattern?: string;
}

/**
 * A form of fields whose `submit` calls the API. While it runs the button is busy; an API error is shown with
 * its message and link; on success `onDone` gets the answer. `mfa` adds the second-factor field when the account
 * has MFA (the API consumes each code once, so a gated action asks for a fresh one).
 */
export function Form<Answer>(props: {
  fields: Field[];
  submitLabel: string;
  submit: (values: Values, mfaCode: string | undefined) => Promise<Answer>;
  onDone: (answer: Answer) => void;
  mfa?: boolean;
  danger?: boolean;
  children?: ComponentChildren;
}) {
  const initial = () =>
    Object.fromEntries(props.fields.map((field) => [field.name, field.value ?? defaultValue(field)]));
  const [values, setValues] = useState<Values>(initial);
  const [mfaCode, setMfaCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const gated = props.mfa && needsMfa();
  const set = (name: string, value: FieldValue) => setValues((previous) => ({ ...previous, [name]: value }));

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await props.submit(values, gated ? mfaCode.trim() : undefined);
      props.onDone(answer);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="form" onSubmit={onSubmit}>
      {props.fields.map((field) => (
        <FieldInput key={field.name} field={field} value={values[field.name]!} onChange={(v) => set(field.name, v)} />
      ))}
      {gated ? (
        <label>
          MFA code
          <input
            name="mfa"
            inputMode="numeric"
            autoComplete="one-time-code"
            required
            value={mfaCode}
            onInput={(event) => setMfaCode(event.currentTarget.value)}
          />
          <small>A current code from your authenticator, or a recovery code.</small>
        </label>
      ) : null}
      {props.children}
      {error ? <ErrorNote error={error} /> : null}
      <div class="form-actions">
        <button type="submit" class={props.danger ? "danger" : "primary"} disabled={busy} aria-busy={busy}>
          {busy ? "Working…" : props.submitLabel}
        </button>
      </div>
    </form>
  );
}

function defaultValue(field: Field): FieldValue {
  if (field.type === "checkbox") return false;
  if (field.type === "checkboxes") return [];
  if (field.type === "select") return optionValue(field.options?.[0] ?? "");
  return "";
}

const optionValue = (option: string | { value: string }) => (typeof option === "string" ? option : option.value);
const optionLabel = (option: string | { label: string }) => (typeof option === "string" ? option : option.label);

function FieldInput(props: { field: Field; value: FieldValue; onChange: (value: FieldValue) => void }) {
  const { field, value, onChange } = props;
  const hint = field.hint ? <small>{field.hint}</small> : null;
  if (field.type === "checkbox") {
    return (
      <label class="check">
        <input
          type="checkbox"
          name={field.name}
          checked={value === true}
          onChange={(event) => onChange(event.currentTarget.checked)}
        />
        {field.label}
        {hint}
      </label>
    );
  }
  if (field.type === "checkboxes") {
    const chosen = value as string[];
    return (
      <fieldset>
        <legend>{field.label}</legend>
        {field.options?.map((option) => (
          <label class="check" key={optionValue(option)}>
            <input
              type="checkbox"
              name={field.name}
              value={optionValue(option)}
              checked={chosen.includes(optionValue(option))}
              onChange={(event) =>
                onChange(
                  event.currentTarget.checked
                    ? [...chosen, optionValue(option)]
                    : chosen.filter((item) => item !== optionValue(option)),
                )
              }
            />
            {optionLabel(option)}
          </label>
        ))}
        {hint}
      </fieldset>
    );
  }
  if (field.type === "select") {
    return (
      <label>
        {field.label}
        <select name={field.name} value={value as string} onChange={(event) => onChange(event.currentTarget.value)}>
          {field.options?.map((option) => (
            <option key={optionValue(option)} value={optionValue(option)}>
              {optionLabel(option)}
            </option>
          ))}
        </select>
        {hint}
      </label>
    );
  }
  return (
    <label>
      {field.label}
      <input
        name={field.name}
        // One input element for every text-like type (Preact's types split them by role).
        type={(field.type ?? "text") as "text"}
        value={value as string}
        required={field.required}
        placeholder={field.placeholder}
        min={field.min}
        max={field.max}
        step={field.step}
        pattern={field.pattern}
        autoComplete="off"
        onInput={(event) => onChange(event.currentTarget.value)}
      />
      {hint}
    </label>
  );
}

/** A button that opens a dialog; the dialog's content gets `close`. */
export function DialogButton(props: {
  label: string;
  title?: string;
  tone?: "primary" | "danger" | "small" | "ghost";
  children: (close: () => void) => ComponentChildren;
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" class={props.tone ?? ""} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      {open ? (
        <Dialog title={props.title ?? props.label} onClose={() => setOpen(false)}>
          {props.children(() => setOpen(false))}
        </Dialog>
      ) : null}
    </>
  );
}

/**
 * An action behind a confirming dialog (delete, terminate, rotate): the dialog says what happens; the answer, when
 * it holds a secret, stays on screen until closed.
 */
export function ConfirmButton<Answer>(props: {
  label: string;
  title: string;
  body: ComponentChildren;
  confirmLabel: string;
  run: (values: Values, mfaCode: string | undefined) => Promise<Answer>;
  onDone: () => void;
  mfa?: boolean;
  danger?: boolean;
  fields?: Field[];
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
            fields={props.fields ?? []}
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

/** Headers for a gated call. */
export function mfaHeaders(code: string | undefined): { "X-MFA-Code"?: string } {
  return code ? { "X-MFA-Code": code } : {};
}

/** A labelled select of plain values (a product, a status). */
export function Choice<Value extends string>(props: {
  label: string;
  value: Value;
  options: readonly Value[];
  onChange: (value: Value) => void;
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value as Value)}>
        {props.options.map((option) => (
          <option key={option}>{option}</option>
        ))}
      </select>
    </label>
  );
}
