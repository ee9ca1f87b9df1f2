/** Base64 (RFC 4648 §4) and base64url (§5, unpadded) between bytes and text: the one set of helpers. */

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  // One character at a time: spreading a large array into fromCharCode overflows the call stack.
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Throws on text that is not base64 (`atob`'s InvalidCharacterError). */
export function base64ToBytes(value: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
}

export function bytesToBase64Url(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function base64UrlToBytes(value: string): Uint8Array<ArrayBuffer> {
  const padded = value.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (value.length % 4)) % 4);
  return base64ToBytes(padded);
}
