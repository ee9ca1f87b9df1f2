// `npm run dev`: local D1 migrated, a demo account seeded, its API key and the docs URL printed,
// the API served on http://localhost:8787.
import { ensureAccount, prepare, startWorker } from "./lib/local-worker.mjs";

const PORT = 8787;
const vars = prepare();
const { child, base } = await startWorker(PORT);
const demo = await ensureAccount(base, vars.ADMIN_TOKEN, {
  email: "demo@example.com",
  plan: "pro",
  balance_usd: 500,
  file: "demo-account.json",
});

console.log(`
  Proxy Account API is running.

    Base URL   http://localhost:${PORT}/v1
    Docs       http://localhost:${PORT}/v1/docs
    OpenAPI    http://localhost:${PORT}/v1/openapi.json
    Account    ${demo.email} (${demo.accountId}), plan pro
    API key    ${demo.token}

  Try:  curl -H "Authorization: Bearer ${demo.token}" http://localhost:${PORT}/v1/users/me
`);

for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
