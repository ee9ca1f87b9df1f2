import type { ComponentChildren } from "preact";

export function Pill(props: { tone?: "good" | "warn" | "bad" | "info"; children: ComponentChildren }) {
  return <span class={`pill ${props.tone ?? ""}`}>{props.children}</span>;
}
