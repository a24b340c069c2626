import { describe, expect, it } from "vitest";
import { z } from "zod";
import { strictObject } from "./_common.ts";
import type { StrictObject } from "./_common.ts";
import { typedSchema } from "./_lazy.ts";

type Declared = () => StrictObject<{ a: z.ZodString; b: z.ZodOptional<z.ZodInt> }>;

describe("typedSchema", () => {
  it("builds the schema on the first call only, then gives the same object", () => {
    let builds = 0;
    const schema: Declared = typedSchema(() => {
      builds++;
      return strictObject("x", { a: z.string(), b: z.int().optional() });
    });
    expect(builds).toBe(0);
    expect(schema()).toBe(schema());
    expect(builds).toBe(1);
    expect(schema().parse({ a: "v" })).toEqual({ a: "v" });
  });

  it("refuses, at type-check time, a declared type that differs from the built schema's either way", () => {
    // Each `@ts-expect-error` fails `npm run typecheck` if typedSchema stops refusing that drift.
    const drifts = [
      // @ts-expect-error the schema has a field the declared type lacks (a mere annotation would accept this)
      ((): Declared => typedSchema(() => strictObject("x", { a: z.string(), b: z.int().optional(), c: z.string() })))(),
      // @ts-expect-error the declared type has a field the schema lacks
      ((): Declared => typedSchema(() => strictObject("x", { a: z.string() })))(),
      // @ts-expect-error a field optional in the declared type is required in the schema
      ((): Declared => typedSchema(() => strictObject("x", { a: z.string(), b: z.int() })))(),
      // @ts-expect-error the schema's enum has a member the declared type lacks
      ((): (() => z.ZodEnum<{ p: "p" }>) => typedSchema(() => z.enum(["p", "q"])))(),
      // @ts-expect-error a default the declared type does not name
      ((): (() => StrictObject<{ a: z.ZodString }>) => typedSchema(() => strictObject("x", { a: z.string().default("") })))(),
    ];
    expect(drifts).toHaveLength(5); // built lazily: declaring them runs nothing
  });
});
