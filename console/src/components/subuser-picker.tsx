import { useState } from "preact/hooks";
import type { Product, Schemas } from "../api";
import { useLoad } from "../hooks/use-load";
import { href } from "../router";
import { type Session, useSession } from "../session";
import type { Field } from "./fields";

/** How many sub-users a search shows: the search narrows by label, so no page of the account is out of reach. */
const FOUND_SHOWN = 20;
/** The most ids one label lookup names (`GET /subusers?ids=`). */
const LOOKED_UP = 100;

/** Keeps the labels of sub-users an answer named, for tables whose rows carry only ids. */
export function rememberLabels(session: Session, subusers: Pick<Schemas["Subuser"], "id" | "label">[]): void {
  for (const one of subusers) session.subuserLabels.set(one.id, one.label);
}

/**
 * Names the sub-users of `ids` this session has no label for, in one call (`GET /subusers?ids=`, the first 100):
 * a table calls it with the ids it shows, and re-renders with their labels.
 */
export function useSubuserLabels(ids: readonly string[]): void {
  const session = useSession();
  const unnamed = [...new Set(ids)].filter((id) => id && !session.subuserLabels.has(id)).slice(0, LOOKED_UP);
  useLoad(async () => {
    if (unnamed.length === 0) return 0;
    const page = await session.client.get("/subusers", {
      params: { query: { ids: unnamed.join(","), limit: LOOKED_UP } },
    });
    rememberLabels(session, page.data);
    return page.data.length;
  }, [unnamed.join()]);
}

/** A sub-user's id as a link to its page, named by its label when the row or this session knows it. */
export function SubuserLink(props: { id: string; label?: string | null | undefined }) {
  const { subuserLabels } = useSession();
  return <a href={href("subusers", props.id)}>{props.label ?? subuserLabels.get(props.id) ?? props.id}</a>;
}

interface PickerSettings {
  hint?: string;
  /** Only sub-users with this product. */
  product?: Product;
}

/** Sub-users picked by label search: the value is the picked ids, in the order they were picked. */
export function subuserPicker(label: string, settings: PickerSettings & { value?: string[] } = {}): Field<string[]> {
  return {
    initial: settings.value ?? [],
    render: (props) => <SubuserPicker label={label} multiple {...settings} {...props} />,
  };
}

/** One sub-user picked by label search (a form's required choice). */
export function subuserChoice(label: string, settings: PickerSettings = {}): Field<string> {
  return {
    initial: "",
    render: ({ name, value, onChange }) => (
      <SubuserPicker
        label={label}
        name={name}
        value={value ? [value] : []}
        onChange={(ids) => onChange(ids[0] ?? "")}
        {...settings}
      />
    ),
  };
}

/** A toolbar's sub-user filter: all, or one found by label search. */
export function SubuserFilter(props: { value: string; onChange: (id: string) => void; product?: Product }) {
  return (
    <SubuserPicker
      label="Sub-user"
      name="subuser"
      value={props.value ? [props.value] : []}
      onChange={(ids) => props.onChange(ids[0] ?? "")}
      product={props.product}
      all
    />
  );
}

/**
 * The one sub-user picker: sub-users found by searching their labels through the API (`label_contains`), so any
 * sub-user of an account of any size can be picked, not only those of a first page. Checkboxes when `multiple`,
 * else radios (with "All" when `all`). The picked ones stay listed whatever the search.
 */
function SubuserPicker(
  props: PickerSettings & {
    label: string;
    name: string;
    value: string[];
    onChange: (value: string[]) => void;
    multiple?: boolean;
    all?: boolean;
  },
) {
  const session = useSession();
  const { client, subuserLabels } = session;
  const [search, setSearch] = useState("");
  const term = search.trim().toLowerCase();
  const product = props.product;
  const found = useLoad(async () => {
    if (!term) return [];
    const page = await client.get("/subusers", {
      params: { query: { limit: FOUND_SHOWN, label_contains: term, ...(product ? { product } : {}) } },
    });
    rememberLabels(session, page.data);
    return page.data;
  }, [term, product]);
  // Picked before this search (an address's filter, a key's binding): named once looked up.
  useSubuserLabels(props.value);
  const results = found.data ?? [];
  const pickedElsewhere = props.value
    .filter((id) => !results.some((one) => one.id === id))
    .map((id) => ({ id, label: subuserLabels.get(id) ?? id }));
  const pick = (id: string, checked: boolean) => {
    if (!props.multiple) props.onChange(id ? [id] : []);
    else props.onChange(checked ? [...props.value, id] : props.value.filter((one) => one !== id));
  };
  const options = [...(props.all ? [{ id: "", label: "All" }] : []), ...pickedElsewhere, ...results];
  return (
    <fieldset class="picker">
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
      <div class="picker-options">
        {options.map((one) => (
          <label class="check" key={one.id}>
            <input
              type={props.multiple ? "checkbox" : "radio"}
              name={props.name}
              value={one.id}
              checked={one.id ? props.value.includes(one.id) : props.value.length === 0}
              onChange={(event) => pick(one.id, event.currentTarget.checked)}
            />
            {one.label}
          </label>
        ))}
      </div>
      {term && !found.loading && results.length === 0 ? <small>No sub-user's label contains “{term}”.</small> : null}
      {props.hint ? <small>{props.hint}</small> : null}
    </fieldset>
  );
}
