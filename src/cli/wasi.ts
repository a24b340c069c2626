/**
 * `reach-wasm wasi <module.wasm> [--dir HOST[::GUEST]]... [--env K=V]... [--seed N] [-- ARGS...]`
 * (ARCHITECTURE.md "Command line"): run any WASI preview1 command under the deterministic shim. `--dir` copies a
 * host directory into a virtual workspace and preopens it under GUEST (default: HOST as written); nothing is
 * written back. Only the given `--env` variables exist. The clock starts at 1970-01-01T00:00:00.000Z and
 * randomness is the stream `wasi` of `--seed` (default 0). stdin is empty (nothing is read from the host). stdout
 * and stderr pass through; the exit code is the guest's (capped at 255). A bad invocation exits 2 with a
 * ReachError message; a trap exits 1. A refused file access (a path leaving a preopen, a link) is an errno for the
 * guest and a note on stderr. No fuel metering here: the guest runs until it ends (stop it with Ctrl-C).
 * @module
 */
import { VirtualClock } from "../determinism/clock.ts";
import { deriveStream, parseSeed } from "../determinism/prng.ts";
import { readDirTree, readHostFile } from "../platform/files.ts";
import { ReachError } from "../protocol/errors.ts";
import { normalizeWorkspacePath } from "../sandbox/workspace/path.ts";
import { Workspace } from "../sandbox/workspace/workspace.ts";
import { WasiExit, WasiHalt, virtualSources } from "../sandbox/wasi/context.ts";
import type { Preopen } from "../sandbox/wasi/context.ts";
import { WasiPreview1 } from "../sandbox/wasi/preview1.ts";
import type { CliIO } from "./io.ts";

/** Parsed `wasi` arguments. */
export type WasiCommandArgs = {
  module: string;
  dirs: { host: string; guest: string }[];
  env: [string, string][];
  seed: string;
  args: string[];
};

function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `wasi: ${message}; usage: reach-wasm wasi <module.wasm> [--dir HOST[::GUEST]]... [--env K=V]... [--seed N] [-- ARGS...]`);
}

/**
 * Parse the arguments after `wasi`.
 * @param argv the arguments
 * @returns the parsed arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a missing module, an unknown option or a malformed value
 * @example parseWasiArgs(["tool.wasm", "--dir", "data::/data", "--", "x"])
 */
export function parseWasiArgs(argv: readonly string[]): WasiCommandArgs {
  const out: WasiCommandArgs = { module: "", dirs: [], env: [], seed: "0", args: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw bad(`${a} needs a value`);
      return v;
    };
    if (a === "--") {
      out.args = argv.slice(i + 1);
      break;
    } else if (a === "--dir") {
      const v = value();
      const at = v.indexOf("::");
      const host = at < 0 ? v : v.slice(0, at);
      const guest = at < 0 ? v : v.slice(at + 2);
      if (host === "" || guest === "") throw bad(`--dir ${JSON.stringify(v)} needs HOST or HOST::GUEST`);
      out.dirs.push({ host, guest });
    } else if (a === "--env") {
      const v = value();
      const eq = v.indexOf("=");
      if (eq <= 0 || v.includes("\0")) throw bad(`--env ${JSON.stringify(v)} must be NAME=VALUE`);
      out.env.push([v.slice(0, eq), v.slice(eq + 1)]);
    } else if (a === "--seed") {
      const v = value();
      try {
        out.seed = parseSeed(v);
      } catch {
        throw bad(`--seed expects a decimal integer 0..2^64-1, got ${JSON.stringify(v)}`);
      }
    } else if (a.startsWith("-")) {
      throw bad(`unknown option ${JSON.stringify(a)}`);
    } else if (out.module === "") {
      out.module = a;
    } else {
      throw bad(`unexpected argument ${JSON.stringify(a)}; pass guest arguments after "--"`);
    }
  }
  if (out.module === "") throw bad("the module is missing");
  return out;
}

