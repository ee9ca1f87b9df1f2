/**
 * The fields of a `Form`, each typed by the value it gives: a text is a `string`, a select one of its options, a
 * checkbox a `boolean`, checkboxes a list of their options. A form's values are typed by its fields, so a page hands
 * them to the client as they are, and the client's request types check them.
 */
import type { ComponentChildren } from "preact";
import type { NonEmpty } from "../lib/non-empty";
import { firstValue, type Option, selectOf } from "./select";

/** One field, whose value is a `T`: where it starts, and how it is drawn and changed. */
export interface Field<T> {
  initial: T;
  render: (props: { name: string; value: T; onChange: (value: T) => void }) => ComponentChildren;
}

/** A form's fields, one for each key of its values `V`, drawn in the order they are written. */
export type Fields<V> = { [Name in keyof V]: Field<V[Name]> };

interface InputSettings {
  value?: string;
  required?: boolean;
  placeholder?: string;
  pattern?: string;
  /** Said when the value does not match `pattern`. */
  title?: string;
  minLength?: number;
  hint?: string;
  /** What a browser or password manager may fill in (`email`, `current-password`…); none by default. */
  autoComplete?: string;
}

interface NumberSettings extends InputSettings {
  min?: number;
  max?: number;
  step?: number | "any";
}

export function text(
  label: string,
  settings: InputSettings & { type?: "text" | "email" | "date" } = {},
): Field<string> {
  return input(label, settings.type ?? "text", settings);
}

/** A number as typed: the page reads it with `Number`, and an empty one may mean "none" (no cap, the plan's limit). */
export function number(label: string, settings: NumberSettings = {}): Field<string> {
  return input(label, "number", settings);
}

/** A secret typed by hand (a password, an API key): hidden as it is typed, never spell-checked. */
export function secret(label: string, settings: InputSettings = {}): Field<string> {
  return input(label, "password", settings);
}

function input(
  label: string,
  type: "text" | "email" | "date" | "number" | "password",
  settings: NumberSettings,
): Field<string> {
  return {
    initial: settings.value ?? "",
    render: ({ name, value, onChange }) => (
      <label>
        {label}
        <input
          name={name}
          // One input element for every text-like type (Preact's types split them by role).
          type={type as "text"}
          value={value}
          required={settings.required}
          placeholder={settings.placeholder}
          min={settings.min}
          max={settings.max}
          step={settings.step}
          pattern={settings.pattern}
          title={settings.title}
          minLength={settings.minLength}
          spellcheck={type === "password" ? false : undefined}
          autoComplete={settings.autoComplete ?? "off"}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
        <Hint text={settings.hint} />
      </label>
    ),
  };
}

/** Text of many lines (one entry a line): the page splits it. */
export function lines(label: string, settings: { value?: string; hint?: string; rows?: number } = {}): Field<string> {
  return {
    initial: settings.value ?? "",
    render: ({ name, value, onChange }) => (
      <label>
        {label}
        <textarea
          name={name}
          rows={settings.rows ?? 6}
          value={value}
          spellcheck={false}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
        <Hint text={settings.hint} />
      </label>
    ),
  };
}

/** The non-empty lines of a `lines` field, trimmed. */
export function splitLines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** One of `options`: the first, unless `value` says otherwise. */
export function select<T extends string>(
  label: string,
  options: NonEmpty<Option<T>>,
  settings: { value?: T; hint?: string } = {},
): Field<T> {
  return {
    initial: settings.value ?? firstValue(options),
    render: ({ name, value, onChange }) => {
      const choice = selectOf(value, options, onChange);
      return (
        <label>
          {label}
          <select name={name} value={choice.value} onChange={choice.onChange}>
            {choice.options}
          </select>
          <Hint text={settings.hint} />
        </label>
      );
    },
  };
}

export function checkbox(label: string, settings: { value?: boolean } = {}): Field<boolean> {
  return {
    initial: settings.value ?? false,
    render: ({ name, value, onChange }) => (
      <label class="check">
        <input
          type="checkbox"
          name={name}
          checked={value}
          onChange={(event) => onChange(event.currentTarget.checked)}
        />
        {label}
      </label>
    ),
  };
}

/** Any number of `options`, in the order they were ticked. */
export function checkboxes<T extends string>(
  label: string,
  options: readonly T[],
  settings: { value?: T[] } = {},
): Field<T[]> {
  return {
    initial: settings.value ?? [],
    render: ({ name, value, onChange }) => (
      <fieldset>
        <legend>{label}</legend>
        {options.map((option) => (
          <label class="check" key={option}>
            <input
              type="checkbox"
              name={name}
              value={option}
              checked={value.includes(option)}
              onChange={(event) =>
                onChange(event.currentTarget.checked ? [...value, option] : value.filter((one) => one !== option))
              }
            />
            {option}
          </label>
        ))}
      </fieldset>
    ),
  };
}

function Hint({ text }: { text: string | undefined }) {
  return text ? <small>{text}</small> : null;
}
