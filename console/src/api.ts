/** The console's door to the project's typed client: the client, its error and the API's own types. */
import type { components } from "../../clients/typescript/src/index";

export {
  ApiError,
  createProxyAccountClient,
  type operations,
  type ProxyAccountClient,
} from "../../clients/typescript/src/index";

export type Schemas = components["schemas"];
/** An area of the key scopes (`billing`, `traffic`…): what a page reads decides who sees it. */
export type Area = keyof Schemas["ApiKeyScopes"];
export type Product = Schemas["Order"]["product"];
/** The products the gateway serves by username (ISP IPs take their own credentials). */
export type GatewayProduct = Exclude<Product, "isp">;

/** The headers of a call gated by MFA: the code, when the account asked for one. */
export function mfaHeaders(code: string | undefined): { "X-MFA-Code"?: string } {
  return code ? { "X-MFA-Code": code } : {};
}
