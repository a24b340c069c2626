/**
 * A file of an installed package, read once per process (the engines' `.wasm` files: `quickjs-engine.ts`,
 * `python-engine.ts`). Node and Deno; Deno needs `--allow-read` for the file.
 * @module
 */
import { readFile } from "./_fs.ts";
import { createRequire } from "node:module";

/**
 * A loader that reads `specifier` (resolved like an import) the first time it is called, and again only after a
 * failed read.
 * @param specifier a package path such as `@jitl/quickjs-wasmfile-release-sync/wasm`
 * @returns the loader
 */
export function packageFileOnce(specifier: string): () => Promise<Uint8Array> {
  let cached: Promise<Uint8Array> | undefined;
  return () => {
    cached ??= (async () => {
      const buf = await readFile(createRequire(import.meta.url).resolve(specifier));
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    })().catch((err: unknown) => {
      cached = undefined;
      throw err;
    });
    return cached;
  };
}
