/**
 * Schemas built on first use (internal). Building zod schemas costs: the protocol's ~70 top-level schemas took
 * ~15 ms of a short CLI run's start-up when they were built at import, and a run needs a handful of them, often none
 * (a warm run finds its pack and plan in the validated-document cache, `src/engine/document-cache.ts`).
 *
 * A schema is therefore a function that builds it once: `PackSchema()`. Not a stand-in object (a `Proxy`): zod's
 * metadata registry and its JSON Schema generator know a schema by identity, and `.optional()` of a stand-in would
 * wrap the built object, so one schema would appear under two identities in the generated JSON Schemas.
 * @module
 */

/**
 * A schema built by `build` on the first call, then the same object on every call.
 * @param build builds the schema (called once)
 * @returns the function that returns the schema
 * @example export const PlanRiskSchema = lazySchema(() => strictObject("plan.risk", { level: z.int() }));
 */
export function lazySchema<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
