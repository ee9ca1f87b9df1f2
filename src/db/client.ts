import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = DrizzleD1Database<typeof schema>;

const clients = new WeakMap<D1Database, Database>();

/** One drizzle client per D1 binding, reused across requests of the isolate. */
export function database(d1: D1Database): Database {
  let db = clients.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    clients.set(d1, db);
  }
  return db;
}

/**
 * A drizzle client whose reads may be served by any of D1's read replicas (a `first-unconstrained` session): for
 * reads that tolerate a replica's lag, so they take no time on the primary. A new session per use.
 */
export function replicaDatabase(d1: D1Database): Database {
  // A session speaks the part of a binding drizzle uses for reads (`prepare`, `batch`).
  return drizzle(d1.withSession("first-unconstrained") as unknown as D1Database, { schema });
}
