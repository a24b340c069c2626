/**
 * Running any WASI preview1 command under the deterministic shim (`reach-wasm wasi`): the host directories become
 * folders of a virtual workspace preopened under their guest names (nothing is written back), only the given
 * environment exists, the clock is virtual from 1970 and randomness is a seeded stream. The engine function behind
 * the CLI command; the CLI reads the files and passes the bytes.
 * @module
 */
import { VirtualClock } from "../determinism/mod.ts";
import { deriveStream, parseSeed } from "../determinism/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { normalizeWorkspacePath } from "../sandbox/mod.ts";
import { Workspace } from "../sandbox/mod.ts";
import { WasiExit, WasiHalt, virtualSources } from "../sandbox/mod.ts";
import type { Preopen } from "../sandbox/mod.ts";
import { WasiPreview1 } from "../sandbox/mod.ts";

/** A host directory read into memory: its folders, files and symbolic links (relative `/` paths). */
export type WasiDir = { guest: string; dirs: readonly string[]; files: ReadonlyMap<string, Uint8Array>; links: ReadonlyMap<string, string> };

/** What `runWasi` runs. */
export type WasiRequest = {
  /** The module's bytes and its file name (argv[0]). */
  module: Uint8Array;
  name: string;
  /** argv[1..] */
  args: readonly string[];
  env: readonly (readonly [string, string])[];
  /** Decimal seed of `random_get` (default "0"). */
  seed?: string;
  dirs: readonly WasiDir[];
  onStdout: (bytes: Uint8Array) => void;
  onStderr: (bytes: Uint8Array) => void;
};

/** How the guest ended: its exit code (1 after a trap), and a note when it was refused something. */
export type WasiOutcome = { exitCode: number; trap: string | null; refused: ReachError | null };

function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `wasi: ${message}`);
}

/** The workspace folder of a guest name: "/data" and "./data" → "data"; "/" and "." → the root. */
function workspaceFolder(guest: string): string {
  try {
    return normalizeWorkspacePath(guest.replace(/^\/+/, ""), { directory: true, operation: "wasi.dir" });
  } catch {
    throw bad(`--dir guest name ${JSON.stringify(guest)} must be a plain path without ".."`);
  }
}

function workspaceOf(dirs: readonly WasiDir[]): { ws: Workspace; preopens: Preopen[] } {
  const ws = new Workspace();
  const preopens: Preopen[] = [];
  const used = new Set<string>();
  for (const d of dirs) {
    const folder = workspaceFolder(d.guest);
    const overlaps = [...used].some((u) => u === "" || folder === "" || u === folder || u.startsWith(folder + "/") || folder.startsWith(u + "/"));
    if (overlaps) throw bad(`--dir guest names overlap (${JSON.stringify(d.guest)}); give each directory its own GUEST name`);
    used.add(folder);
    if (folder !== "") ws.mkdir(folder);
    const at = (p: string): string => (folder === "" ? p : `${folder}/${p}`);
    for (const dir of d.dirs) ws.mkdir(at(dir));
    for (const [p, bytes] of d.files) ws.write(at(p), bytes);
    for (const [p, target] of d.links) ws.symlink(at(p), target);
    preopens.push({ guest: d.guest, path: folder });
  }
  return { ws, preopens };
}

/**
 * Run a WASI command to its end.
 * @param request the module, its arguments, environment, seed and directories, and where its output goes
 * @returns the exit code (the guest's own; 1 after a trap) and what it was refused
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a module that is not a WASI command or bad directories/seed
 * @example
 * ```ts
 * declare const module: Uint8Array; // a WASI preview1 command
 * const out = await runWasi({
 *   module, name: "tool.wasm", args: ["--help"], env: [], dirs: [],
 *   onStdout: (b) => console.log(new TextDecoder().decode(b)), onStderr: () => {},
 * });
 * console.log(out.exitCode);
 * ```
 */
export async function runWasi(request: WasiRequest): Promise<WasiOutcome> {
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(request.module as BufferSource);
  } catch (err) {
    throw bad(`${JSON.stringify(request.name)} is not a WebAssembly module (${(err as Error).message})`);
  }
  const { ws, preopens } = workspaceOf(request.dirs);
  const wasi = new WasiPreview1({
    args: [request.name, ...request.args],
    env: request.env.map(([k, v]) => [k, v] as [string, string]),
    sources: virtualSources(new VirtualClock(0), deriveStream(parseSeed(request.seed ?? "0"), "wasi")),
    fs: ws,
    preopens,
    maxStdoutBytes: 256 * 1024 * 1024,
    maxStderrBytes: 64 * 1024 * 1024,
    onStdout: request.onStdout,
    onStderr: request.onStderr,
  });
  let exitCode = 0;
  let trap: string | null = null;
  try {
    const instance = await WebAssembly.instantiate(module, wasi.imports(module));
    wasi.bind(instance);
    const start = instance.exports["_start"];
    if (typeof start !== "function") throw bad(`${JSON.stringify(request.name)} is not a WASI command (no "_start" export)`);
    start();
  } catch (err) {
    if (err instanceof WasiExit) exitCode = err.code;
    else if (err instanceof WasiHalt) {
      trap = `${err.error.code}: ${err.error.message}`;
      exitCode = 1;
    } else if (err instanceof ReachError) throw err;
    else {
      trap = `EXEC_TOOL_FAILED: the module trapped: ${(err as Error).message}`;
      exitCode = 1;
    }
  }
  if (wasi.ctx.exited !== null) exitCode = wasi.ctx.exited.code;
  return { exitCode: exitCode > 255 ? 255 : exitCode, trap, refused: wasi.ctx.violation };
}
