import { type BatchFailure, batchFailure, type Statement } from "../db/statements";
import { ApiError } from "../platform/errors";
import { logError } from "../platform/logger";
import type { DomainContext } from "./context";

export type { BatchFailure, Statement } from "../db/statements";

/** What a write needs once the batch that holds it has committed. */
export interface WriteEffects<S extends Statement> {
  /**
   * Runs with the statement's result after the commit (e.g. a pool's new figures, read with RETURNING, tell the
   * gates whether it is used up). Must be idempotent: a crash before it runs is repaired by a cron.
   */
  afterCommit?: (ctx: DomainContext, result: S["_"]["result"]) => Promise<void> | void;
}

/** A statement and its after-commit effects, built together so that neither can be forgotten. */
export class Write<S extends Statement = Statement> {
  readonly statement: S;
  readonly effects: WriteEffects<S>;

  constructor(statement: S, effects: WriteEffects<S> = {}) {
    this.statement = statement;
    this.effects = effects;
  }
}

/** What a unit of work is made of: plain statements, and writes that carry effects. */
export type Step = Statement | Write<any>;

export function statementOf(step: Step): Statement {
  return step instanceof Write ? step.statement : step;
}

/** A committed unit of work: each step's result, asked for by the step itself. */
export interface Committed {
  of<S extends Statement>(step: S | Write<S>): S["_"]["result"];
}

export type Outcome = ({ committed: true } & Committed) | { committed: false; failure: BatchFailure };

/**
 * Runs the steps as one D1 batch, all or nothing, and says why it rolled back when one of its guards fired (the
 * balance CHECK, an `abortIf` assertion, a unique charge key); any other error is thrown. After a commit, and
 * before this returns, each write's `afterCommit` runs, in the order of the steps.
 */
export async function runUnitOfWork(ctx: DomainContext, steps: Step[]): Promise<Outcome> {
  const writes = steps.map((step) => (step instanceof Write ? step : new Write(step)));
  let results: unknown[] = [];
  try {
    if (writes.length > 0) results = await ctx.db.batch(writes.map((write) => write.statement) as [Statement]);
  } catch (error) {
    const failure = batchFailure(error);
    if (failure) return { committed: false, failure };
    throw error;
  }
  // The batch has committed: an effect that fails is logged (each has a cron that repairs it), never thrown, so a
  // committed change is never answered as a failure and retried.
  for (const [index, write] of writes.entries()) {
    try {
      await write.effects.afterCommit?.(ctx, results[index] as never);
    } catch (error) {
      logError("after_commit_failed", { step: index }, error);
    }
  }
  const positions = new Map<unknown, number>(steps.map((step, index) => [step, index]));
  return {
    committed: true,
    of: (step) => {
      const position = positions.get(step);
      if (position === undefined) throw new Error("This step was not part of the unit of work.");
      return results[position] as never;
    },
  };
}

/**
 * `runUnitOfWork` for API verbs: a rollback becomes the error given for its failure (an overdraft is always
 * 409 `insufficient_balance`; a hard-stop budget, 409 `budget_exceeded` unless the verb words it with figures).
 */
export async function commit(
  ctx: DomainContext,
  steps: Step[],
  errors: Partial<Record<BatchFailure, () => ApiError | Promise<ApiError>>> = {},
): Promise<Committed> {
  const outcome = await runUnitOfWork(ctx, steps);
  if (outcome.committed) return outcome;
  const failure = errors[outcome.failure] ?? defaultErrors[outcome.failure];
  if (!failure) throw new Error(`Unit of work rolled back (${outcome.failure}) with no error given for it.`);
  throw await failure();
}

const defaultErrors: Partial<Record<BatchFailure, () => ApiError>> = {
  insufficient_balance: () => new ApiError("insufficient_balance"),
  budget: () => new ApiError("budget_exceeded"),
};
