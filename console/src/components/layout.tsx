import type { ComponentChildren } from "preact";

/** A page's title (focused on navigation, for screen readers), its actions, then its content. */
export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <>
      <header class="page-head">
        <h1 tabIndex={-1} id="page-title">
          {props.title}
        </h1>
        <Actions>{props.actions}</Actions>
      </header>
      {props.children}
    </>
  );
}

/** A titled card of a page. */
export function Section(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card">
      <div class="card-head">
        <h2>{props.title}</h2>
        <Actions>{props.actions}</Actions>
      </div>
      {props.children}
    </section>
  );
}

function Actions(props: { children?: ComponentChildren }) {
  return props.children ? <div class="actions">{props.children}</div> : null;
}
