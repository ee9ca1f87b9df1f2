import { useState } from "preact/hooks";

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
      <CopyRow label={props.label} value={props.value} secret />
    </div>
  );
}

export function Copyable(props: { label: string; value: string }) {
  return (
    <div class="copyable">
      <span class="copy-label">{props.label}</span>
      <CopyRow label={props.label} value={props.value} />
    </div>
  );
}

function CopyRow(props: { label: string; value: string; secret?: boolean }) {
  return (
    <div class="copy-row">
      <code data-secret={props.secret ? "" : undefined}>{props.value}</code>
      <CopyButton text={props.value} label={props.label} />
    </div>
  );
}
