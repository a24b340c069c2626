/**
 * `reach-wasm tokens create --tenant NAME [--db URL | --data DIR] [--json]`: make a bearer token for a tenant of the
 * run service. The token is printed once on stdout (only its SHA-256 is stored).
 * @module
 */
import { createToken } from "../service/tokens.ts";
import type { CliIO } from "./io.ts";
import { openStore, parseArgs, usageError } from "./_service-args.ts";

const USAGE = "reach-wasm tokens create --tenant NAME [--db URL | --data DIR] [--json]";

/**
 * The `tokens` command.
 * @param argv arguments after `tokens`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError for a bad invocation, an unreachable store or server, or a refusal (the CLI exits 2)
 */
export async function runTokensCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "create") throw usageError(USAGE, sub === undefined ? "a subcommand is missing" : `unknown subcommand ${JSON.stringify(sub)}`);
  const args = parseArgs(rest, ["--tenant", "--db", "--data"], ["--json"], USAGE);
  const tenant = args.values.get("--tenant");
  if (tenant === undefined) throw usageError(USAGE, "--tenant NAME is missing");
  if (args.positional.length > 0) throw usageError(USAGE, `unexpected argument ${JSON.stringify(args.positional[0])}`);
  const db = await openStore(args, USAGE);
  try {
    const token = await createToken(db, tenant);
    io.stderr(`reach-wasm: token for tenant ${JSON.stringify(tenant)} stored (as a hash) in ${db.where}; it is shown only now\n`);
    io.stdout(args.flags.has("--json") ? JSON.stringify({ tenant, token }) + "\n" : `${token}\n`);
  } finally {
    await db.close();
  }
  return 0;
}
