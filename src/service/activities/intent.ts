/**
 * Activities whose parameters are parsed once into a typed intent: `parse(params) → intent`, then
 * `facts(intent)` for the policy gate and `run(intent)` for the work, so what the gate judged is
 * what runs (one parse of the unsigned transaction, one resolution of the signer per activity).
 */
import type { Params } from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityFacts, ActivityOutcome } from './types.js';

export interface IntentActivity<I> extends Omit<ActivityDefinition, 'run' | 'facts'> {
  /** Validates and resolves the parameters; refusals name the field. */
  readonly parse: (ctx: ActivityContext, params: Params) => Promise<I>;
  readonly facts?: (ctx: ActivityContext, intent: I) => Promise<ActivityFacts>;
  readonly run: (ctx: ActivityContext, intent: I) => Promise<ActivityOutcome>;
}

/**
 * The ActivityDefinition of an intent activity. The request handler calls `facts` and then `run`
 * with the same context and parameters; the intent parsed for the first is handed to the second
 * (keyed by the context object, so two requests never share one). A `run` without a `facts`
 * before it (approve_activity running a stored intent) parses for itself.
 */
export function intentActivity<I>(def: IntentActivity<I>): ActivityDefinition {
  const parsed = new WeakMap<ActivityContext, { readonly params: Params; readonly intent: Promise<I> }>();
  const intentOf = (ctx: ActivityContext, params: Params): Promise<I> => {
    const held = parsed.get(ctx);
    if (held !== undefined && held.params === params) return held.intent;
    const intent = def.parse(ctx, params);
    parsed.set(ctx, { params, intent });
    return intent;
  };
  const { parse: _parse, facts, run, ...rest } = def;
  return {
    ...rest,
    ...(facts === undefined
      ? {}
      : { facts: async (ctx: ActivityContext, params: Params) => facts(ctx, await intentOf(ctx, params)) }),
    run: async (ctx, params) => {
      const intent = intentOf(ctx, params);
      parsed.delete(ctx);
      return run(ctx, await intent);
    },
  };
}
