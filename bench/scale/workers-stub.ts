/** `cloudflare:workers` for code bundled to run in Node (bench/scale.mjs): the base classes, inert. */
export class DurableObject {
  readonly ctx: unknown;
  readonly env: unknown;

  constructor(ctx: unknown, env: unknown) {
    this.ctx = ctx;
    this.env = env;
  }
}

export class WorkerEntrypoint extends DurableObject {}

export const env = {};
