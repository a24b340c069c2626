/**
 * jco's transpile step at load time: any component (world `reach:tool/tool`) → a glue document (`glue.ts`). It runs
 * jco's own bindings generator (`@bytecodealliance/jco/component`, a WebAssembly component itself) with the flags
 * the committed example glue was always made with:
 * `--instantiation async --no-wasi-shim --no-nodejs-compat --valid-lifting-optimization --no-typescript`.
 * The generator runs on jco's WASI 0.2 shim with no preopened directory, no environment and no arguments, so it sees
 * nothing but the component bytes. Its output is deterministic for a given jco release ({@link JCO_VERSION}).
 * @module
 */
import { bytesToBase64 } from "../../canonical/mod.ts";
import { sha256Hex } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import { coreModulesOf } from "../wasm-binary.ts";
import type { ComponentGlue } from "./glue.ts";
import { GLUE_DOCUMENT_TYPE, JCO_VERSION } from "./glue.ts";

/** The name the glue gives its core modules (`glue.core.wasm`, `glue.core2.wasm`, …). */
const GLUE_NAME = "glue";
/** jco's glue reads this for debug logging: an environment read, compiled out (as the example build always did). */
const DEBUG_READ = "globalThis?.process?.env?.JCO_DEBUG";
/** The component-model layer's preamble: `\0asm`, version 0x0d, layer 1. */
const COMPONENT_PREAMBLE = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

type Generate = (component: Uint8Array, options: Record<string, unknown>) => Promise<{ files: Array<[string, Uint8Array]> }>;
let generator: Promise<Generate> | undefined;

/** jco's generator, loaded once, with its WASI shim emptied (no files, no environment, no arguments). */
function jcoGenerate(): Promise<Generate> {
  return (generator ??= (async () => {
    // The shim's own setters (not in its type declarations).
    type Setters = { _setPreopens(p: Record<string, string>): void; _setEnv(e: Record<string, string>): void; _setArgs(a: string[]): void };
    const [{ _setPreopens }, { _setEnv, _setArgs }] = (await Promise.all([
      import("@bytecodealliance/preview2-shim/filesystem"),
      import("@bytecodealliance/preview2-shim/cli"),
    ])) as unknown as [Setters, Setters];
    _setPreopens({});
    _setEnv({});
    _setArgs([]);
    const jco = (await import("@bytecodealliance/jco/component")) as unknown as { generate: Generate };
    return jco.generate;
  })().catch((err: unknown) => {
    generator = undefined;
    throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `jco (@bytecodealliance/jco ${JCO_VERSION}) cannot be loaded: ${(err as Error).message}; reinstall reach-wasm's dependencies (npm ci)`);
  }));
}

function coreIndex(file: string): number {
  const m = new RegExp(`^${GLUE_NAME}\\.core(\\d*)\\.wasm$`).exec(file);
  if (m === null) throw new ReachError("PACK_MALFORMED", `jco produced an unexpected file ${JSON.stringify(file)}`);
  return m[1] === "" ? 1 : Number(m[1]);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Transpile a component with jco into a glue document.
 * @param component the component bytes (a tool's `module`)
 * @returns the glue document: the glue source, and where each core module the glue asks for comes from (the n-th
 *   core module of the component, or jco's own small trampoline modules inline)
 * @throws ReachError `PACK_MALFORMED` when the bytes are not a component jco can transpile;
 *   `EXEC_RESOURCE_UNAVAILABLE` when jco is not installed
 * @example const glue = await transpileComponent(await Deno.readFile("tool.component.wasm"));
 */
export async function transpileComponent(component: Uint8Array): Promise<ComponentGlue> {
  if (!(component instanceof Uint8Array)) throw new TypeError('"component" expected a Uint8Array');
  if (component.length < 8 || COMPONENT_PREAMBLE.some((b, i) => component[i] !== b)) {
    throw new ReachError("PACK_MALFORMED", "not a WebAssembly component (the preamble is not \\0asm, version 0x0d, layer 1); build it as a component (jco new, componentize-js, wit-component)");
  }
  const generate = await jcoGenerate();
  let files: Array<[string, Uint8Array]>;
  try {
    ({ files } = await generate(component, {
      name: GLUE_NAME,
      map: [],
      instantiation: { tag: "async" },
      asyncMode: null,
      importBindings: null,
      validLiftingOptimization: true,
      tracing: false,
      noNodejsCompat: true,
      noTypescript: true,
      tlaCompat: false,
      base64Cutoff: 5000,
      noNamespacedExports: false,
      multiMemory: false,
      idlImports: false,
    }));
  } catch (err) {
    const why = (err as { payload?: unknown }).payload ?? (err as Error).message;
    throw new ReachError("PACK_MALFORMED", `jco cannot transpile the component: ${String(why).slice(0, 500)}`);
  }
  const embedded = coreModulesOf(component);
  const coreModules: ComponentGlue["coreModules"] = {};
  const wasm = files.filter(([name]) => name.endsWith(".wasm")).sort((a, b) => coreIndex(a[0]) - coreIndex(b[0]));
  for (const [name, bytes] of wasm) {
    const i = embedded.findIndex((m) => sameBytes(m, bytes));
    coreModules[name] = i >= 0 ? { embedded: i } : { base64: bytesToBase64(bytes) };
  }
  const js = files.find(([name]) => name === `${GLUE_NAME}.js`);
  if (js === undefined) throw new ReachError("PACK_MALFORMED", "jco produced no glue for the component");
  const source = new TextDecoder().decode(js[1]).split(DEBUG_READ).join("false").replace(/^"use components";\n/, "");
  return { type: GLUE_DOCUMENT_TYPE, version: 1, jco: JCO_VERSION, componentSha256: sha256Hex(component), coreModules, source };
}
