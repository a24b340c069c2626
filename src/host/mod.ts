/**
 * What other rooms take from src/host/ (ARCHITECTURE.md "Layout"): every import from another folder comes
 * through this file.
 * @module
 */
export { runInlineFirst, stoppedAtEnd } from "./engine-inline.ts";
export { EngineThreadPool, openIsolatedSession, runIsolated } from "./engine-thread.ts";
export type { IsolatedSession, WireRequest } from "./engine-thread.ts";
export { defaultEnvironment } from "./environment.ts";
export { loadHostPack } from "./host-pack.ts";
export { readPackFiles } from "./pack-files.ts";
export { progressSignals } from "./signal-points.ts";
