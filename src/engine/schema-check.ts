/**
 * JSON Schema checks of tool inputs and step outputs (`return_spec`, seed 002; a tool's `inputSchema` and
 * `outputSchema`): schemas made of the common keywords go through the small exact validator of `schema-lite.ts`;
 * anything else through Ajv (draft 2020-12, formats), loaded on first use. Schemas come from the pack and the plan, so compiling one may
 * fail: that is a clear error for the pack author, never a crash. Validators are cached per canonical schema text
 * for the life of the process (schemas are immutable values; the cache holds no run state).
 *
 * Why Ajv and not zod's `fromJSONSchema` (measured with zod 4.6.7): it ignores `required` for keys that are not
 * also in `properties`, ignores object keywords when `type` is absent, and refuses `dependentRequired` — so a
 * `return_spec` of `{"required": ["total"]}` accepted `{}`. A return_spec check that passes what it should refuse
 * is worse than none.
 * @module
 */
import type Ajv2020Module from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv/dist/2020.js";
import type addFormatsModule from "ajv-formats";
import { canonicalize } from "../canonical/mod.ts";
import { compileLite } from "./schema-lite.ts";

/** The result of a check: `ok`, or the first problems as `path: message` lines. */
export type SchemaCheck = { ok: true } | { ok: false; problems: string[] };

/** A compiled schema. */
export type SchemaValidator = (value: unknown) => SchemaCheck;

type AjvCtor = typeof Ajv2020Module.default;
type AddFormats = typeof addFormatsModule.default;
/** A validator instance of one dialect (they share Ajv's `compile`). */
type AnyAjv = { compile(schema: Record<string, unknown>): ValidateFunction };
let ajv: InstanceType<AjvCtor> | undefined;
/** Draft-07 and 2019-09 instances (MCP servers built on the TypeScript SDK 1.x publish draft-07 with `$schema`). */
let dialects: { draft07: AnyAjv; draft2019: AnyAjv } | undefined;

/** The JSON Schema dialects a schema may name with `$schema` (none: 2020-12, the default of MCP's SEP-1613 as well). */
const DIALECTS: Readonly<Record<string, "draft07" | "draft2019" | "draft2020">> = {
  "json-schema.org/draft-07/schema": "draft07",
  "json-schema.org/draft/2019-09/schema": "draft2019",
  "json-schema.org/draft/2020-12/schema": "draft2020",
};

/**
 * The dialect a schema's `$schema` names.
 * @param schema a JSON Schema
 * @returns its dialect (2020-12 when it names none)
 * @throws TypeError for a dialect this validator does not speak (draft-04, draft-06, anything else)
 * @example schemaDialect({ $schema: "http://json-schema.org/draft-07/schema#" }) // "draft07"
 */
export function schemaDialect(schema: Record<string, unknown>): "draft07" | "draft2019" | "draft2020" {
  const named = schema["$schema"];
  if (named === undefined) return "draft2020";
  const key = typeof named === "string" ? named.replace(/^https?:\/\//, "").replace(/#$/, "") : "";
  const d = DIALECTS[key];
  if (d === undefined) throw new TypeError(`$schema ${JSON.stringify(named)} names a JSON Schema dialect this validator does not speak; use draft-07, 2019-09 or 2020-12 (or no $schema: 2020-12)`);
  return d;
}

/**
 * Load Ajv (once). Call before `compileSchema` when a schema may need it; `compileSchema` is synchronous.
 * @returns a promise that resolves when Ajv is ready
 */
export async function loadFullValidator(): Promise<void> {
  if (ajv !== undefined) return;
  const [ajvMod, formatsMod] = await Promise.all([import("ajv/dist/2020.js"), import("ajv-formats")]);
  const Ajv2020 = ((ajvMod as unknown as { default?: AjvCtor }).default ?? ajvMod) as AjvCtor;
  const addFormats = ((formatsMod as unknown as { default?: AddFormats }).default ?? formatsMod) as AddFormats;
  const options = { strict: false, allErrors: true, validateSchema: true, addUsedSchema: false, messages: true };
  const [draft07Mod, draft2019Mod] = await Promise.all([import("ajv"), import("ajv/dist/2019.js")]);
  const Draft07 = ((draft07Mod as unknown as { default?: AjvCtor }).default ?? draft07Mod) as unknown as AjvCtor;
  const Draft2019 = ((draft2019Mod as unknown as { default?: AjvCtor }).default ?? draft2019Mod) as unknown as AjvCtor;
  const d07 = new Draft07(options);
  const d19 = new Draft2019(options);
  addFormats(d07);
  addFormats(d19);
  dialects = { draft07: d07, draft2019: d19 };
  ajv = new Ajv2020(options);
  addFormats(ajv);
}

/**
 * True when `schema` is handled by the small validator (no Ajv needed).
 * @param schema a JSON Schema
 * @returns whether `compileSchema` can compile it without {@link loadFullValidator}
 */
export function isLiteSchema(schema: Record<string, unknown>): boolean {
  return schema["$schema"] === undefined && compileLite(schema) !== null;
}

function getAjv(schema: Record<string, unknown>): AnyAjv {
  const dialect = schemaDialect(schema);
  if (ajv === undefined || dialects === undefined) throw new Error("internal: the full JSON Schema validator is not loaded; await loadFullValidator() first");
  return dialect === "draft2020" ? ajv : dialects[dialect];
}

const CACHE = new Map<string, SchemaValidator>();
const MAX_CACHE = 1000;
/** Most problems reported per check. */
const MAX_PROBLEMS = 10;

/**
 * Compile a JSON Schema: draft 2020-12, or the dialect its `$schema` names (draft-07, 2019-09).
 * @param schema the schema (a JSON object)
 * @returns a validator
 * @throws TypeError naming what is wrong with the schema
 * @example compileSchema({ type: "object", required: ["n"] })({ n: 1 }) // { ok: true }
 */
export function compileSchema(schema: Record<string, unknown>): SchemaValidator {
  const key = canonicalize(schema);
  const hit = CACHE.get(key);
  if (hit !== undefined) return hit;
  const lite = schema["$schema"] === undefined ? compileLite(schema) : null;
  if (lite !== null) {
    const v: SchemaValidator = (value) => {
      const problems: string[] = [];
      lite(value, "$", problems);
      return problems.length === 0 ? { ok: true } : { ok: false, problems: problems.slice(0, MAX_PROBLEMS) };
    };
    CACHE.set(key, v);
    return v;
  }
  let fn: ValidateFunction;
  try {
    const parsed = JSON.parse(key) as Record<string, unknown>;
    fn = getAjv(parsed).compile(parsed);
  } catch (err) {
    throw new TypeError(`the JSON Schema cannot be compiled: ${err instanceof Error ? err.message : String(err)}`);
  }
  const validate: SchemaValidator = (value) => {
    if (fn(value)) return { ok: true };
    const problems = (fn.errors ?? []).slice(0, MAX_PROBLEMS).map((e) => `$${e.instancePath.replace(/\//g, ".")}: ${e.message ?? "is invalid"}${e.params && "missingProperty" in e.params ? ` (${String(e.params["missingProperty"])})` : ""}`);
    return { ok: false, problems: problems.length > 0 ? problems : ["$: is invalid"] };
  };
  if (CACHE.size >= MAX_CACHE) CACHE.clear();
  CACHE.set(key, validate);
  return validate;
}
