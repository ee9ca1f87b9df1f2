/**
 * The part of Postman's script sandbox (newman runs the same) that `script-functions.ts` uses. Typed from what the
 * sandbox returns, not from Postman's own declarations: those declare their globals (`request`, `Response`, …) for
 * the whole program, and would collide with the Worker's.
 */

export interface Postman {
  /** Variables of the collection; `get` gives back what `set` stored, `undefined` before. */
  collectionVariables: { get(name: string): string | undefined };
  /** Every scope's variables (request-local, collection, environment, …) at once. */
  variables: {
    get(name: string): string | undefined;
    /** `{{name}}` and dynamic variables (`{{$guid}}`) resolved. */
    replaceIn(template: string): string;
  };
  sendRequest(
    request: {
      url: string;
      method: string;
      header: Record<string, string>;
      body: { mode: "raw"; raw: string };
    },
    callback: (error: unknown, response: { code: number; text(): string }) => void,
  ): void;
}

/** The sandbox's `crypto-js`, as far as a TOTP needs it. */
export interface CryptoJs {
  HmacSHA1(message: WordArray, key: WordArray): WordArray;
  lib: { WordArray: { create(words: number[], sigBytes: number): WordArray } };
}

/** Big-endian 32-bit words, of which the first `sigBytes` bytes count; `toString()` is hex. */
interface WordArray {
  toString(): string;
}
