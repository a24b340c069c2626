/**
 * The argument parsing shared by the `pack` subcommands (`pack.ts`, `pack-init.ts`, `pack-test.ts`).
 * @module
 */
import { ReachError } from "../protocol/errors.ts";

/** The usage line of `reach-wasm pack`. */
export const PACK_USAGE =
  "reach-wasm pack init <dir> [--template js|python|c|rust|as|wat|component] | validate <dir|archive> [--json] | " +
  "build <dir> [--out FILE] | sign <dir> --key FILE [--signed-at ISO] [--json] | test [dir] [--trust FILE] [--json]";

/**
 * A bad invocation of `pack`, with the usage.
 * @param message what is wrong
 * @returns the error (`PROTO_INVALID_ARGUMENT`, exit 2)
 * @example throw bad("init needs a directory");
 */
export function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `pack: ${message}; usage: ${PACK_USAGE}`);
}

/** Parsed arguments: positionals and flags (`--flag value` or bare `--flag`). */
export type PackOpts = { positional: string[]; flags: Map<string, string | true> };

/**
 * Split arguments into positionals and known flags.
 * @param argv the arguments after the subcommand
 * @param valued flags that take a value
 * @param bare flags without a value
 * @returns the parsed arguments
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for an unknown flag or a missing value
 * @example parsePackArgs(["dir", "--json"], [], ["--json"]) // { positional: ["dir"], flags: Map { "--json" => true } }
 */
export function parsePackArgs(argv: readonly string[], valued: readonly string[], bare: readonly string[]): PackOpts {
  const out: PackOpts = { positional: [], flags: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (valued.includes(a)) {
      const v = argv[++i];
      if (v === undefined) throw bad(`${a} needs a value`);
      out.flags.set(a, v);
    } else if (bare.includes(a)) out.flags.set(a, true);
    else if (a.startsWith("--")) throw bad(`unknown option ${a}`);
    else out.positional.push(a);
  }
  return out;
}
