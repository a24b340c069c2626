/**
 * The QuickJS engine: one WebAssembly instance of `@jitl/quickjs-wasmfile-release-sync` (QuickJS compiled with
 * emscripten), made from the fuel-instrumented engine module (`../fuel/`), with the emscripten glue's host imports
 * made deterministic (ARCHITECTURE.md "Stopping a tool that will not stop").
 *
 * The glue of quickjs-emscripten 0.32.0 hands the engine these host imports (minified names; checked at load):
 * - `p` `emscripten_date_now` — QuickJS's `Date.now()` and its `Math.random` seed → always 0 (both are replaced
 *   inside the sandbox anyway; this makes the engine itself a pure function of its inputs);
 * - `m` `_localtime_js`, `n` `_tzset_js` — local time → fixed to UTC, no daylight saving;
 * - `e` `environ_get`, `f` `environ_sizes_get` — the environment (`LANG`, `_` = script path, …) → empty;
 * - `j` `_setitimer_js` — host timers → refused (never schedules anything);
 * - `c` `fd_write` — stdout/stderr → discarded; `b` / `q` (assertion, abort) → a silent trap.
 * Everything else (heap growth, the quickjs-emscripten callbacks) is passed through.
 *
 * Engines are never disposed, only dropped (and garbage-collected with their memory): the runner keeps an engine only
 * while its memory is exactly what it was right after its sandbox was prepared (README.md "Reuse"), and replaces it
 * with a fresh instance of the same compiled module otherwise. An engine that trapped is torn mid-call anyway, and
 * `dispose` would assert.
 * @module
 */
import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";
import { ReachError } from "../../protocol/mod.ts";
import { FuelSlot, getMeteredModule, unmeteredWork } from "../fuel/mod.ts";
import type { MeteredModuleStore } from "../fuel/mod.ts";
import { currentBreak, memoryLayout } from "./snapshot.ts";
import type { MemoryLayout } from "./snapshot.ts";

/** Where the engine's WebAssembly bytes come from (the platform layer reads them from node_modules). */
export type EngineWasmSource = Uint8Array | (() => Promise<Uint8Array>);

/** A loaded engine: the quickjs-emscripten module and the WebAssembly instance under it. */
export type QuickJsEngine = {
  /** The quickjs-emscripten module (new runtimes and contexts come from here). */
  readonly module: QuickJSWASMModule;
  /** The instance, with the exported `reach_fuel` counter when the engine is metered. */
  readonly instance: WebAssembly.Instance;
  /** The engine's linear memory. */
  readonly memory: WebAssembly.Memory;
  /** Whether `instance` carries a fuel counter. */
  readonly metered: boolean;
  /** The refill import of a metered engine (bind an invocation's `FuelMeter` to it), else null. */
  readonly slot: FuelSlot | null;
  /** SHA-256 of the instrumented engine module (what runs every tool), null when unmetered. */
  readonly meteredDigest: string | null;
  /** The most the linear memory may grow to, in bytes (see `engineMemoryCap`). */
  readonly memoryCapBytes: number;
  /** Where its memory keeps static data, stack and heap (`null`: unknown, so sandboxes are never snapshotted). */
  readonly layout: MemoryLayout | null;
};

type Imports = { a: Record<string, unknown> };
type Fn = (...args: never[]) => unknown;

/**
 * quickjs-emscripten and its release-sync variant, loaded on first use (a run without JavaScript never pays for
 * them). The variant's type declarations are CommonJS-shaped; at run time ESM gives the variant itself.
 */
let quickjsPackages: Promise<{ newModule: (v: QuickJSSyncVariant) => Promise<QuickJSWASMModule>; releaseSync: QuickJSSyncVariant }> | null = null;
function loadQuickjsPackages(): NonNullable<typeof quickjsPackages> {
  quickjsPackages ??= Promise.all([import("quickjs-emscripten-core"), import("@jitl/quickjs-wasmfile-release-sync")]).then(([core, variant]) => {
    const v = (variant.default ?? variant) as unknown as QuickJSSyncVariant & { default?: QuickJSSyncVariant };
    return { newModule: core.newQuickJSWASMModuleFromVariant, releaseSync: typeof v.importModuleLoader === "function" ? v : (v.default as QuickJSSyncVariant) };
  });
  return quickjsPackages;
}

const EXPECTED_IMPORTS = "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t";

/** Source fragments that identify the imports we replace (fail closed on any other glue version). */
const FINGERPRINTS: Record<string, string> = {
  p: "Date.now",
  m: "getTimezoneOffset",
  n: "UTC",
  j: "setTimeout",
  c: "decode",
};

function glueMismatch(what: string): ReachError {
  return new ReachError(
    "EXEC_RESOURCE_UNAVAILABLE",
    `the QuickJS engine's emscripten glue is not the one this runner was written for (${what}); ` +
      "install @jitl/quickjs-wasmfile-release-sync 0.32.0 (package.json pins it) or update src/sandbox/quickjs/engine.ts",
  );
}

/**
 * Replace the glue's nondeterministic host imports (see the module documentation), in place.
 * @param imports the import object the glue passes to `instantiateWasm`
 * @returns the linear memory the glue created
 * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when the imports do not look like quickjs-emscripten 0.32.0's
 */
