/**
 * `reach-wasm/node`: the platform for the engine call on Node and Deno — the engine environment (QuickJS and Python
 * engines, native SHA-256, the integrity-checked disk caches), reading packs and trust stores from the host,
 * writing results atomically, and running engine calls on their own threads (so a signal or a cancel acts at once).
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
export { readPackFiles, MAX_PACK_BYTES } from "./pack-files.ts";
export { loadHostPack } from "./host-pack.ts";
export { loadTrustStore, readTrustStoreText, watchTrustStore } from "./trust-file.ts";
export { writeDirAtomic, writeFileAtomic } from "./write.ts";
export { prepareOutDir } from "./out-dir.ts";
export { EngineThreadPool, openIsolatedSession, runIsolated, setEngineWorkerUrl } from "./engine-thread.ts";
export type { IsolatedSession, WireRequest } from "./engine-thread.ts";
export { readPythonWasm } from "./python-engine.ts";
export { readQuickJsEngineWasm } from "./quickjs-engine.ts";
