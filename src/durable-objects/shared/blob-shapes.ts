/** The column beside a blob that holds its shape version (for `ALTER TABLE … ADD COLUMN`). */
export const BLOB_VERSION_COLUMN = "version INTEGER NOT NULL DEFAULT 1";

/** A blob as its row holds it: the JSON and its shape version (none: written before versions, version 1). */
export interface StoredBlob {
  body: string;
  version?: number | null;
}

/**
 * Numbered shape steps for a JSON blob a Durable Object keeps whole in a row (docs/storage.md, "Blob shapes").
 *
 * Storage steps (`storage-versions.ts`) version tables, not what a JSON column holds: a field added to a blob's type
 * would read as `undefined` from a blob saved before it. So a blob carries its own shape version, in a column beside
 * it (`BLOB_VERSION_COLUMN`, added by a storage step): rows written before the column have version 1, the blob's
 * shape before versions, and code from before it reads and writes the JSON as it did (a rollback to it still reads
 * its shape). Step `n` of the list turns a value of shape `n` into one of shape `n + 1`, a pure function, and
 * reading applies the steps from the stored version to the latest, in order: a blob saved by any earlier code reads
 * as the current shape (and is written at the latest version when next saved). A blob of a later version than the
 * code knows (a rolled-back deploy) is refused, loudly: read as an older shape and written back whole, its newer
 * fields would be lost.
 *
 * The steps' types chain (`step`), so the value read is of the current type only through them. Steps are never
 * edited once shipped: a change of shape is a new step at the end, and the type of the shape it leaves behind is
 * written out and frozen (not derived from the live types, which move on).
 */
export class BlobShapes<T> {
  readonly #name: string;
  readonly #steps: ReadonlyArray<(old: unknown) => unknown>;

  private constructor(name: string, steps: ReadonlyArray<(old: unknown) => unknown>) {
    this.#name = name;
    this.#steps = steps;
  }

  /** A blob's shapes, starting at version 1: the value as written before the blob had a version. */
  static first<V1>(name: string): BlobShapes<V1> {
    return new BlobShapes<V1>(name, []);
  }

  /** The next version: `upgrade` turns a value of the latest shape so far into the new one. */
  step<Next>(upgrade: (old: T) => Next): BlobShapes<Next> {
    return new BlobShapes<Next>(this.#name, [...this.#steps, upgrade as (old: unknown) => unknown]);
  }

  /** The latest version. */
  get version(): number {
    return this.#steps.length + 1;
  }

  /** A stored blob as the latest shape: the steps from its version on applied in order. */
  read(stored: StoredBlob): T {
    const version = stored.version ?? 1;
    if (!Number.isInteger(version) || version < 1) {
      throw new Error(`${this.#name}: stored at shape version ${version}, not a version`);
    }
    if (version > this.version) {
      throw new Error(
        `${this.#name}: stored at shape version ${version}, newer than this code's ${this.version}: refused`,
      );
    }
    // The steps' types chain from version 1's to T (`step`): the result is the latest shape.
    const value: unknown = JSON.parse(stored.body);
    return this.#steps.slice(version - 1).reduce((old, step) => step(old), value) as T;
  }

  /** A value of the latest shape as its row holds it. */
  write(value: T): { body: string; version: number } {
    return { body: JSON.stringify(value), version: this.version };
  }
}
