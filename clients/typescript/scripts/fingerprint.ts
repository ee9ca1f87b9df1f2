/**
 * The fingerprint of the contract the client's types were generated from: the SHA-256 of the OpenAPI document's
 * JSON without `servers` (which only names the origin the document was served from). The generator stamps it into
 * `src/schema.ts`; a test recomputes it from the worker's live document, so stale types fail the suite.
 * Plain TypeScript with erasable types only: Node runs it as is, and so does the test inside workerd.
 */
export async function contractFingerprint(document: Record<string, unknown>): Promise<string> {
  const { servers: _servers, ...contract } = document;
  const bytes = new TextEncoder().encode(JSON.stringify(contract));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
