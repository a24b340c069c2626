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
import { runWasi } from "../engine/mod.ts";
import { readDirTree, readHostFile } from "../platform/files.ts";
import { parseCommand, usageError } from "./options.ts";
import { WASI } from "./specs-run.ts";
import { rawIO } from "./io.ts";
import type { CliIO } from "./io.ts";

/** Parsed `wasi` arguments. */
export type WasiCommandArgs = {
  module: string;
  dirs: { host: string; guest: string }[];
  env: [string, string][];
  seed: string;
  args: string[];
};

/**
 * Parse the arguments after `wasi` (declared in `specs-run.ts`).
 * @param argv the arguments
 * @returns the parsed arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a missing module, an unknown option or a malformed value
 * @example parseWasiArgs(["tool.wasm", "--dir", "data::/data", "--", "x"])
 */
export function parseWasiArgs(argv: readonly string[]): WasiCommandArgs {
  const { values, positionals, rest } = parseCommand(WASI, argv);
  const names = values.env.map(([k]) => k);
  const twice = names.find((k, i) => names.indexOf(k) !== i);
  if (twice !== undefined) throw usageError(WASI, `--env ${twice}=… is given twice; give each variable once`);
  return { module: positionals[0]!, dirs: values.dir, env: values.env, seed: values.seed ?? "0", args: rest };
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
  const dirs = [];
  for (const d of parsed.dirs) {
    const tree = await readDirTree(d.host);
    dirs.push({ guest: d.guest, dirs: tree.dirs, files: tree.files, links: tree.links });
  }
  const decoders = [new TextDecoder(), new TextDecoder()];
  // The guest's own output: escaped on a terminal (a sandboxed guest may not write the clipboard, retitle or clear
  // the screen), byte for byte into a file or a pipe; the lines reach-wasm adds (a trap, a refusal) always escaped.
  const out = { stdout: io.terminal?.stdout === true ? io.stdout : rawIO(io).stdout, stderr: io.terminal?.stderr === true ? io.stderr : rawIO(io).stderr };
  const outcome = await runWasi({
    module: code,
    name: parsed.module.split(/[\\/]/).pop()!,
    args: parsed.args,
    env: parsed.env,
    seed: parsed.seed,
    dirs,
    onStdout: (b) => out.stdout(decoders[0]!.decode(b, { stream: true })),
    onStderr: (b) => out.stderr(decoders[1]!.decode(b, { stream: true })),
  });
  out.stdout(decoders[0]!.decode());
  out.stderr(decoders[1]!.decode());
  if (outcome.trap !== null) io.stderr(`reach-wasm: ${outcome.trap}\n`);
  if (outcome.refused !== null) io.stderr(`reach-wasm: note: the guest was refused: ${outcome.refused.code}: ${outcome.refused.message}\n`);
  return outcome.exitCode;
}
