import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as addBatchWhitelistEntry from "./add-batch-whitelist-entry";
import * as getBatch from "./get-batch";
import * as getBatchProxyList from "./get-batch-proxy-list";
import * as getInventory from "./get-inventory";
import * as listBatchIps from "./list-batch-ips";
import * as listBatchWhitelist from "./list-batch-whitelist";
import * as listBatches from "./list-batches";
import * as refreshBatch from "./refresh-batch";
import * as releaseBatch from "./release-batch";
import * as removeBatchWhitelistEntry from "./remove-batch-whitelist-entry";
import * as renewBatch from "./renew-batch";
import * as replaceIp from "./replace-ip";
import * as rotateBatchPassword from "./rotate-batch-password";

export function ispRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getInventory.route, getInventory.handler);
  app.openapi(listBatches.route, listBatches.handler);
  app.openapi(getBatch.route, getBatch.handler);
  app.openapi(listBatchIps.route, listBatchIps.handler);
  app.openapi(getBatchProxyList.route, getBatchProxyList.handler);
  app.openapi(refreshBatch.route, refreshBatch.handler);
  app.openapi(renewBatch.route, renewBatch.handler);
  app.openapi(rotateBatchPassword.route, rotateBatchPassword.handler);
  app.openapi(releaseBatch.route, releaseBatch.handler);
  app.openapi(replaceIp.route, replaceIp.handler);
  app.openapi(listBatchWhitelist.route, listBatchWhitelist.handler);
  app.openapi(addBatchWhitelistEntry.route, addBatchWhitelistEntry.handler);
  app.openapi(removeBatchWhitelistEntry.route, removeBatchWhitelistEntry.handler);
}
