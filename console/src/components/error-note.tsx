import { ApiError } from "../api";
import { PasskeyError } from "../passkeys";

/**
 * An API error as the API gave it: its message, code, request id and a link to the code's documentation; or what the
 * browser refused of a passkey ceremony.
 */
export function ErrorNote({ error }: { error: unknown }) {
  if (error instanceof ApiError) {
    return (
      <div class="error" role="alert">
        <strong>{error.message}</strong>
        {error.details?.length ? (
          <ul>
            {error.details.map((problem) => (
              <li key={problem.field}>
                {problem.field}: {problem.message}
              </li>
            ))}
          </ul>
        ) : null}
        <small>
          <code>{error.code}</code> · HTTP {error.status}
          {error.request_id ? <> · request {error.request_id}</> : null}
          {error.doc_url ? (
            <>
              {" · "}
              <a href={error.doc_url} target="_blank" rel="noopener">
                What this means
              </a>
            </>
          ) : null}
        </small>
      </div>
    );
  }
  if (error instanceof PasskeyError) {
    return (
      <div class="error" role="alert">
        <strong>{error.message}</strong>
        <small>Nothing was sent to the API: try again, or use another way.</small>
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      <strong>{error instanceof Error ? error.message : String(error)}</strong>
      <small>The API could not be reached. Check the connection and try again.</small>
    </div>
  );
}
