/**
 * The QuickJS engine's WebAssembly bytes, read from the installed `@jitl/quickjs-wasmfile-release-sync` package
 * (Node and Deno; Deno needs `--allow-read` for the file). The `js` tool runner takes them as its `engineWasm`.
 * @module
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

let cached: Promise<Uint8Array> | undefined;

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
  cached ??= (async () => {
    const path = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
    const buf = await readFile(path);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  })().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
