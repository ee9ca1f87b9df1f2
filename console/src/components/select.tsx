import type { NonEmpty } from "../lib/non-empty";

/** A choice of a select: a plain value, or a value shown with its own label. */
export type Option<Value extends string> = Value | { value: Value; label: string };

const optionValue = <Value extends string>(option: Option<Value>): Value =>
  typeof option === "string" ? option : option.value;
const optionLabel = <Value extends string>(option: Option<Value>): string =>
  typeof option === "string" ? option : option.label;

/** The value of the first option: what a select shows before anything is chosen. */
export function firstValue<Value extends string>(options: NonEmpty<Option<Value>>): Value {
  return optionValue(options[0]);
}

/**
 * The `value`, `onChange` and `<option>`s of a `<select>` of `options`: what is chosen comes back typed as the
 * options are. (The `<select>` itself stays in the page's markup, inside its `<label>`.)
 */
export function selectOf<Value extends string>(
  value: Value,
  options: readonly Option<Value>[],
  onChange: (value: Value) => void,
) {
  return {
    value,
    onChange: (event: { currentTarget: HTMLSelectElement }) => {
      const picked = options.find((option) => optionValue(option) === event.currentTarget.value);
      if (picked !== undefined) onChange(optionValue(picked));
    },
    options: options.map((option) => (
      <option key={optionValue(option)} value={optionValue(option)}>
        {optionLabel(option)}
      </option>
    )),
  };
}

/** A labelled select of a page's toolbar (a product, a status, a sub-user). */
export function Choice<Value extends string>(props: {
  label: string;
  value: Value;
  options: readonly Option<Value>[];
  onChange: (value: Value) => void;
}) {
  const select = selectOf(props.value, props.options, props.onChange);
  return (
    <label>
      {props.label}
      <select value={select.value} onChange={select.onChange}>
        {select.options}
      </select>
    </label>
  );
}
