/**
 * The core modules of a component, ready to instantiate, and the process-wide caches behind them: the component's
 * digest by code array, fuel-instrumented bytes by module digest, and compiled modules by (component digest, memory
 * limit, metering). Everything cached here is immutable and shared by all runners; no invocation state lives here.
 * @module
 */
import { base64ToBytes } from "../../canonical/mod.ts";
import { sha256Hex } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import { instrumentFuel } from "../fuel/mod.ts";
import { capMemory, coreModulesOf, definesMemory, WASM_PAGE_BYTES } from "../wasm-binary.ts";
import { exportState } from "./_state-exports.ts";
import type { TranspiledComponent } from "./transpiled.ts";

/**
 * A compiled core module, whether it carries a fuel counter, and whether all its state is exported for snapshots
 * (`_state-exports.ts`).
 */
export type CompiledCore = { module: WebAssembly.Module; metered: boolean; snapshotable: boolean };

/** A component's compiled core modules by the names the glue asks for, and the cache key they were compiled under. */
export type CompiledCores = {
  key: string;
  modules: Map<string, CompiledCore>;
  /**
   * SHA-256 over `name:sha256(bytes)\n` of every compiled core module and `glue:<glueSha256>\n`, sorted: what runs
   * (ModuleIdentity), the JavaScript glue included.
   */
  meteredDigest: string;
};

/** Compiled modules, shared by all runners: key `sha256/glue/maxPages/meter`. Small: each entry holds a ~12 MB module. */
const compiled = new Map<string, { modules: Map<string, CompiledCore>; meteredDigest: string }>();
/** Fuel-instrumented bytes by the sha256 of the original core module (instrumenting 12 MB takes ~10-30 s). */
const instrumented = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();
const INSTRUMENTED_CACHE_ENTRIES = 2;
const COMPILED_CACHE_ENTRIES = 4;
/** sha256 of code arrays already seen (code arrays are treated as immutable once handed to a runner). */
const digests = new WeakMap<Uint8Array, string>();

/**
 * The sha256 of a component's bytes, computed once per array (an array handed to a runner must not change).
 * @param code the component bytes (`invocation.code`)
 * @returns the lowercase hex sha256
 * @throws TypeError when `code` is not a Uint8Array
 * @example componentDigest(invocation.code) === TEXT_STATS.componentSha256
 */
export function componentDigest(code: Uint8Array): string {
  if (!(code instanceof Uint8Array)) throw new TypeError(`"invocation.code" expected a Uint8Array`);
  let digest = digests.get(code);
  if (digest === undefined) {
    digest = sha256Hex(code);
    digests.set(code, digest);
  }
  return digest;
}

/**
 * Compile a component's core modules for one memory limit, once per (component digest, limit, metering): each is
 * taken from the component bytes (or the glue's inline bytes), fuel-instrumented when it defines a memory and
 * `meterFuel` is on, rewritten to export its state, capped to the limit, and compiled. Bounded LRU cache.
 * @param code the component bytes the glue was generated from
 * @param component the transpiled component (names and sources of its core modules)
 * @param memoryLimitBytes the invocation's memory limit; each memory's maximum becomes `floor(limit / 64 KiB)` pages
 * @param meterFuel whether the memory-defining modules (the guest's engine) are fuel-instrumented
 * @returns the compiled modules by name and their cache key (also the key of the runner's instance pool)
 * @throws RangeError when `memoryLimitBytes` is not an integer of at least one page
 * @throws ReachError `PACK_MALFORMED` when the component lacks a core module the glue names, or a module is malformed
 * @example
 * const { key, modules } = await compileCoreModules(code, TEXT_STATS, 64 * 1024 * 1024, true);
 * modules.get("tool.core.wasm")?.metered; // true: it defines the guest's memory
 */
export async function compileCoreModules(
  code: Uint8Array,
  component: TranspiledComponent,
  memoryLimitBytes: number,
  meterFuel: boolean,
): Promise<CompiledCores> {
  const limit = memoryLimitBytes;
  if (!Number.isSafeInteger(limit) || limit < WASM_PAGE_BYTES) {
    throw new RangeError(`"memoryLimitBytes" expected an integer of at least ${WASM_PAGE_BYTES}, got ${limit}`);
  }
  const maxPages = Math.min(65_536, Math.floor(limit / WASM_PAGE_BYTES));
  const key = `${component.componentSha256}/${component.glueSha256}/${maxPages}/${meterFuel}`;
  const hit = compiled.get(key);
  if (hit !== undefined) {
    compiled.delete(key); // refresh its place (LRU)
    compiled.set(key, hit);
    return { key, ...hit };
  }
  const embedded = coreModulesOf(code);
  const out = new Map<string, CompiledCore>();
  const digests: string[] = [`glue:${component.glueSha256}\n`];
  for (const [name, source] of Object.entries(component.coreModules)) {
    let bytes: Uint8Array;
    if ("embedded" in source) {
      const m = embedded[source.embedded];
      if (m === undefined) throw new ReachError("PACK_MALFORMED", `component has no core module #${source.embedded}`);
      bytes = m;
    } else {
      bytes = base64ToBytes(source.base64);
    }
    // Meter the modules that define a memory: the guest's engine. The others are small adapters and trampolines
    // that only run when called from it (a per-module counter each would split the one budget).
    const meter = meterFuel && definesMemory(bytes);
    if (meter) bytes = await instrumentedBytes(bytes);
    // Export every memory, table and mutable global so that an instance can be reset to its initial state.
    const state = exportState(bytes);
    if (state !== null) bytes = state.bytes;
    const final = capMemory(bytes, maxPages);
    digests.push(`${name}:${sha256Hex(final)}\n`);
    const module = await WebAssembly.compile(final as Uint8Array<ArrayBuffer>);
    out.set(name, { module, metered: meter, snapshotable: state !== null });
  }
  const meteredDigest = sha256Hex(digests.sort().join(""));
  compiled.set(key, { modules: out, meteredDigest });
  while (compiled.size > COMPILED_CACHE_ENTRIES) compiled.delete(compiled.keys().next().value!);
  return { key, modules: out, meteredDigest };
}

/** Fuel-instrumented bytes of a core module, instrumented once per digest (bounded cache). */
function instrumentedBytes(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const digest = sha256Hex(bytes);
  let entry = instrumented.get(digest);
  if (entry === undefined) {
    entry = instrumentFuel(bytes);
    instrumented.set(digest, entry);
    entry.catch(() => instrumented.delete(digest));
    while (instrumented.size > INSTRUMENTED_CACHE_ENTRIES) instrumented.delete(instrumented.keys().next().value!);
  }
  return entry;
}
