/**
 * The QuickJS engine's WebAssembly bytes, read from the installed `@jitl/quickjs-wasmfile-release-sync` package
 * (Node and Deno; Deno needs `--allow-read` for the file). The `js` tool runner takes them as its `engineWasm`.
 * @module
 */
import { packageFileOnce } from "./_package-file.ts";

const read = packageFileOnce("@jitl/quickjs-wasmfile-release-sync/wasm");

/**
 * Read the engine's `.wasm` file once per process.
 * @returns the bytes of `@jitl/quickjs-wasmfile-release-sync/wasm`
 * @throws Error when the package is not installed or the file cannot be read
 * @example
 * ```ts
 * const bytes: Uint8Array = await readQuickJsEngineWasm();
 * ```
 */
export function readQuickJsEngineWasm(): Promise<Uint8Array> {
  return read();
}
