import * as format from "../format";
import { PAGE_SIZES, type Paging } from "../hooks/use-paged";
import { Choice } from "./select";

const SIZES = PAGE_SIZES.map((size) => ({ value: String(size), label: String(size) }));

/**
 * Previous and Next over a list's pages, the rows shown and whether more follow, and the page size. The buttons stay
 * focusable at either end (`aria-disabled`), so a keyboard user paging on is not dropped to the top of the document;
 * the row count is a status, read out on each move.
 */
export function Pager(props: { paging: Paging; noun: string }) {
  const { paging } = props;
  const several = paging.more || paging.back !== null;
  return (
    <nav class="pager" aria-label={`Pages of ${props.noun}`}>
      <p class="muted" role="status" data-testid="pager-status">
        {summary(paging, props.noun)}
      </p>
      {several ? (
        <>
          <button
            type="button"
            class="small"
            aria-disabled={paging.back === null || paging.busy}
            onClick={() => paging.back && paging.previous()}
          >
            {paging.back === "first" ? "First page" : "Previous"}
          </button>
          <button
            type="button"
            class="small"
            aria-disabled={!paging.more || paging.busy}
            onClick={() => paging.more && paging.next()}
          >
            Next
          </button>
          <Choice
            label="Per page"
            value={String(paging.limit)}
            options={SIZES}
            onChange={(size) => paging.setLimit(Number(size))}
          />
        </>
      ) : null}
    </nav>
  );
}

function summary(paging: Paging, noun: string): string {
  if (paging.last === 0) return `No ${noun} on this page.`;
  const shown = `${noun[0]!.toUpperCase()}${noun.slice(1)} ${format.count(paging.first)}–${format.count(paging.last)}`;
  if (paging.total !== null) return `${shown} of ${format.count(paging.total)}`;
  return `${shown} · more follow`;
}
