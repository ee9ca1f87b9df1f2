import { z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { integer, token } from "../../platform/fields";

/** The fields the node side of the gateway contract shares (docs/gateway.md, "Deciding at the node"). */

export { nodeId } from "../../resources/gateway-node";

export const gatewayName = () =>
  token(/^[\x21-\x7E]{1,64}$/, 64).openapi({ description: "A sub-user's gateway name.", example: "s1a2b3c4d5e" });

export const gatewayProduct = () => z.enum(products);

/** A count a node reports or is granted (connections or requests per second). */
export const shareCount = () => integer(0, 1_000_000);
