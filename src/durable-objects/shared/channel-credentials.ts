/**
 * A channel an API key opened (a WebSocket that outlives the request that opened it, such as the live tail) lives no
 * longer than the credential it was opened with. Each socket carries the key, the token it used and when that
 * token stops working; the API tells the channel's object of every change of the key (`KeyReview`), and the object
 * closes the key's sockets the review no longer covers, and each socket at its deadline, with a close code per
 * cause that a client can tell apart. Pure: every object that holds key channels runs these rules as they are.
 */

/** Why a channel ended; each has its own close code (4000–4999 are the application's). */
export const channelCloses = {
  revoked: { code: 4001, reason: "api_key_revoked: the API key that opened this channel was revoked" },
  expired: { code: 4002, reason: "api_key_expired: the API key that opened this channel has expired" },
  rotated: { code: 4003, reason: "api_key_rotated: the token that opened this channel was replaced by a rotation" },
  scope: { code: 4004, reason: "insufficient_scope: the API key no longer covers what this channel shows" },
  session: { code: 4005, reason: "session_ended: the member's session that opened this channel has ended" },
} as const;
export type ChannelEnd = keyof typeof channelCloses;

/** What a channel's socket knows of the credential that opened it. */
export interface ChannelCredential {
  keyId: string;
  /** The SHA-256 of the token the channel was opened with. */
  tokenHash: string;
  /** When the key expires (ms); null: never. */
  keyExpiresAt: number | null;
  /** When a rotation's grace for this token ends (ms); null: it is the key's current token. */
  tokenReplacedUntil: number | null;
  /** Set once a review found the key no longer covers the channel. */
  ended?: ChannelEnd;
  /**
   * Opened by a member's session (`keyId` is then the member's id, `tokenHash` the session's, `tokenReplacedUntil`
   * its absolute end): its end, whatever the cause but a narrower reach, is `session`.
   */
  session?: boolean;
}

/** A key as the API has it now, told to the objects holding its channels after every change of it. */
export interface KeyReview {
  revoked: boolean;
  expiresAt: number | null;
  /** The tokens accepted: the current one (`until` null) and a rotated one during its grace. */
  tokens: Array<{ hash: string; until: number | null }>;
  /**
   * Whether the key still covers a channel, by what the channel shows (the live tail: its product and sub-users):
   * its product scope, its area scope, and the sub-users it is bound to (null or absent: not bound).
   */
  covers: { products: string[] | null; area: boolean; subuserIds?: string[] | null };
}

/**
 * The credential as the review has it: its deadlines moved, or ended for good. `subuserIds`: the sub-users the
 * channel shows (null: every sub-user of the account), all of which a bound key must still reach.
 */
export function reviewed(
  credential: ChannelCredential,
  review: KeyReview,
  product: string,
  subuserIds: string[] | null = null,
): ChannelCredential {
  if (review.revoked) return { ...credential, ended: credential.session ? "session" : "revoked" };
  const token = review.tokens.find((accepted) => accepted.hash === credential.tokenHash);
  if (!token) return { ...credential, ended: credential.session ? "session" : "rotated" };
  const { products, area, subuserIds: bound = null } = review.covers;
  if (!area || (products !== null && !products.includes(product))) return { ...credential, ended: "scope" };
  if (bound !== null && (subuserIds === null || subuserIds.some((id) => !bound.includes(id)))) {
    return { ...credential, ended: "scope" };
  }
  return { ...credential, keyExpiresAt: review.expiresAt, tokenReplacedUntil: token.until };
}

/** Why the channel must end at `at`, or null while its credential holds. */
export function channelEnd(credential: ChannelCredential, at: number): ChannelEnd | null {
  if (credential.ended) return credential.ended;
  if (credential.keyExpiresAt !== null && credential.keyExpiresAt <= at) return "expired";
  if (credential.tokenReplacedUntil !== null && credential.tokenReplacedUntil <= at) {
    return credential.session ? "session" : "rotated";
  }
  return null;
}

/** When the credential stops working by itself (ms), or null: never, unless a review ends it. */
export function channelDeadline(credential: ChannelCredential): number | null {
  const deadlines = [credential.keyExpiresAt, credential.tokenReplacedUntil].filter((at) => at !== null);
  return deadlines.length === 0 ? null : Math.min(...deadlines);
}
