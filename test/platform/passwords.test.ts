import { describe, expect, it } from "vitest";
import {
  formatPasswordHash,
  hashPassword,
  PBKDF2_MAX_ITERATIONS,
  parsePasswordHash,
  parsePepper,
  verifyPassword,
} from "../../src/platform/passwords";

const current = { version: 2, secret: "current-pepper-0123456789" };
const previous = { version: 1, secret: "previous-pepper-0123456789" };

describe("password hashing", () => {
  it("stays within the 100,000 PBKDF2 iterations production Workers accept (local runs do not enforce it)", () => {
    expect(PBKDF2_MAX_ITERATIONS).toBe(100_000);
  });

  it("hashes at exactly the cap, and writes a self-describing hash: scheme, iterations, pepper version, salt, key", async () => {
    const stored = await hashPassword("correct horse battery staple", current);
    expect(stored).toMatch(/^pbkdf2-sha256\$100000\$p2\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    const parsed = parsePasswordHash(stored);
    expect(parsed?.iterations).toBe(100_000);
    expect(parsed?.pepperVersion).toBe(2);
    expect(parsed?.salt.length).toBe(16);
    expect(parsed?.key.length).toBe(32);
    expect(formatPasswordHash(parsed!)).toBe(stored);
  });

  it("salts each hash: the same password twice gives two hashes, both verifying", async () => {
    const one = await hashPassword("same password 1", current);
    const two = await hashPassword("same password 1", current);
    expect(one).not.toBe(two);
    expect((await verifyPassword("same password 1", one, [current])).ok).toBe(true);
    expect((await verifyPassword("same password 1", two, [current])).ok).toBe(true);
    expect((await verifyPassword("same password 2", one, [current])).ok).toBe(false);
  });

  it("peppers: a hash does not verify under another pepper of its version (a stolen database alone is not enough)", async () => {
    const stored = await hashPassword("pepper matters 1", current);
    const other = { version: 2, secret: "another-pepper-0123456789" };
    expect((await verifyPassword("pepper matters 1", stored, [other])).ok).toBe(false);
  });

  it("rotates the pepper: a hash of the previous one verifies and asks to be remade", async () => {
    const old = await hashPassword("rotated pepper 1", previous);
    expect(await verifyPassword("rotated pepper 1", old, [current, previous])).toEqual({ ok: true, rehash: true });
    const fresh = await hashPassword("rotated pepper 1", current);
    expect(await verifyPassword("rotated pepper 1", fresh, [current, previous])).toEqual({ ok: true, rehash: false });
    // Once the previous pepper is retired, its hashes no longer verify.
    expect((await verifyPassword("rotated pepper 1", old, [current])).ok).toBe(false);
  });

  it("refuses a stored count above the cap before deriving anything (it would fail in production)", async () => {
    const stored = await hashPassword("over the cap 1", current);
    const over = stored.replace("$100000$", "$210000$");
    expect(parsePasswordHash(over)).toBeNull();
    expect(await verifyPassword("over the cap 1", over, [current])).toEqual({ ok: false, rehash: false });
  });

  it("asks to remake a hash made with fewer iterations", async () => {
    const stored = await hashPassword("fewer iterations 1", current);
    const parsed = parsePasswordHash(stored)!;
    // A hash of 1,000 iterations (an older parameter): derived again here, it verifies and asks to be remade.
    const base = await crypto.subtle.sign(
      "HMAC",
      await crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode(current.secret),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      ),
      new TextEncoder().encode("fewer iterations 1"),
    );
    const key = await crypto.subtle.importKey("raw", base, "PBKDF2", false, ["deriveBits"]);
    const bits = await crypto.subtle.deriveBits(
      { name: "PBKDF2", hash: "SHA-256", salt: parsed.salt, iterations: 1000 },
      key,
      256,
    );
    const weaker = formatPasswordHash({ ...parsed, iterations: 1000, key: new Uint8Array(bits) });
    expect(await verifyPassword("fewer iterations 1", weaker, [current])).toEqual({ ok: true, rehash: true });
  });

  it("reads nothing it did not write: malformed hashes and peppers are refused", async () => {
    for (const bad of ["", "plain", "pbkdf2-sha256$100000$p1$short$short", "bcrypt$10$x", "pbkdf2-sha256$0$p1$a$b"]) {
      expect(parsePasswordHash(bad)).toBeNull();
      expect((await verifyPassword("x", bad, [current])).ok).toBe(false);
    }
    expect(parsePepper("1:sixteen-chars-ok")).toEqual({ version: 1, secret: "sixteen-chars-ok" });
    expect(parsePepper("no-version-0123456789")).toBeNull();
    expect(parsePepper("1:short")).toBeNull();
    expect(parsePepper(undefined)).toBeNull();
  });
});
