/**
 * A small strict argument parser for the commands that take a few flags and positional paths (`show`, `report`,
 * `diff`): unknown options and a wrong number of positionals are `PROTO_INVALID_ARGUMENT` naming the usage.
 * @module
 */
import { ReachError } from "../protocol/errors.ts";

/** What a command accepts. */
export type ArgSpec = { command: string; usage: string; bare: readonly string[]; valued: readonly string[]; positionals: number };

/**
 * Parse arguments.
 * @param argv the arguments after the command name
 * @param spec the flags and how many positionals
 * @returns the flags (bare ones as `true`) and the positionals
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for an unknown option, a flag without its value, or a wrong count
 * @example parseArgs(["x.tar.gz", "--json"], { command: "show", usage: "…", bare: ["--json"], valued: [], positionals: 1 })
 */
export function parseArgs(argv: readonly string[], spec: ArgSpec): { flags: Map<string, string | true>; positional: string[] } {
  const bad = (message: string) => new ReachError("PROTO_INVALID_ARGUMENT", `${spec.command}: ${message}; usage: ${spec.usage}`);
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (spec.bare.includes(a)) flags.set(a, true);
    else if (spec.valued.includes(a)) {
      const v = argv[++i];
      if (v === undefined || v === "") throw bad(`${a} needs a value`);
      flags.set(a, v);
    } else if (a.startsWith("-") && a !== "-") throw bad(`unknown option ${JSON.stringify(a)}`);
    else positional.push(a);
  }
  if (positional.length !== spec.positionals) throw bad(`expected ${spec.positionals} path${spec.positionals === 1 ? "" : "s"}, got ${positional.length}`);
  return { flags, positional };
}
