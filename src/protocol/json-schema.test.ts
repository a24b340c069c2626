/**
 * The committed JSON Schemas under `conformance/schemas/` are exactly what `npm run schemas` generates from the
 * zod schemas (CONVENTIONS "Validation": generated, checked in CI, never written by hand).
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generateJsonSchemas, SCHEMA_ID_BASE, serializeJsonSchema } from "./json-schema.ts";

const DIR = new URL("../../conformance/schemas/", import.meta.url);
const HINT = "conformance/schemas/ is out of date: run npm run schemas";

describe("conformance/schemas", () => {
  const generated = generateJsonSchemas();

  it("holds exactly the generated files", () => {
    const committed = readdirSync(DIR).filter((n) => n.endsWith(".json")).sort();
    expect(committed, HINT).toEqual(Object.keys(generated).sort());
  });

  for (const [name, schema] of Object.entries(generated)) {
    it(`${name} is up to date`, () => {
      let text: string | null = null;
      try {
        text = readFileSync(new URL(name, DIR), "utf8");
      } catch {
        text = null;
      }
      expect(text, `${name} is missing; ${HINT}`).not.toBeNull();
      expect(text === serializeJsonSchema(schema), `${name} differs; ${HINT}`).toBe(true);
    });
  }

  it("every schema is draft 2020-12 with a reach-wasm $id and a title", () => {
    for (const [name, schema] of Object.entries(generated) as [string, Record<string, unknown>][]) {
      expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(schema.$id).toBe(SCHEMA_ID_BASE + name);
      expect(typeof schema.title).toBe("string");
    }
  });

  it("generation is deterministic and keys are sorted", () => {
    const again = generateJsonSchemas();
    for (const name of Object.keys(generated)) {
      expect(serializeJsonSchema(again[name]!)).toBe(serializeJsonSchema(generated[name]!));
    }
    const text = serializeJsonSchema({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: 2 } });
    expect(text).toBe('{\n  "a": {\n    "c": 2,\n    "d": [\n      3,\n      {\n        "e": 2,\n        "f": 1\n      }\n    ]\n  },\n  "b": 1\n}\n');
  });
});
