import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

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