function makeImportsDeterministic(imports: Imports): WebAssembly.Memory {
  const env = imports?.a;
  if (typeof env !== "object" || env === null) throw glueMismatch("no import module \"a\"");
  const keys = Object.keys(env).sort().join(",");
  if (keys !== EXPECTED_IMPORTS) throw glueMismatch(`imports ${keys}`);
  for (const [name, hint] of Object.entries(FINGERPRINTS)) {
    const fn = env[name];
    if (typeof fn !== "function" || !String(fn).includes(hint)) throw glueMismatch(`import ${name}`);
  }
  const memory = env["a"];
  if (!(memory instanceof WebAssembly.Memory)) throw glueMismatch("no memory import");
  const i32 = (): Int32Array => new Int32Array(memory.buffer);
  const u8 = (): Uint8Array => new Uint8Array(memory.buffer);
  const trap = (): never => {
    throw new WebAssembly.RuntimeError("QuickJS aborted");
  };

  env["p"] = (() => 0) satisfies Fn;
  // _localtime_js(time: i64 seconds, tm*): struct tm in UTC.
  env["m"] = ((time: bigint | number, tm: number) => {
    const ms = Number(time) * 1000;
    const d = new Date(Number.isFinite(ms) ? ms : 0);
    const h = i32();
    const base = tm >> 2;
    const yearStart = Date.UTC(d.getUTCFullYear(), 0, 1);
    h[base] = d.getUTCSeconds();
    h[base + 1] = d.getUTCMinutes();
    h[base + 2] = d.getUTCHours();
    h[base + 3] = d.getUTCDate();
    h[base + 4] = d.getUTCMonth();
    h[base + 5] = d.getUTCFullYear() - 1900;
    h[base + 6] = d.getUTCDay();
    h[base + 7] = Math.floor((d.getTime() - yearStart) / 86_400_000);
    h[base + 8] = 0; // tm_isdst
    h[base + 9] = 0; // tm_gmtoff
  }) satisfies Fn;
  // _tzset_js(timezone*, daylight*, std_name*, dst_name*): UTC, no daylight saving.
  env["n"] = ((timezone: number, daylight: number, stdName: number, dstName: number) => {
    const h = i32();
    h[timezone >> 2] = 0;
    h[daylight >> 2] = 0;
    const bytes = u8();
    for (const at of [stdName, dstName]) bytes.set([0x55, 0x54, 0x43, 0], at); // "UTC\0"
  }) satisfies Fn;
  env["j"] = (() => 0) satisfies Fn; // _setitimer_js: no host timers
  env["e"] = (() => 0) satisfies Fn; // environ_get: nothing to write
  env["f"] = ((count: number, size: number) => {
    const h = i32();
    h[count >> 2] = 0;
    h[size >> 2] = 0;
    return 0;
  }) satisfies Fn;
  // fd_write(fd, iovs, iovcnt, nwritten*): swallow the bytes, report them written.
  env["c"] = ((_fd: number, iovs: number, iovcnt: number, nwritten: number) => {
    const h = i32();
    let total = 0;
    for (let k = 0; k < iovcnt; k++) total += h[((iovs + k * 8 + 4) >> 2)] ?? 0;
    h[nwritten >> 2] = total;
    return 0;
  }) satisfies Fn;
  const cstr = (ptr: number): string => {
    const bytes = u8();
    let end = ptr;
    while (end < bytes.length && bytes[end] !== 0 && end - ptr < 200) end++;
    return new TextDecoder().decode(bytes.subarray(ptr, end));
  };
  env["b"] = ((cond: number, file: number, line: number, fn: number) => {
    throw new WebAssembly.RuntimeError(`QuickJS assertion failed: ${cstr(cond)} at ${cstr(file)}:${line} ${cstr(fn)}`);
  }) satisfies Fn;
  env["q"] = trap satisfies Fn;
  return memory;
}

const PAGE = 65_536;
/** The glue's initial memory (emscripten `INITIAL_MEMORY`): 16 MiB for QuickJS's static data, stack and first heap. */
export const ENGINE_BASE_BYTES = 16 * 1024 * 1024;
const MAX_PAGES = 32_768; // 2 GiB: the glue's own ceiling

/**
 * The linear-memory ceiling of an engine for a given memory limit: the limit plus the engine's base, in whole
 * pages, at most 2 GiB. QuickJS's own limit (`setMemoryLimit`) does not count every allocation (typed-array
 * backing stores escape it), so the ceiling of the WebAssembly memory itself is what bounds the host's memory.
 * @param memoryLimitBytes the invocation's memory limit
 * @returns the ceiling in bytes
 */
export function engineMemoryCap(memoryLimitBytes: number): number {
  const pages = Math.min(MAX_PAGES, Math.ceil((memoryLimitBytes + ENGINE_BASE_BYTES) / PAGE));
  return pages * PAGE;
}

