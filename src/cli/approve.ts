/**
 * `reach-wasm approve <PLAN_HASH> --key FILE [--out FILE] [--json]`: sign an approval of a risk-3 plan (seed 001 §4)
 * with your key. A run refused with PLAN_APPROVAL_REQUIRED names the plan hash; pass the record with
 * `reach-wasm run … --approval FILE`. It counts only when the key is in the run's trust store.
 * @module
 */
import { readPrivateKeyFile, refuseOutputOverInput } from "../platform/files.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { signApproval } from "../engine/mod.ts";
import { parsePrivateKeyFile } from "../engine/mod.ts";
import type { CliIO } from "./io.ts";
import { parseCommand } from "./options.ts";
import { APPROVE } from "./specs-pack.ts";

/**
 * The `approve` command.
 * @param argv arguments after `approve`
 * @param io output streams
 * @returns 0
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad invocation, an unreadable key or an unwritable --out
 * @example await runApproveCommand(["3a48…", "--key", "me.key", "--out", "approval.json"], io)
 */
export async function runApproveCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(APPROVE, argv);
  const hash = positionals[0]!;
  const { key, out, json } = values;
  if (out !== undefined) await refuseOutputOverInput(out, [key], "write the approval to another file, e.g. approval.json");
  const privateKey = parsePrivateKeyFile(new TextDecoder().decode(await readPrivateKeyFile(key))).privateKey;
  const record = signApproval(hash, privateKey);
  const text = JSON.stringify(record, null, 2) + "\n";
  if (out !== undefined) await writeFileAtomic(out, new TextEncoder().encode(text));
  if (json || out === undefined) io.stdout(json ? JSON.stringify({ ...record, ...(out === undefined ? {} : { out }) }) + "\n" : text);
  if (out !== undefined) io.stderr(`reach-wasm: approval of plan ${hash.slice(0, 16)}… signed by ${record.publicKey.slice(0, 16)}…, written to ${out}\n`);
  return 0;
}
