/**
 * The Python interpreter's WebAssembly bytes, read from the installed `@micropython/micropython-webassembly-pyscript`
 * package (Node and Deno; Deno needs `--allow-read` for the file). The `python` tool runner takes them as its
 * `pythonWasm`; only the `.wasm` is read — the package's JavaScript glue is never loaded.
 * @module
 */
import { packageFileOnce } from "./_package-file.ts";

const read = packageFileOnce("@micropython/micropython-webassembly-pyscript/micropython.wasm");

/**
 * Read `micropython.wasm` once per process.
 * @returns the bytes of `@micropython/micropython-webassembly-pyscript/micropython.wasm`
 * @throws Error when the package is not installed or the file cannot be read
 * @example
 * ```ts
 * const bytes: Uint8Array = await readPythonWasm();
 * ```
 */
export function readPythonWasm(): Promise<Uint8Array> {
  return read();
}
