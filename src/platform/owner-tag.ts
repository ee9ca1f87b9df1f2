import { bytesToBase64Url } from "./base64";
import { derivedHmacKey } from "./crypto";

/**
 * A usage record's owner, as the gateway reports it (the sub-user and the account it decided for): the API signs
 * the owner of each sub-user into its node snapshot (`owner_tag`, HMAC-SHA256 under a key derived from
 * `SEALING_KEY`), and the usage route takes a record's owner from the record when its tag verifies, with no read of
 * D1. A node can report usage of a sub-user it was sent, and only for that sub-user's own account.
 */
export interface UsageOwner {
  /** The sub-user's gateway name. */
  name: string;
  subuserId: string;
  accountId: string;
}

/** Characters of the tag (base64url of the first 16 bytes of the HMAC: 128 bits). */
export const OWNER_TAG_LENGTH = 22;
export const OWNER_TAG = /^[A-Za-z0-9_-]{22}$/;

const encoder = new TextEncoder();
const LABEL = "usage-owner-tag/v1";

/** The owner's tag. */
export async function ownerTag(sealingKey: string, owner: UsageOwner): Promise<string> {
  const content = encoder.encode(`v1\n${owner.name}\n${owner.subuserId}\n${owner.accountId}`);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await derivedHmacKey(sealingKey, LABEL), content));
  return bytesToBase64Url(mac.slice(0, 16));
}

/** Whether `tag` is the owner's (constant time over the tag). */
export async function ownerTagValid(sealingKey: string, owner: UsageOwner, tag: string): Promise<boolean> {
  if (!OWNER_TAG.test(tag)) return false;
  const expected = await ownerTag(sealingKey, owner);
  let difference = 0;
  for (let i = 0; i < OWNER_TAG_LENGTH; i++) difference |= expected.charCodeAt(i) ^ tag.charCodeAt(i);
  return difference === 0;
}
