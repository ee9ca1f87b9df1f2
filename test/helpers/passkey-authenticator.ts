import { isoCBOR } from "@simplewebauthn/server/helpers";
import { BASE } from "./http";

/**
 * A software authenticator (ES256, "none" attestation) that answers WebAuthn options as a browser would send them:
 * `PublicKeyCredential.toJSON()`'s shape. Each test drives what a real one decides: the origin it reports, whether
 * the person was verified, its signature counter.
 */

const encoder = new TextEncoder();
const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const fromB64url = (text: string) =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (char) => char.charCodeAt(0));
const sha256 = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};
const uint32 = (value: number) =>
  new Uint8Array([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface AnswerOptions {
  /** The page's origin the browser reports (default: the API's own). */
  origin?: string;
  /** Whether the person was verified (PIN, biometrics); default true. */
  verified?: boolean;
  /** The signature counter to report; default: one more than the last. */
  counter?: number;
}

/** The parts of the API's WebAuthn options an authenticator reads. */
export interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
export interface RequestOptions {
  challenge: string;
  rpId?: string;
}

export interface SoftPasskey {
  credentialId: string;
  userHandle: string | null;
  /** Answers `navigator.credentials.create` with these options. */
  register(options: CreationOptions, answer?: AnswerOptions): Promise<object>;
  /** Answers `navigator.credentials.get` with these options. */
  signIn(options: RequestOptions, answer?: AnswerOptions): Promise<object>;
}

export async function softPasskey(): Promise<SoftPasskey> {
  const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", keys.publicKey)) as JsonWebKey;
  const cosePublicKey = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, fromB64url(jwk.x as string)],
      [-3, fromB64url(jwk.y as string)],
    ]),
  );
  const credentialBytes = crypto.getRandomValues(new Uint8Array(16));
  let counter = 0;
  const flagsOf = (answer: AnswerOptions, extra = 0) => FLAG_UP | (answer.verified === false ? 0 : FLAG_UV) | extra;
  const clientData = (type: string, challenge: string, answer: AnswerOptions) =>
    encoder.encode(JSON.stringify({ type, challenge, origin: answer.origin ?? BASE, crossOrigin: false }));

  const credentialOf = (response: Record<string, unknown>) => ({
    id: passkey.credentialId,
    rawId: passkey.credentialId,
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: {},
    response,
  });

  const passkey: SoftPasskey = {
    credentialId: b64url(credentialBytes),
    userHandle: null,
    async register(options, answer = {}) {
      passkey.userHandle = options.user.id;
      const rpIdHash = await sha256(encoder.encode(options.rp.id ?? new URL(BASE).hostname));
      const authData = concat(
        rpIdHash,
        new Uint8Array([flagsOf(answer, FLAG_AT)]),
        uint32(answer.counter ?? counter),
        new Uint8Array(16),
        new Uint8Array([0, credentialBytes.length]),
        credentialBytes,
        cosePublicKey,
      );
      const attestationObject = isoCBOR.encode(
        new Map<string, unknown>([
          ["fmt", "none"],
          ["attStmt", new Map()],
          ["authData", authData],
        ]) as never,
      );
      return credentialOf({
        clientDataJSON: b64url(clientData("webauthn.create", options.challenge, answer)),
        attestationObject: b64url(attestationObject),
        transports: ["internal", "hybrid"],
      });
    },
    async signIn(options, answer = {}) {
      counter = answer.counter ?? counter + 1;
      const rpIdHash = await sha256(encoder.encode(options.rpId ?? new URL(BASE).hostname));
      const authData = concat(rpIdHash, new Uint8Array([flagsOf(answer)]), uint32(counter));
      const clientDataJSON = clientData("webauthn.get", options.challenge, answer);
      const signed = concat(authData, await sha256(clientDataJSON));
      const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, signed));
      return credentialOf({
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(derSignature(raw)),
        ...(passkey.userHandle ? { userHandle: passkey.userHandle } : {}),
      });
    },
  };
  return passkey;
}

/** WebCrypto signs ECDSA as r‖s; WebAuthn carries it DER-encoded. */
function derSignature(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const trimmed = bytes.slice(start);
    const padded = (trimmed[0] as number) & 0x80 ? concat(new Uint8Array([0]), trimmed) : trimmed;
    return concat(new Uint8Array([0x02, padded.length]), padded);
  };
  const body = concat(integer(raw.slice(0, 32)), integer(raw.slice(32)));
  return concat(new Uint8Array([0x30, body.length]), body);
}
