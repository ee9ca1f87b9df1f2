import { useState } from "preact/hooks";
import { useLoad } from "../hooks/use-load";
import { useSession } from "../session";
import type { Field } from "./fields";

/** How many sub-users a search shows: the search narrows by label, so no page of the account is out of reach. */
const FOUND_SHOWN = 20;

/**
 * Sub-users picked by searching their labels through the API (`label_contains`): any sub-user of the account can be
 * found, not only those of a first page. The value is the picked ids, in the order they were picked.
 */
export function subuserPicker(label: string, settings: { value?: string[]; hint?: string } = {}): Field<string[]> {
  return {
    initial: settings.value ?? [],
    render: (props) => <SubuserPicker label={label} hint={settings.hint} {...props} />,
  };
}

function SubuserPicker(props: {
  label: string;
  hint: string | undefined;
  name: string;
  value: string[];
  onChange: (value: string[]) => void;
}) {
  const { client } = useSession();
  const [search, setSearch] = useState("");
  // The labels of the sub-users picked from a search; an id picked before (an existing binding) shows as itself.
  const [labels, setLabels] = useState<Record<string, string>>({});
  const term = search.trim().toLowerCase();
  const found = useLoad(
    () =>
      term
        ? client.get("/subusers", { params: { query: { limit: FOUND_SHOWN, label_contains: term } } })
        : Promise.resolve(null),
    [term],
  );
  const results = found.data?.data ?? [];
  const toggle = (id: string, label: string, picked: boolean) => {
    setLabels((known) => ({ ...known, [id]: label }));
    props.onChange(picked ? [...props.value, id] : props.value.filter((one) => one !== id));
  };
  const pickedElsewhere = props.value.filter((id) => !results.some((subuser) => subuser.id === id));
  return (
    <fieldset>
      <legend>{props.label}</legend>
      <input
        type="search"
        name={`${props.name}_search`}
        aria-label="Search sub-users by label"
        placeholder="Search by label"
        value={search}
        autoComplete="off"
        onInput={(event) => setSearch(event.currentTarget.value)}
      />
      {[...pickedElsewhere.map((id) => ({ id, label: labels[id] ?? id })), ...results].map((subuser) => (
        <label class="check" key={subuser.id}>
          <input
            type="checkbox"
            name={props.name}
            value={subuser.id}
            checked={props.value.includes(subuser.id)}
            onChange={(event) => toggle(subuser.id, subuser.label, event.currentTarget.checked)}
          />
          {subuser.label}
        </label>
      ))}
      {term && !found.loading && results.length === 0 ? <small>No sub-user's label contains “{term}”.</small> : null}
      {props.hint ? <small>{props.hint}</small> : null}
    </fieldset>
  );
}