/**
 * Compiles (and instruments) the engine module once, and makes fresh engine instances of it. Only the compiled
 * `WebAssembly.Module` is shared: each engine gets its own instance, linear memory and quickjs-emscripten module,
 * in the state emscripten's start-up leaves it in (a few ms; the instrumentation, 1–3 s, is paid once per process).
 */
export class EngineHost {
  readonly #source: EngineWasmSource;
  readonly #metered: boolean;
  readonly #store: MeteredModuleStore | null;
  #compiled: Promise<{ module: WebAssembly.Module; layout: MemoryLayout | null; meteredDigest: string | null }> | undefined;

  /**
   * @param source the engine's WebAssembly bytes, or a loader for them
   * @param metered instrument the engine with fuel (default true); unmetered engines cannot stop loops inside
   *   QuickJS's C code (`new Array(1e9).join()`) before the timeout's host-side check
   * @param store where the instrumented engine is kept between processes (default: memory only)
   */
  constructor(source: EngineWasmSource, metered = true, store: MeteredModuleStore | null = null) {
    this.#source = source;
    this.#metered = metered;
    this.#store = store;
  }

  /** Compile (and instrument) the engine module once; read its memory layout from the original bytes. */
  #compile(): Promise<{ module: WebAssembly.Module; layout: MemoryLayout | null; meteredDigest: string | null }> {
    this.#compiled ??= (async () => {
      const bytes = typeof this.#source === "function" ? await this.#source() : this.#source;
      if (!(bytes instanceof Uint8Array)) throw new TypeError(`"engineWasm" expected Uint8Array bytes of the QuickJS engine`);
      if (!this.#metered) return { module: await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>), layout: memoryLayout(bytes), meteredDigest: null };
      const metered = await getMeteredModule(bytes, {}, this.#store);
      return { module: metered.module, layout: memoryLayout(bytes), meteredDigest: metered.meteredDigest };
    })().catch((err: unknown) => {
      this.#compiled = undefined;
      throw err;
    });
    return this.#compiled;
  }

  /**
   * A fresh engine: a new instance of the compiled module, with a new linear memory whose ceiling fits the limit.
   * @param memoryLimitBytes the invocations' memory limit (sets the memory ceiling, `engineMemoryCap`)
   * @returns the engine, on which no runtime was made yet
   * @throws ReachError `EXEC_RESOURCE_UNAVAILABLE` when the engine cannot be loaded
   * @example const engine = await new EngineHost(bytes).instantiate(64 * 1024 * 1024);
   */
  async instantiate(memoryLimitBytes: number): Promise<QuickJsEngine> {
    const memoryCapBytes = engineMemoryCap(memoryLimitBytes);
    const { newModule, releaseSync } = await loadQuickjsPackages().catch((cause: unknown) => {
      quickjsPackages = null;
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "quickjs-emscripten could not be loaded; reinstall dependencies (npm ci)", { cause });
    });
    const { module: compiled, layout, meteredDigest } = await this.#compile();
    const wasmMemory = new WebAssembly.Memory({ initial: ENGINE_BASE_BYTES / PAGE, maximum: memoryCapBytes / PAGE });
    let instance: WebAssembly.Instance | undefined;
    let memory: WebAssembly.Memory | undefined;
    let failure: unknown;
    // emscripten's start-up runs engine code before any invocation: it draws on a meter of its own.
    const slot = this.#metered ? new FuelSlot() : null;
    const setup = unmeteredWork();
    if (slot !== null) setup.bind(slot);
    const variant = {
      ...releaseSync,
      importModuleLoader: async () => {
        const loader = (await releaseSync.importModuleLoader()) as unknown as (arg: object) => Promise<unknown>;
        return (arg: object = {}) =>
          loader({
            ...arg,
            thisProgram: "quickjs",
            wasmMemory,
            print: () => undefined,
            printErr: () => undefined,
            instantiateWasm(imports: Imports, done: (inst: WebAssembly.Instance, mod: WebAssembly.Module) => unknown) {
              try {
                memory = makeImportsDeterministic(imports);
                const all = slot === null ? imports : { ...imports, ...slot.imports };
                instance = new WebAssembly.Instance(compiled, all as unknown as WebAssembly.Imports);
                slot?.attach(instance);
                done(instance, compiled);
              } catch (err) {
                failure = err;
                throw err;
              }
              return {};
            },
          });
      },
    } as QuickJSSyncVariant;
    let module: QuickJSWASMModule;
    try {
      module = await newModule(variant);
    } catch (err) {
      const cause = failure ?? err;
      if (cause instanceof ReachError) throw cause;
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the QuickJS engine could not be instantiated; reinstall dependencies", { cause });
    }
    if (instance === undefined || memory === undefined) throw glueMismatch("instantiateWasm was not used");
    if (memory !== wasmMemory) throw glueMismatch("the glue did not use the memory it was given");
    // The instance's break must be where the layout says (set by the glue's start-up allocations).
    const brk = layout === null ? 0 : currentBreak(memory, layout);
    const fits = layout !== null && brk >= layout.stackTop && brk <= memory.buffer.byteLength;
    setup.release();
    return { module, instance, memory, metered: this.#metered, slot, meteredDigest, memoryCapBytes, layout: fits ? layout : null };
  }
}
