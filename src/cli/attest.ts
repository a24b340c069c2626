/**
 * `reach-wasm attest <capsule> --key FILE [--out FILE] [--json]`: write an in-toto attestation of a capsule — a DSSE
 * envelope holding an in-toto Statement v1 about the capsule file, signed with the key (`src/engine/attestation.ts`;
 * the predicate is documented in `conformance/ATTESTATION.md`). The capsule must verify first; it is only read.
 * `reach-wasm verify <capsule> --attestation FILE` checks the envelope (`capsule-commands.ts`).
 * @module
 */
import { archiveIsCanonical, DEFAULT_ARCHIVE_LIMITS, parsePrivateKeyFile, readArchive, runCapsuleFromEntries } from "../engine/mod.ts";
import { attestCapsule, RUN_PREDICATE_TYPE } from "../engine/mod.ts";
import { verifyRunCapsule } from "../engine/mod.ts";
import { readHostFile, readPrivateKeyFile, refuseOutputOverInput } from "../platform/files.ts";
import { refuseRunDirectory } from "./run-source.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { parseCommand } from "./options.ts";
import { ATTEST } from "./specs-attest.ts";
import { VERSION } from "./version.ts";

/** The default envelope path: beside the capsule, `.capsule.tar.gz` replaced by `.intoto.json`. */
function defaultOut(capsule: string): string {
  return capsule.endsWith(".capsule.tar.gz") ? `${capsule.slice(0, -".capsule.tar.gz".length)}.intoto.json` : `${capsule}.intoto.json`;
}

/**
 * The `attest` command.
 * @param argv arguments after `attest`
 * @param io output streams
 * @returns 0 when the envelope is written
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad invocation, an unreadable key or capsule, an --out that is the
 *   capsule; `REPLAY_CAPSULE_INVALID` for a capsule that does not verify (nothing is written)
 * @example await runAttestCommand(["run.capsule.tar.gz", "--key", "me.key"], io)
 */
export async function runAttestCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(ATTEST, argv);
  const target = positionals[0]!;
  const out = values.out ?? defaultOut(target);
  await refuseOutputOverInput(out, [target, values.key], "write the attestation beside the capsule");
  const privateKey = parsePrivateKeyFile(new TextDecoder().decode(await readPrivateKeyFile(values.key))).privateKey;
  await refuseRunDirectory(target, "attest");
  const bytes = await readHostFile(target, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes);
  const entries = readArchive(bytes);
  const canonical = archiveIsCanonical(bytes, entries); // before runCapsuleFromEntries takes capsule.json out
  const capsule = runCapsuleFromEntries(entries);
  const v = verifyRunCapsule(capsule);
  if (!v.valid) {
    const failed = v.checks.filter((c) => !c.ok);
    throw new ReachError("REPLAY_CAPSULE_INVALID", `${target} does not verify (${failed.map((c) => `${c.name}: ${c.message}`).join("; ")}); an attestation vouches for a capsule, so nothing was written`, { details: { failed: failed.map((c) => c.name) } });
  }
  if (!canonical) io.stderr(`reach-wasm: note: ${target} was re-packed by another tool; the attestation is about these bytes\n`);
  const name = target.split(/[\\/]/).pop()!;
  const { envelope, subject, publicKey } = attestCapsule({ bytes, capsule, name, privateKey, producerVersion: VERSION });
  await writeFileAtomic(out, new TextEncoder().encode(envelope));
  io.stderr(`reach-wasm: attested ${name} (sha256 ${subject.sha256.slice(0, 16)}…, run hash ${v.runHash.slice(0, 16)}…) signed by ${publicKey.slice(0, 16)}…; wrote ${out}\n`);
  if (values.json) io.stdout(JSON.stringify({ out, subject, runHash: v.runHash, predicateType: RUN_PREDICATE_TYPE, publicKey }) + "\n");
  return 0;
}
