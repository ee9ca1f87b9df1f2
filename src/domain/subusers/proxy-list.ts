import type { SubuserRow } from "../../db/schema";
import { randomString } from "../../platform/crypto";
import { invalidRequest } from "../../platform/validation";
import { type BandwidthProduct, bandwidthProducts } from "../../vocabulary";
import type { DomainContext, Principal } from "../context";
import { PASSWORD_PLACEHOLDER, type ProxyEntry } from "../gateway/proxy-lines";
import { buildUsername, MAX_SESSTIME_MINUTES, typeOf } from "../gateway/username";
import { findSubuser } from "./subusers";

export interface ProxyListRequest {
  /** Omitted: the sub-user's one gateway product. */
  product?: BandwidthProduct;
  country: string;
  state?: string;
  city?: string;
  asn?: number;
  /** `rotating`: one line, a new exit per connection. `sticky`: `count` lines, each its own session. */
  session: "rotating" | "sticky";
  count?: number;
  /** Minutes, with `sticky`. */
  sesstime?: number;
}

export type ProxyListColumn = "session_id" | "sesstime";

export const DEFAULT_STICKY_LINES = 10;
export const DEFAULT_SESSTIME_MINUTES = 10;
/** Session ids of 10 characters of [a-z0-9]: 36^10 ≈ 3.7·10^15, so lists of different downloads do not meet. */
const SESSION_ID_LENGTH = 10;
const SESSION_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * A sub-user's proxy lines for a target: the gateway's address and the username the grammar builds, with
 * `PASSWORD_PLACEHOLDER` where the password goes (only its hash is kept). Sticky lines get fresh random session ids,
 * so each list is a new set of sessions. 404 for a sub-user of another account, 403 outside the key's scope.
 */
export async function subuserProxyList(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  request: ProxyListRequest,
): Promise<{ subuser: SubuserRow; product: BandwidthProduct; entries: ProxyEntry<ProxyListColumn>[] }> {
  const subuser = await findSubuser(ctx, principal, id);
  const product = gatewayProduct(subuser, request.product);
  const sesstime = request.sesstime ?? DEFAULT_SESSTIME_MINUTES;
  if (request.session === "sticky" && sesstime > MAX_SESSTIME_MINUTES[product]) {
    throw invalid("sesstime", `${product} sessions last 1-${MAX_SESSTIME_MINUTES[product]} minutes.`);
  }
  const sessions =
    request.session === "sticky" ? sessionIds(request.count ?? DEFAULT_STICKY_LINES) : [null as string | null];
  const { GATEWAY_HOST: host, GATEWAY_PORT: port, GATEWAY_USER_PREFIX: prefix } = ctx.env;
  const target = {
    type: typeOf(product),
    region: request.country.toLowerCase(),
    state: request.state ?? null,
    city: request.city ?? null,
    asn: request.asn ?? null,
  };
  const entries = sessions.map((sessionId) => {
    const minutes = sessionId === null ? null : sesstime;
    return {
      host,
      port: Number(port),
      username: buildUsername(prefix, subuser.name, { ...target, sessionId, sesstime: minutes }),
      password: PASSWORD_PLACEHOLDER,
      columns: { session_id: sessionId, sesstime: minutes },
    };
  });
  return { subuser, product, entries };
}

/** The product asked for, which the sub-user must have; omitted, its only gateway product. */
function gatewayProduct(subuser: SubuserRow, asked: BandwidthProduct | undefined): BandwidthProduct {
  const own = bandwidthProducts.filter((product) => subuser.products.includes(product));
  if (asked !== undefined && own.includes(asked)) return asked;
  if (asked !== undefined) throw invalid("product", `the sub-user has no ${asked} access.`);
  const [only, other] = own;
  if (only !== undefined && other === undefined) return only;
  throw invalid(
    "product",
    only === undefined
      ? "the sub-user has neither residential nor mobile (an ISP batch's list: GET /v1/isp/batches/{id}/proxy-list)."
      : "required: the sub-user has both residential and mobile.",
  );
}

/** `count` distinct random session ids. */
function sessionIds(count: number): string[] {
  const ids = new Set<string>();
  while (ids.size < count) {
    const missing = count - ids.size;
    const drawn = randomString(missing * SESSION_ID_LENGTH, SESSION_ID_ALPHABET);
    for (let at = 0; at < drawn.length; at += SESSION_ID_LENGTH) ids.add(drawn.slice(at, at + SESSION_ID_LENGTH));
  }
  return [...ids];
}

function invalid(field: string, message: string) {
  return invalidRequest([{ field, message }]);
}
