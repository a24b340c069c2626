/**
 * Component glue as data: the document jco's transpile step produces for one component (`transpile.ts`), the form in
 * which it is cached on disk and kept as a test fixture, and the one way it becomes code — {@link glueToComponent}:
 * shape-checked (zod), statically checked (`_glue-check.ts`: only supplied imports, only allowed globals), then
 * evaluated as a function whose parameters shadow every global it may not reach for real. See `README.md`.
 * @module
 */
import { z } from "zod";
import { sha256Hex } from "../../canonical/mod.ts";
import { lazySchema } from "../../protocol/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import { checkGlue, GLUE_UNBOUND } from "./_glue-check.ts";
import type { InstantiateFn, TranspiledComponent } from "./transpiled.ts";
import { HOST_INTERFACE } from "./transpiled.ts";
import { WASI_P2_INTERFACES } from "./wasi-p2.ts";

/** The `type` of a glue document. */
export const GLUE_DOCUMENT_TYPE = "reach-wasm/component-glue";
/** The jco release that makes the glue (pinned exactly in package.json; the runner depends on its glue's shape). */
export const JCO_VERSION = "1.17.0";
/** The import interfaces a component may have: the host API and the deterministic WASI 0.2 set. */
export const SUPPLIED_INTERFACES: ReadonlySet<string> = new Set([HOST_INTERFACE, ...WASI_P2_INTERFACES]);

const sha256 = (): z.ZodString => z.string().regex(/^[0-9a-f]{64}$/);
const coreModuleName = (): z.ZodString => z.string().regex(/^[A-Za-z0-9._-]{1,100}\.wasm$/);

/** A glue document (version 1). Strict: unknown fields are refused. Built on first use. */
export const ComponentGlueSchema = lazySchema(() => z.strictObject({
  type: z.literal(GLUE_DOCUMENT_TYPE),
  version: z.literal(1),
  /** The jco release that generated `source`. */
  jco: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** sha256 of the component bytes the glue was generated from. */
  componentSha256: sha256(),
  /** Core module name (as the glue asks for it) → the n-th core module embedded in the component, or inline base64. */
  coreModules: z.record(
    coreModuleName(),
    z.union([z.strictObject({ embedded: z.number().int().min(0).max(10_000) }), z.strictObject({ base64: z.string().max(16 * 1024 * 1024) })]),
  ),
  /** The glue: jco's `--instantiation async` ES module, JCO_DEBUG compiled out. */
  source: z.string().min(1).max(16 * 1024 * 1024),
}));

/** One component's glue, as data. */
export type ComponentGlue = z.infer<ReturnType<typeof ComponentGlueSchema>>;

/**
 * Read a glue document from bytes (UTF-8 JSON).
 * @param bytes the document
 * @returns the document, shape-checked
 * @throws ReachError `PACK_MALFORMED` when it is not JSON or not a glue document
 * @example const glue = parseGlueDocument(await Deno.readFile("c-wordcount.glue.json"));
 */
export function parseGlueDocument(bytes: Uint8Array): ComponentGlue {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ReachError("PACK_MALFORMED", "the component glue document is not UTF-8 JSON; transpile the component again");
  }
  const parsed = ComponentGlueSchema().safeParse(doc);
  if (!parsed.success) throw new ReachError("PACK_MALFORMED", `not a component glue document: ${parsed.error.issues[0]?.message ?? "invalid"}; transpile the component again`);
  return parsed.data;
}

/**
 * The bytes of a glue document (stable: fixed key order, 2-space JSON).
 * @param glue the document
 * @returns UTF-8 JSON with a trailing newline
 * @example await writeFile("c-wordcount.glue.json", encodeGlueDocument(glue));
 */
export function encodeGlueDocument(glue: ComponentGlue): Uint8Array {
  const { type, version, jco, componentSha256, coreModules, source } = glue;
  return new TextEncoder().encode(JSON.stringify({ type, version, jco, componentSha256, coreModules, source }, null, 2) + "\n");
}

function throwing(name: string): () => never {
  return () => {
    throw new ReachError("EXEC_SANDBOX_VIOLATION", `the component's glue called ${name}, which reach-wasm does not provide (component-model async and loading modules by URL are not supported)`, {
      details: { reason: "glue", global: name },
    });
  };
}

/** What the glue's free names are bound to instead of the real globals (see `_glue-check.ts` GLUE_GLOBALS). */
function shadowed(): Record<string, unknown> {
  const silent = (): void => {};
  const out: Record<string, unknown> = {
    console: Object.freeze({ log: silent, debug: silent, info: silent, warn: silent, error: silent, trace: silent }),
    fetch: throwing("fetch"),
    setTimeout: throwing("setTimeout"),
    setInterval: throwing("setInterval"),
    clearInterval: throwing("clearInterval"),
    // Not named by any accepted glue; shadowed in case a construct the check does not model reaches for them.
    globalThis: undefined,
    self: undefined,
    window: undefined,
    process: undefined,
    Deno: undefined,
    require: undefined,
    Function: undefined,
  };
  for (const name of GLUE_UNBOUND) out[name] = undefined;
  return out;
}

/**
 * Turn a glue document into a runnable transpiled component: check it (`_glue-check.ts`), then evaluate it with every
 * free name it may not reach for real bound to a stand-in (timers and `fetch` throw, `console` is silent).
 * @param glue the document (from the transpiler, the disk cache or a fixture)
 * @returns the component the runner takes; `glueSha256` commits to the source that runs
 * @throws ReachError `EXEC_SANDBOX_VIOLATION` when the glue needs an import or global reach-wasm does not give it;
 *   `PACK_MALFORMED` when the document is malformed or its source does not evaluate
 * @example const component = glueToComponent(parseGlueDocument(bytes));
 */
export function glueToComponent(glue: ComponentGlue): TranspiledComponent {
  const parsed = ComponentGlueSchema().safeParse(glue);
  if (!parsed.success) throw new ReachError("PACK_MALFORMED", `not a component glue document: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const { source } = parsed.data;
  const facts = checkGlue(source, SUPPLIED_INTERFACES);
  // The module becomes a function body: drop `export`, replace `import.meta` (jco's fallback for a missing
  // getCoreModule, never taken) by an empty object, and return `instantiate`.
  const cuts = [{ at: facts.exportKeyword, text: "" }, ...facts.importMeta.map((at) => ({ at, text: "({})" }))].sort((a, b) => a.at[0] - b.at[0]);
  let body = "";
  let from = 0;
  for (const { at, text } of cuts) {
    body += source.slice(from, at[0]) + text;
    from = at[1];
  }
  body = `"use strict";\n${body}${source.slice(from)}\n;return instantiate;`;
  const bindings = shadowed();
  let instantiate: unknown;
  try {
    // The glue is checked above; this is the one place its text becomes code.
    instantiate = new Function(...Object.keys(bindings), body)(...Object.values(bindings));
  } catch (err) {
    throw new ReachError("PACK_MALFORMED", `the component's glue does not evaluate (${(err as Error).message}); transpile it again`);
  }
  if (typeof instantiate !== "function") throw new ReachError("PACK_MALFORMED", "the component's glue has no instantiate function");
  return Object.freeze({
    componentSha256: parsed.data.componentSha256,
    glueSha256: sha256Hex(new TextEncoder().encode(source)),
    coreModules: Object.freeze({ ...parsed.data.coreModules }),
    importNames: Object.freeze(facts.importNames),
    instantiate: instantiate as InstantiateFn,
  });
}
