import { env } from "cloudflare:workers";

// Setup files run before each test file. Its storage starts empty: every migration is applied in one D1 batch (one
// transaction), recorded as wrangler records them. `applyD1Migrations` sends a batch per migration, which took
// seconds per file in workerd: most of the suite's time.
const MIGRATIONS_TABLE = "d1_migrations";

const migrated = await env.DB.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
  .bind(MIGRATIONS_TABLE)
  .first();
if (!migrated) {
  const recorded = env.DB.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?)`);
  await env.DB.batch([
    env.DB.prepare(
      `CREATE TABLE ${MIGRATIONS_TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, ` +
        "applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
    ),
    ...env.TEST_MIGRATIONS.flatMap((migration) => [
      ...migration.queries.map((query) => env.DB.prepare(query)),
      recorded.bind(migration.name),
    ]),
  ]);
}

// A runtime's first request would load the worker's modules (seconds on a busy machine): loaded here instead, not in
// a file's first test. No request is made: ids made now, at the real time, would outlast a test that moves time back.
await import("../../src/index");
