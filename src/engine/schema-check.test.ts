// The small validator agrees with Ajv (draft 2020-12) on every schema it accepts, and hands everything else to Ajv.
import Ajv2020Module from "ajv/dist/2020.js";
import { beforeAll, describe, expect, it } from "vitest";
import { compileSchema, isLiteSchema, loadFullValidator, schemaDialect } from "./schema-check.ts";
import { compileLite } from "./schema-lite.ts";

const ajv = new Ajv2020Module.default({ strict: false });

const schemas: Record<string, unknown>[] = [
  { type: "object", required: ["total"] },
  { required: ["a"] },
  { type: "object", properties: { n: { type: "integer", minimum: 1, maximum: 10 } }, required: ["n"], additionalProperties: false },
  { type: ["string", "null"], minLength: 2, maxLength: 3 },
  { type: "string", pattern: "^[a-z]+$" },
  { type: "array", items: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 }, minItems: 1, maxItems: 2 },
  { enum: [1, "1", null, { a: [1] }] },
  { const: { status: 200, tags: ["x"] } },
  { type: "object", additionalProperties: { type: "boolean" }, properties: { name: { type: "string" } } },
  { type: "integer" },
  { type: "number" },
  { properties: { x: { properties: { y: { type: "string" } }, required: ["y"] } } },
  { title: "t", description: "d", type: "object", default: {}, examples: [{}] },
];
const values: unknown[] = [
  null, true, 0, 1, 1.0, 1.5, -1, 10, 11, 0.5, "", "a", "ab", "abc", "abcd", "AB", "😀😀", [], [0.5], [0.5, 0.25], [1, 2, 3], [0],
  {}, { total: 1 }, { a: 1 }, { n: 5 }, { n: 0 }, { n: 5, x: 1 }, { n: "5" }, { name: "x", ok: true }, { name: "x", ok: 1 },
  { status: 200, tags: ["x"] }, { tags: ["x"], status: 200 }, { status: 200, tags: ["y"] }, { a: [1] }, "1", { x: {} }, { x: { y: "s" } }, { x: 5 },
];

describe("schema-lite", () => {
  for (const [i, schema] of schemas.entries()) {
    it(`schema ${i} ${JSON.stringify(schema)}: same verdict as Ajv on ${values.length} values`, () => {
      const lite = compileLite(schema);
      expect(lite).not.toBeNull();
      const full = ajv.compile(schema);
      for (const v of values) {
        const problems: string[] = [];
        lite!(v, "$", problems);
        expect(problems.length === 0, `${JSON.stringify(v)}: ${problems.join("; ")}`).toBe(full(v));
      }
    });
  }

  it("hands schemas with other keywords to Ajv", () => {
    for (const s of [{ anyOf: [{ type: "string" }] }, { $ref: "#/$defs/x", $defs: { x: {} } }, { type: "object", dependentRequired: { a: ["b"] } }, { format: "email" }, { type: "strange" }, { pattern: "(" }]) {
      expect(isLiteSchema(s), JSON.stringify(s)).toBe(false);
    }
  });
});

describe("compileSchema", () => {
  beforeAll(loadFullValidator);
  it("checks lite and full schemas and reports the problem's path", () => {
    expect(compileSchema({ type: "object", required: ["total"] })({})).toEqual({ ok: false, problems: ["$: must have required property 'total'"] });
    const email = compileSchema({ type: "object", properties: { to: { type: "string", format: "email" } } });
    expect(email({ to: "a@b.example" }).ok).toBe(true);
    const bad = email({ to: "nope" });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problems[0]).toMatch(/^\$\.to: must match format "email"/);
    expect(compileSchema({ anyOf: [{ type: "string" }, { type: "integer" }] })(true).ok).toBe(false);
  });
  it("refuses a schema that is not one", () => {
    expect(() => compileSchema({ type: 12 })).toThrow(/cannot be compiled/);
  });
});

describe("JSON Schema dialects by $schema (MCP servers publish draft-07 and 2020-12)", () => {
  it("reads draft-07 as draft-07, 2020-12 and no $schema as 2020-12, and refuses a dialect it does not speak", async () => {
    await loadFullValidator();
    // `items` as an array is a tuple in draft-07; 2020-12 says `prefixItems` (and refuses the array form)
    const d07 = compileSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: [{ type: "string" }, { type: "number" }] });
    expect(d07(["a", 1]).ok).toBe(true);
    expect(d07([1, "a"]).ok).toBe(false);
    const d20 = compileSchema({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "string" }], items: { type: "number" } });
    expect(d20(["a", 1, 2]).ok).toBe(true);
    expect(d20(["a", "b"]).ok).toBe(false);
    const none = compileSchema({ type: "array", prefixItems: [{ type: "string" }], items: false });
    expect(none(["a"]).ok).toBe(true);
    expect(none(["a", 1]).ok).toBe(false);
    expect(schemaDialect({ $schema: "https://json-schema.org/draft/2019-09/schema" })).toBe("draft2019");
    expect(() => compileSchema({ $schema: "http://json-schema.org/draft-04/schema#", type: "object" })).toThrow(/dialect this validator does not speak/);
  });
});
