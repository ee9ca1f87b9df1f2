import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Route } from "../router";
import { type Fields, secret } from "./fields";
import { Form } from "./form";

/**
 * The page a mailed link opens (`#/<page>?token=…`), signed in or not: a form sent with the link's token, then what
 * happened and the way to sign-in.
 */
export function MailedLinkPage<V extends object>(props: {
  route: Route;
  title: string;
  intro: ComponentChildren;
  fields: Fields<V>;
  submitLabel: string;
  submit: (values: V, token: string) => Promise<unknown>;
  done: string;
}) {
  const token = new URLSearchParams(props.route.query).get("token") ?? "";
  const [done, setDone] = useState(false);
  useEffect(() => {
    document.title = `${props.title} · Console`;
  }, [props.title]);
  return (
    <main class="sign-in" id="main">
      <h1>{props.title}</h1>
      {done ? (
        <p class="success" role="status">
          {props.done} <a href="#/">Go to sign-in</a>
        </p>
      ) : token ? (
        <>
          <p>{props.intro}</p>
          <Form
            fields={props.fields}
            submitLabel={props.submitLabel}
            submit={(values) => props.submit(values, token)}
            onDone={() => setDone(true)}
          />
        </>
      ) : (
        <p class="error" role="alert">
          This address lacks its link's token: open the link from the mail again.
        </p>
      )}
    </main>
  );
}

/** A new password, as the API takes one. */
export const newPassword = () =>
  secret("Password", {
    required: true,
    minLength: 10,
    autoComplete: "new-password",
    hint: "At least 10 characters. A few words make a strong one.",
  });
