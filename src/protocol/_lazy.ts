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

/** `true` when `A` and `B` are each assignable to the other, else `false`. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * A {@link lazySchema} with a declared type. A schema the package exports carries its type written out (JSR refuses
 * inferred types in a public API, "slow types"), and the written type must be exactly the type of what `build`
 * returns, not merely wider: it is inferred from the annotation of the constant this initialises, and a difference
 * either way (a field, an enum member, an optional or a default the other lacks) fails type checking with "Expected 2
 * arguments". So the written types cannot drift from the schemas, and `z.output` of one stays as precise as it was.
 * @param build builds the schema (called once)
 * @param exact nothing: present only when the declared type and the built schema's type differ, to fail the call
 * @returns the function that returns the schema
 * @example export const RiskSchema: () => z.ZodObject<{ level: z.ZodInt }, z.core.$strict> = typedSchema(() => strictObject("risk", { level: z.int() }));
 */
export function typedSchema<T, U extends T>(
  build: () => U,
  ...exact: Same<T, U> extends true ? [] : [declaredTypeDiffersFromTheSchema: never]
): () => T {
  void exact;
  return lazySchema<T>(build);
}
