/**
 * `reach-wasm/node`: the platform for the engine call on Node and Deno, handed in as one environment object — the
 * engine environment (QuickJS and Python engines, native SHA-256, the real clock, the integrity-checked disk caches) —
 * with reading packs and trust stores from the host, writing results atomically, and running engine calls on their
 * own threads (so a signal or a cancel acts at once). Importing it changes nothing.
 *
 * ```ts
 * import { runIsolated, readPackFiles } from "./node.ts";
 *
 * const controller = new AbortController();
 * const run = await runIsolated({ pack: { files: await readPackFiles("packs/hello") } }, { signal: controller.signal });
 * console.log(run.status);
 * ```
 * @module
 */
export { defaultEnvironment } from "./environment.ts";
export type { DefaultEnvironmentOptions } from "./environment.ts";
export { readPackFiles } from "./pack-files.ts";
export { MAX_PACK_BYTES } from "../engine/mod.ts";
export { loadHostPack } from "./host-pack.ts";
export { loadTrustStore, readTrustStoreText, watchTrustStore } from "../platform/trust-file.ts";
export { writeDirAtomic, writeFileAtomic } from "../platform/write.ts";
export { prepareOutDir } from "../platform/out-dir.ts";
export { EngineThreadPool, openIsolatedSession, runIsolated } from "./engine-thread.ts";
export type { EngineThreadOptions, IsolatedSession, WireRequest } from "./engine-thread.ts";
export { readPythonWasm } from "../platform/python-engine.ts";
export { readQuickJsEngineWasm } from "../platform/quickjs-engine.ts";
