/** `cloudflare:workers` for code bundled to run in Node (bench/scale.mjs): the base classes, inert. */
export class DurableObject {
  constructor(
    readonly ctx: unknown,
    readonly env: unknown,
  ) {}
}

export class WorkerEntrypoint extends DurableObject {}

export const env = {};
