import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { clientAddress } from "./client-address";

/** Admin API calls act as an operator: their changes are written to the audit log with the actor `admin`. */
export const actAsOperator = createMiddleware<AppEnv>(async (c, next) => {
  c.set("ctx", {
    ...c.get("ctx"),
    actor: { keyId: null, member: null, sourceIp: clientAddress(c), requestId: c.get("requestId") },
  });
  await next();
});
