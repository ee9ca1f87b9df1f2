import { z } from "@hono/zod-openapi";
import { idParam } from "../../platform/fields";

/** What the admin operations share: their tag and the account id in their path. */
export const tags = ["Admin"];
export const accountParams = z.object({ id: idParam("account").openapi({ param: { name: "id", in: "path" } }) });
export { bandwidthProductSchema as bandwidthProduct } from "../../resources/vocabulary";
/** The largest amount an operator may credit or set as a price, in USD. */
export const MAX_ADMIN_USD = 10_000_000;
