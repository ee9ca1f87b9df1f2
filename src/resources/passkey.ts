import { z } from "@hono/zod-openapi";
import type { MemberPasskeyRow } from "../db/schema";
import { toIso } from "../platform/clock";
import { id, idParam, integer, list, text, timestamp, token } from "../platform/fields";

/**
 * A passkey and the browser's WebAuthn answers, as JSON: binary fields base64url-encoded, the shape
 * `PublicKeyCredential.toJSON()` gives and `@simplewebauthn/browser` sends. Fields a browser adds beyond these are
 * ignored (the standard grows); every field is bounded.
 */

export const passkeyIdParam = z.object({ id: idParam("passkey") });

const base64Url = (max: number) => token(/^[A-Za-z0-9_-]*$/, max, "must be base64url");
const transports = list(token(/^[a-z-]{1,20}$/, 20), 8).openapi({ example: ["internal", "hybrid"] });

/** An example of a browser's answer: the credential's envelope around its `response`. */
export function exampleCredential(response: Record<string, unknown>) {
  const id = "hX8kq1Zb2Qy3Wv4Ut5Sr6Q";
  return {
    id,
    rawId: id,
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: {},
    response,
  };
}

const credentialFields = {
  id: base64Url(1400).min(1).openapi({ description: "The credential id (base64url)." }),
  rawId: base64Url(1400).min(1),
  type: z.literal("public-key"),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
  clientExtensionResults: z.object({}).passthrough().openapi({ description: "The browser's extension outputs." }),
};

export const registrationCredentialSchema = z
  .object({
    ...credentialFields,
    response: z.object({
      clientDataJSON: base64Url(4096),
      attestationObject: base64Url(16384),
      transports: transports.optional(),
      authenticatorData: base64Url(16384).optional(),
      publicKey: base64Url(4096).optional(),
      publicKeyAlgorithm: integer(-65_535, 65_535).optional(),
    }),
  })
  .openapi("PasskeyRegistrationCredential", {
    description: "What `navigator.credentials.create` returned, as JSON (`PublicKeyCredential.toJSON()`).",
    example: exampleCredential({
      clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0",
      attestationObject: "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVg",
      transports: ["internal", "hybrid"],
    }),
  });

export const authenticationCredentialSchema = z
  .object({
    ...credentialFields,
    response: z.object({
      clientDataJSON: base64Url(4096),
      authenticatorData: base64Url(16384),
      signature: base64Url(2048),
      userHandle: base64Url(256).optional(),
    }),
  })
  .openapi("PasskeyAuthenticationCredential", {
    description: "What `navigator.credentials.get` returned, as JSON (`PublicKeyCredential.toJSON()`).",
    example: exampleCredential({
      clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0",
      authenticatorData: "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ",
      signature: "MEUCIQDx",
      userHandle: "bWVtXzAxSkQyVzZRNkoxUVI",
    }),
  });

/** WebAuthn options, as the browser's `parse…OptionsFromJSON` takes them (the standard's JSON form). */
export const creationOptionsSchema = z
  .object({})
  .passthrough()
  .openapi("PasskeyCreationOptions", {
    description:
      "`PublicKeyCredentialCreationOptionsJSON` for `navigator.credentials.create` (pass it to " +
      "`PublicKeyCredential.parseCreationOptionsFromJSON`): the API as relying party (its own host), a challenge " +
      "valid five minutes and once, a discoverable credential with user verification required, the member's " +
      "passkeys excluded.",
  });

export const requestOptionsSchema = z
  .object({})
  .passthrough()
  .openapi("PasskeyRequestOptions", {
    description:
      "`PublicKeyCredentialRequestOptionsJSON` for `navigator.credentials.get` (pass it to " +
      "`PublicKeyCredential.parseRequestOptionsFromJSON`): a challenge valid five minutes and once, any passkey " +
      "of this site, user verification required.",
  });

export const passkeySchema = z
  .object({
    id: id("passkey"),
    name: text(100),
    backed_up: z.boolean().openapi({ description: "Synced by its provider to the person's other devices." }),
    transports: list(text(20), 8).openapi({ description: "How the browser reaches the authenticator." }),
    created_at: timestamp(),
    last_used_at: timestamp().nullable(),
  })
  .openapi("Passkey");

export const newPasskeySchema = z
  .strictObject({
    name: text(100, 1).openapi({ description: 'What the member calls it ("MacBook Touch ID").' }),
    credential: registrationCredentialSchema,
  })
  .openapi("NewPasskey", {
    example: {
      name: "MacBook Touch ID",
      credential: exampleCredential({
        clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0",
        attestationObject: "o2NmbXRkbm9uZQ",
      }),
    },
  });

export function presentPasskey(row: MemberPasskeyRow): z.infer<typeof passkeySchema> {
  return {
    id: row.id,
    name: row.name,
    backed_up: row.backedUp,
    transports: JSON.parse(row.transports),
    created_at: toIso(row.createdAt),
    last_used_at: row.lastUsedAt === null ? null : toIso(row.lastUsedAt),
  };
}
