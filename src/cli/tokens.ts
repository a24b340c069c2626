/**
 * `reach-wasm tokens create --tenant NAME [--db URL | --data DIR] [--json]`: make a bearer token for a tenant of the
 * run service. The token is printed once on stdout (only its SHA-256 is stored).
 * @module
 */
import { createToken } from "../service/mod.ts";
import type { CliIO } from "./io.ts";
import { openStore } from "./_service-args.ts";
import { findCommand } from "./commands.ts";
import { parseCommand, subcommandOf } from "./options.ts";
import { TOKENS_CREATE } from "./specs-service.ts";

/**
 * The `tokens` command.
 * @param argv arguments after `tokens`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError for a bad invocation, an unreachable store or server, or a refusal (the CLI exits 2)
 */
export async function runTokensCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { spec, argv: rest } = subcommandOf(findCommand("tokens")!, [TOKENS_CREATE], argv);
  const { values: args } = parseCommand(spec, rest);
  const tenant = args.tenant;
  const db = await openStore(args, spec);
  try {
    const token = await createToken(db, tenant);
    io.stderr(`reach-wasm: token for tenant ${JSON.stringify(tenant)} stored (as a hash) in ${db.where}; it is shown only now\n`);
    io.stdout(args.json ? JSON.stringify({ tenant, token }) + "\n" : `${token}\n`);
  } finally {
    await db.close();
  }
  return 0;
}
