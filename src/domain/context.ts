import { type Database, database } from "../db/client";

/** What every domain verb runs with: the database and the bindings. */
export interface DomainContext {
  db: Database;
  env: Cloudflare.Env;
}

export function domainContext(env: Cloudflare.Env): DomainContext {
  return { db: database(env.DB), env };
}
