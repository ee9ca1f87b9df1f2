// `npm run tail -- <API_KEY> [--product residential] [--subuser sub_…] [--domain example.com] [--status 5xx]
// [--error-code upstream-timeout] [--base http://localhost:8787] [--json]`: the account's sampled requests as the
// gateway reports them, one line each (`--json`: the records as sent), until Ctrl-C. The base URL defaults to
// $API_BASE, then to the local `npm run dev` server.
import { parseArgs } from "node:util";
import { openTail } from "./lib/tail-client.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    product: { type: "string", default: "residential" },
    subuser: { type: "string" },
    domain: { type: "string" },
    status: { type: "string" },
    "error-code": { type: "string" },
    base: { type: "string", default: process.env.API_BASE ?? "http://localhost:8787" },
    json: { type: "boolean", default: false },
  },
});
const token = positionals[0] ?? process.env.API_KEY;
if (!token) {
  console.error(
    "usage: npm run tail -- <API_KEY> [--product …] [--subuser …] [--domain …] [--status …] [--error-code …]",
  );
  process.exit(2);
}

/** One line a record: time, sub-user, request, status, bytes, exit, tag and error when set. */
function line(record) {
  return [
    record.ts,
    record.subuser,
    `${record.method} ${record.target_host}`,
    record.status,
    `${record.bytes} B`,
    `${record.exit_ip} ${record.exit_geo} AS${record.exit_asn}`,
    record.tag ?? "",
    record.error_code ?? "",
  ]
    .join("  ")
    .trimEnd();
}

try {
  const tail = await openTail({
    base: values.base,
    token,
    product: values.product,
    filters: {
      subuser: values.subuser,
      domain: values.domain,
      status: values.status,
      error_code: values["error-code"],
    },
    onRecord: (record) => console.log(values.json ? JSON.stringify(record) : line(record)),
  });
  console.error(`tailing ${values.product} requests at ${values.base} (Ctrl-C to stop)`);
  process.on("SIGINT", tail.close);
  const { code, reason } = await tail.closed;
  if (code !== 1000) {
    console.error(`the tail closed: ${code} ${reason}`);
    process.exit(1);
  }
} catch (error) {
  console.error(`could not open the tail: ${error.message}`);
  process.exit(1);
}
