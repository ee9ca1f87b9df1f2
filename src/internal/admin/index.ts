import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { internalAuth } from "../../middleware/internal-auth";
import { jsonBody } from "../../middleware/json-body";
import { actAsOperator } from "../../middleware/operator-actor";
import { validationHook } from "../../platform/validation";
import * as addMember from "./add-member";
import * as createAccount from "./create-account";
import * as creditAccount from "./credit-account";
import * as getAccount from "./get-account";
import * as getPriceCatalogue from "./get-price-catalogue";
import * as issueApiKey from "./issue-api-key";
import * as issueGatewayNodeCredential from "./issue-gateway-node-credential";
import * as listAccounts from "./list-accounts";
import * as listApiKeys from "./list-api-keys";
import * as listGatewayNodeCredentials from "./list-gateway-node-credentials";
import * as revokeApiKey from "./revoke-api-key";
import * as revokeGatewayNodeCredential from "./revoke-gateway-node-credential";
import * as setBandwidthPrice from "./set-bandwidth-price";
import * as setCustomTier from "./set-custom-tier";
import * as setIspAsnPrice from "./set-isp-asn-price";
import * as setTier from "./set-tier";
import * as setTrafficShards from "./set-traffic-shards";
import * as updateAccount from "./update-account";

/**
 * The operators' and dashboard's API, behind ADMIN_TOKEN: accounts, keys, an account's first member, prices,
 * gateway nodes' credentials.
 */
export function adminApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use("*", internalAuth("ADMIN_TOKEN"), actAsOperator, jsonBody);
  app.openapi(createAccount.route, createAccount.handler);
  app.openapi(listAccounts.route, listAccounts.handler);
  app.openapi(getAccount.route, getAccount.handler);
  app.openapi(updateAccount.route, updateAccount.handler);
  app.openapi(creditAccount.route, creditAccount.handler);
  app.openapi(issueApiKey.route, issueApiKey.handler);
  app.openapi(listApiKeys.route, listApiKeys.handler);
  app.openapi(addMember.route, addMember.handler);
  app.openapi(revokeApiKey.route, revokeApiKey.handler);
  app.openapi(issueGatewayNodeCredential.route, issueGatewayNodeCredential.handler);
  app.openapi(listGatewayNodeCredentials.route, listGatewayNodeCredentials.handler);
  app.openapi(revokeGatewayNodeCredential.route, revokeGatewayNodeCredential.handler);
  app.openapi(getPriceCatalogue.route, getPriceCatalogue.handler);
  app.openapi(setBandwidthPrice.route, setBandwidthPrice.handler);
  app.openapi(setIspAsnPrice.route, setIspAsnPrice.handler);
  app.openapi(setTier.route, setTier.handler);
  app.openapi(setCustomTier.route, setCustomTier.handler);
  app.openapi(setTrafficShards.route, setTrafficShards.handler);
  return app;
}
