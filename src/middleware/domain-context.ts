import { createMiddleware } from "hono/factory";
import { domainContext } from "../domain/context";
import type { AppEnv } from "../env";

/** Gives handlers the context every domain verb takes: `c.get("ctx")`. */
export const withDomainContext = createMiddleware<AppEnv>(async (c, next) => {
  c.set("ctx", domainContext(c.env));
  await next();
});
