/**
 * WASI preview1 over the virtual workspace, and the `wasm` tool runner (PREVIEW1.md and REACH_ABI.md in this folder).
 * @module
 */
export { ClockId, Errno, FdFlags, FileType, OFlags, Rights, WasiErrno, Whence, errnoOf } from "./errno.ts";
export { GuestMemory, MAX_GUEST_SPAN, u32 } from "./memory.ts";
export { FdTable, MAX_OPEN_FDS, MAX_OPEN_FILE_BYTES, OutputSink } from "./fd-table.ts";
export { WasiContext, WasiExit, WasiHalt, virtualSources } from "./context.ts";
export type { Preopen, WasiOptions, WasiSources } from "./context.ts";
export { CLOCK_RESOLUTION_NS, MAX_RANDOM_PER_CALL, WASI_MODULE, WasiPreview1 } from "./preview1.ts";
export { MAX_REQUEST_BYTES, REACH_MODULE, ReachStatus, reachImports } from "./reach-abi.ts";
export { WASM_PAGE_BYTES, limitMemory } from "./memory-limit.ts";
export { WasmToolRunner } from "./runner.ts";
export type { WasmToolRunnerOptions } from "./runner.ts";
