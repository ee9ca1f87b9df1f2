import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ingestUsageBatch } from "../../domain/traffic/ingest";
import { plainlyValidBatch, usageBatchSchema } from "../../domain/traffic/usage-records";
import type { AppEnv } from "../../env";
import { integer } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { validate } from "../../platform/validation";

export const route = internalRoute(
  {
    operationId: "reportUsage",
    method: "post",
    path: "/usage",
    tags: ["Gateway"],
    summary: "Report usage",
    description:
      "A batch of 1-1,000 finished proxy requests (the body may be `Content-Encoding: gzip`). Usage reaches " +
      "traffic, sessions and the request log within seconds, and the pools and monthly caps within a minute (at " +
      "once when one runs out), exactly once: the same `batch_id` again within 7 days, even racing the first " +
      "post, is accepted and counted once (`duplicate: true` for every post after the first, with the first " +
      "answer's counts). Records of unknown sub-users or of a product their sub-user lacks are dropped and counted " +
      "(`dropped`); a deleted sub-user's records count while their minute began within 60 s of the deletion (the " +
      "drain) and are dropped by the account's store after that. A record carrying its owner from the node's " +
      "snapshot (`subuser`, `account`, `owner_tag`) is counted for that owner with no lookup when the tag matches " +
      "its username's sub-user name, and dropped and counted when it does not. Sticky records with `session_gen` " +
      "are summed into sessions the account's store names from the username, the generation and the first " +
      "request's time: listed once that usage is applied. An invalid record fails the whole batch (422 naming its " +
      "index).",
    request: { body: jsonBody(usageBatchSchema) },
    errors: ["payload_too_large"],
    responses: {
      202: jsonContent(
        z
          .object({
            accepted: integer(0, 1000),
            dropped: integer(0, 1000).openapi({
              description:
                "Records of unknown sub-users, of a product their sub-user lacks, or whose `owner_tag` does not match.",
            }),
            duplicate: z.boolean().openapi({ description: "This batch_id was reported before." }),
          })
          .openapi("UsageAccepted"),
        "Accepted.",
      ),
    },
  },
  "GatewayToken",
);

/**
 * Registered with `app.post` and documented apart (gateway/index.ts): `app.openapi` would run zod over all
 * 1,000 records first, where `plainlyValidBatch` takes well-formed batches at a tenth of the cost and leaves the
 * rest to the same schema and its 422.
 */
export const handler = async (c: Context<AppEnv>) => {
  const body: unknown = await c.req.json();
  const batch = plainlyValidBatch(body) ?? validate(usageBatchSchema, body, "json");
  const ctx = { ...c.get("ctx"), waitUntil: (work: Promise<unknown>) => c.executionCtx.waitUntil(work) };
  return c.json(await ingestUsageBatch(ctx, batch), 202);
};
