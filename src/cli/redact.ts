/**
 * `reach-wasm redact <capsule> (--step ID | --entry PATH | --blob SHA256)... --out FILE` (`src/engine/redact.ts`).
 * Exit 0 written, 2 a bad invocation, a target that does not exist or cannot be redacted, or an unreadable capsule.
 * @module
 */
import { DEFAULT_ARCHIVE_LIMITS, readRunCapsule } from "../engine/mod.ts";
import { redactCapsule } from "../engine/mod.ts";
import { readHostFile, refuseOutputOverInput } from "../platform/files.ts";
import { refuseRunDirectory } from "./run-source.ts";
import { writeFileAtomic } from "../platform/write.ts";
import type { CliIO } from "./io.ts";
import { parseCommand } from "./options.ts";
import { REDACT } from "./specs-redact.ts";

/**
 * The `redact` command.
 * @param argv arguments after `redact`
 * @param io output streams
 * @returns the exit code
 */
export async function runRedactCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(REDACT, argv);
  await refuseRunDirectory(positionals[0]!, "redact");
  await refuseOutputOverInput(values.out, [positionals[0]], "write the redacted copy to a new file (the original stays as it is)");
  const capsule = readRunCapsule(await readHostFile(positionals[0]!, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes));
  const out = redactCapsule(capsule, { steps: values.step, entries: values.entry, blobs: values.blob });
  await writeFileAtomic(values.out, out.bytes);
  const r = out.index.redacted!;
  io.stderr(`reach-wasm: wrote ${values.out}: run hash ${out.index.runHash} unchanged; redacted ${r.steps.length} step(s), ${r.entries.length} entr${r.entries.length === 1 ? "y" : "ies"}\n`);
  for (const h of out.stillHeld) io.stderr(`reach-wasm: warning: a value of step ${h.step} is still in ${h.entry}${h.event === undefined ? "" : ` (event ${h.event})`}; ${h.fix.startsWith("cannot") ? h.fix : `redact it too with ${h.fix}`}\n`);
  if (values.json) io.stdout(JSON.stringify({ runHash: out.index.runHash, out: values.out, redacted: r, stillHeld: out.stillHeld }) + "\n");
  return 0;
}