/** The workspace folder of a guest name: "/data" and "./data" → "data"; "/" and "." → the root. */
function workspaceFolder(guest: string): string {
  try {
    return normalizeWorkspacePath(guest.replace(/^\/+/, ""), { directory: true, operation: "wasi.dir" });
  } catch {
    throw bad(`--dir guest name ${JSON.stringify(guest)} must be a plain path without ".."`);
  }
}

/**
 * Run the `wasi` command.
 * @param argv the arguments after `wasi`
 * @param io output streams
 * @returns the guest's exit code; 2 for a bad invocation; 1 when the guest trapped
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad invocation (the caller reports it and exits 2)
 * @example await runWasiCommand(["tool.wasm", "--dir", "data"], io)
 */
export async function runWasiCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseWasiArgs(argv);
  const code = await readHostFile(parsed.module);
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(code as BufferSource);
  } catch (err) {
    throw bad(`${JSON.stringify(parsed.module)} is not a WebAssembly module (${(err as Error).message})`);
  }
  const ws = new Workspace();
  const preopens: Preopen[] = [];
  const used = new Set<string>();
  for (const d of parsed.dirs) {
    const folder = workspaceFolder(d.guest);
    const overlaps = [...used].some((u) => u === "" || folder === "" || u === folder || u.startsWith(folder + "/") || folder.startsWith(u + "/"));
    if (overlaps) throw bad(`--dir guest names overlap (${JSON.stringify(d.guest)}); give each directory its own GUEST name`);
    used.add(folder);
    const tree = await readDirTree(d.host);
    if (folder !== "") ws.mkdir(folder);
    const at = (p: string): string => (folder === "" ? p : `${folder}/${p}`);
    for (const dir of tree.dirs) ws.mkdir(at(dir));
    for (const [p, bytes] of tree.files) ws.write(at(p), bytes);
    for (const [p, target] of tree.links) ws.symlink(at(p), target);
    preopens.push({ guest: d.guest, path: folder });
  }
  const decoders = [new TextDecoder(), new TextDecoder()];
  const name = parsed.module.split(/[\\/]/).pop()!;
  const wasi = new WasiPreview1({
    args: [name, ...parsed.args],
    env: parsed.env,
    sources: virtualSources(new VirtualClock(0), deriveStream(parsed.seed, "wasi")),
    fs: ws,
    preopens,
    maxStdoutBytes: 256 * 1024 * 1024,
    maxStderrBytes: 64 * 1024 * 1024,
    onStdout: (b) => io.stdout(decoders[0]!.decode(b, { stream: true })),
    onStderr: (b) => io.stderr(decoders[1]!.decode(b, { stream: true })),
  });
  let exit = 0;
  try {
    const instance = await WebAssembly.instantiate(module, wasi.imports(module));
    wasi.bind(instance);
    const start = instance.exports["_start"];
    if (typeof start !== "function") throw bad(`${JSON.stringify(parsed.module)} is not a WASI command (no "_start" export)`);
    start();
  } catch (err) {
    if (err instanceof WasiExit) exit = err.code;
    else if (err instanceof WasiHalt) {
      io.stderr(`reach-wasm: ${err.error.code}: ${err.error.message}\n`);
      exit = 1;
    } else if (err instanceof ReachError) throw err;
    else {
      io.stderr(`reach-wasm: EXEC_TOOL_FAILED: the module trapped: ${(err as Error).message}\n`);
      exit = 1;
    }
  }
  if (wasi.ctx.exited !== null) exit = wasi.ctx.exited.code;
  io.stdout(decoders[0]!.decode());
  io.stderr(decoders[1]!.decode());
  if (wasi.ctx.violation !== null) {
    io.stderr(`reach-wasm: note: the guest was refused: ${wasi.ctx.violation.code}: ${wasi.ctx.violation.message}\n`);
  }
  return exit > 255 ? 255 : exit;
}
