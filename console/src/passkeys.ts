/**
 * Passkeys in this browser: the WebAuthn ceremonies, from the API's JSON options to the JSON answer it verifies
 * (`PublicKeyCredential.parse…OptionsFromJSON` and `toJSON`, so no encoding library is needed). A browser without
 * them is told apart up front: the pages say so instead of offering a button that cannot work.
 */
import type { ProxyAccountClient, Schemas } from "./api";

/** Whether this browser can add and use passkeys from the API's options as they come. */
export function passkeysSupported(): boolean {
  return (
    typeof window.PublicKeyCredential === "function" &&
    typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function" &&
    typeof PublicKeyCredential.parseRequestOptionsFromJSON === "function"
  );
}

/** The browser or the authenticator stopped a ceremony (cancelled, timed out, refused): said in plain words. */
export class PasskeyError extends Error {
  override name = "PasskeyError";
}

/** A name for a new passkey, from the device it is made on ("Passkey on Mac"); the member may change it. */
export function suggestedPasskeyName(userAgent = navigator.userAgent): string {
  const device =
    [
      [/iPhone/, "iPhone"],
      [/iPad/, "iPad"],
      [/Android/, "Android"],
      [/Mac OS X|Macintosh/, "Mac"],
      [/Windows/, "Windows"],
      [/CrOS/, "ChromeOS"],
      [/Linux/, "Linux"],
    ].find(([pattern]) => (pattern as RegExp).test(userAgent))?.[1] ?? "this device";
  return `Passkey on ${device}`;
}

/** Adds a passkey to the signed-in member: options, the browser's create, then the answer to the API. */
export async function addPasskey(client: ProxyAccountClient, name: string): Promise<Schemas["Passkey"]> {
  const options = await client.post("/auth/passkeys/options");
  const created = await ceremony(() =>
    navigator.credentials.create({
      publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(
        options as unknown as PublicKeyCredentialCreationOptionsJSON,
      ),
    }),
  );
  return client.post("/auth/passkeys", {
    body: { name, credential: created.toJSON() as Schemas["PasskeyRegistrationCredential"] },
  });
}

/** The browser's answer to the API's sign-in options: the person picks a passkey of this site and unlocks it. */
export async function passkeyAssertion(
  options: Schemas["PasskeyRequestOptions"],
): Promise<Schemas["PasskeyAuthenticationCredential"]> {
  const answer = await ceremony(() =>
    navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(
        options as unknown as PublicKeyCredentialRequestOptionsJSON,
      ),
    }),
  );
  return answer.toJSON() as Schemas["PasskeyAuthenticationCredential"];
}

/** Runs a ceremony; what the browser refuses becomes a `PasskeyError` saying what happened. */
async function ceremony(run: () => Promise<Credential | null>): Promise<PublicKeyCredential> {
  let credential: Credential | null;
  try {
    credential = await run();
  } catch (error) {
    throw new PasskeyError(refusal(error));
  }
  if (!(credential instanceof PublicKeyCredential)) throw new PasskeyError("The browser returned no passkey.");
  return credential;
}

function refusal(error: unknown): string {
  const name = error instanceof DOMException ? error.name : "";
  switch (name) {
    case "NotAllowedError":
      return "The passkey request was cancelled or timed out, or no passkey of this site was found on the device.";
    case "InvalidStateError":
      return "This device already holds a passkey of yours for this site.";
    case "SecurityError":
      return "The browser does not allow passkeys on this address.";
    case "NotSupportedError":
      return "This browser or device does not support the kind of passkey the console asks for.";
    default:
      return `The passkey could not be used: ${error instanceof Error ? error.message : String(error)}`;
  }
}
