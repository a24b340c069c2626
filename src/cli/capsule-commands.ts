/**
 * `reach-wasm replay <capsule> [--no-exec] [--json]` and `reach-wasm verify <capsule|pack-dir> [--trust FILE] [--json]`.
 * Exit 0: replay matched / verification passed; 1: replay diverged / a check failed; 2: the capsule or pack cannot
 * be read at all (malformed, malicious, truncated, over a limit) or a bad invocation; 3 (replay): the capsule is
 * redacted where replay needs it (`REPLAY_REDACTED`, no verdict on the run).
 * @module
 */
import { stat } from "node:fs/promises";
import { archiveIsCanonical, readArchive, readRunCapsule, runCapsuleFromEntries } from "../engine/mod.ts";
import { verifyRunCapsule } from "../engine/mod.ts";
import type { VerifyCheck } from "../engine/mod.ts";
import { DEFAULT_ARCHIVE_LIMITS } from "../engine/mod.ts";
import { replayCapsule } from "../engine/mod.ts";
import { packTrust } from "../engine/mod.ts";
import { readHostFile } from "../platform/files.ts";
import { defaultEnvironment } from "../host/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { parseCommand } from "./options.ts";
import { REPLAY, VERIFY } from "./specs-run.ts";
import { verifyAttestation } from "../engine/mod.ts";
import type { AttestationVerification } from "../engine/mod.ts";
import { hexToBytes, parsePublicKeyFile, publicKeyProblem, MAX_ENVELOPE_CHARS } from "../engine/mod.ts";
import type { RunCapsule, TrustStore } from "../engine/mod.ts";
import { loadHostPack } from "../host/mod.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { createProgress } from "./progress.ts";
import { isLargeRun, refuseRunDirectory } from "./run-source.ts";

async function readCapsuleFile(path: string) {
  await refuseRunDirectory(path, "replay");
  const bytes = await readHostFile(path, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes);
  return readRunCapsule(bytes);
}

/**
 * The `replay` command.
 * @param argv arguments after `replay`
 * @param io output streams
 * @returns the exit code
 */
export async function runReplayCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(REPLAY, argv);
  const target = positionals[0]!;
  const progress = createProgress(io);
  let report: Awaited<ReturnType<typeof replayCapsule>>;
  try {
    const capsule = await progress.task(`reading ${target}`, () => readCapsuleFile(target), { announce: await isLargeRun(target) });
    const label = values["no-exec"] ? "checking the capsule" : "replaying";
    report = await progress.task(label, () => replayCapsule(capsule, defaultEnvironment(), { noExec: values["no-exec"], onProgress: progress.run }));
  } finally {
    progress.done();
  }
  if (report.redacted !== undefined) {
    io.stderr(`reach-wasm: REPLAY_REDACTED: ${report.redacted.message}\n`);
    if (values.json) io.stdout(JSON.stringify({ runHash: null, expectedRunHash: report.expectedRunHash, matches: false, status: null, redacted: report.redacted, ...(report.checks === undefined ? {} : { checks: report.checks }) }) + "\n");
    return 3;
  }
  if (report.matches) {
    io.stderr(`reach-wasm: ${values["no-exec"] ? "verified without execution" : `replayed (${report.status})`}: run hash ${report.runHash} matches (${report.durationMs.toFixed(0)} ms)\n`);
  } else {
    io.stderr(`reach-wasm: REPLAY_DIVERGENCE: ${report.divergence?.message ?? `run hash ${report.runHash} differs from the recorded ${report.expectedRunHash}`}\n`);
  }
  if (values.json) {
    const out: Record<string, unknown> = { runHash: report.runHash, expectedRunHash: report.expectedRunHash, matches: report.matches, status: report.status, durationMs: Math.round(report.durationMs) };
    if (report.divergence !== null) out["divergence"] = { code: "REPLAY_DIVERGENCE", ...report.divergence };
    if (report.checks !== undefined) out["checks"] = report.checks;
    io.stdout(JSON.stringify(out) + "\n");
  }
  return report.matches ? 0 : 1;
}

/** A public key given as 64 hex digits or as a public key file (as `trust add` takes it). */
async function publicKeyOf(text: string): Promise<Uint8Array> {
  if (/^[0-9a-fA-F]{64}$/.test(text)) {
    const key = hexToBytes(text.toLowerCase());
    const problem = publicKeyProblem(key);
    if (problem !== undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", `--key ${text}: the public key ${problem}`);
    return key;
  }
  return parsePublicKeyFile(new TextDecoder().decode(await readHostFile(text, 64 * 1024)));
}

/** `verify --attestation FILE [--key KEY]`: the attestation's checks against the capsule's bytes. */
async function checkAttestation(file: string, key: string | undefined, c: { bytes: Uint8Array; capsule: RunCapsule }, store: TrustStore | null): Promise<AttestationVerification> {
  const envelope = new TextDecoder().decode(await readHostFile(file, MAX_ENVELOPE_CHARS));
  const publicKey = key === undefined ? undefined : await publicKeyOf(key);
  return verifyAttestation({ envelope, bytes: c.bytes, capsule: c.capsule, ...(publicKey === undefined ? {} : { publicKey }), ...(store === null ? {} : { trustStore: store }) });
}

function printChecks(io: CliIO, checks: readonly VerifyCheck[]): void {
  for (const c of checks) io.stderr(`reach-wasm: ${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.message}\n`);
}

/**
 * The `verify` command.
 * @param argv arguments after `verify`
 * @param io output streams
 * @returns the exit code
 */
export async function runVerifyCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(VERIFY, argv);
  const target = positionals[0]!;
  const store = await loadTrustStore(values.trust);
  await refuseRunDirectory(target, "verify");
  const isDir = await stat(target).then((s) => s.isDirectory(), () => false);
  if (values.key !== undefined && values.attestation === undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", "--key names the key an --attestation must be signed by; give --attestation FILE too");
  if (isDir && values.attestation !== undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", `--attestation checks a capsule file, and ${JSON.stringify(target)} is a pack directory`);
  let valid: boolean;
  let checks: VerifyCheck[];
  let extra: Record<string, unknown> = {};
  if (isDir) {
    const loaded = await loadHostPack(target); // a pack that does not load: exit 2
    checks = [{ name: "pack", ok: true, message: `pack ${loaded.pack.id}@${loaded.pack.version} loads; digest ${loaded.packDigest}` }];
    try {
      const t = packTrust(loaded, store);
      checks.push(t.signed
        ? { name: "pack.signature", ok: true, message: `signed by ${t.keyName ?? t.publicKey}${t.trusted ? " (trusted)" : " (not in the trust store)"}` }
        : { name: "pack.signature", ok: false, message: "the pack is not signed; sign it with `reach-wasm pack sign <dir> --key FILE`" });
      extra = { packDigest: loaded.packDigest, trusted: t.trusted };
    } catch (err) {
      if (!(err instanceof ReachError)) throw err;
      checks.push({ name: "pack.signature", ok: false, message: err.message, location: err.details });
    }
    valid = checks.every((c) => c.ok);
  } else {
    const progress = createProgress(io);
    const announce = await isLargeRun(target);
    let v: ReturnType<typeof verifyRunCapsule>;
    let canonical: boolean;
    let att: AttestationVerification | null = null;
    try {
      const bytes = await readHostFile(target, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes);
      const entries = await progress.task(`reading ${target}`, () => readArchive(bytes), { announce });
      canonical = archiveIsCanonical(bytes, entries);
        const capsule = runCapsuleFromEntries(entries);
      v = await progress.task("verifying", () => verifyRunCapsule(capsule, store ?? undefined), { announce });
      if (values.attestation !== undefined) att = await checkAttestation(values.attestation, values.key, { bytes, capsule }, store);
    } finally {
      progress.done();
    }
    checks = canonical ? v.checks : [...v.checks, { name: "archive", ok: true,
      message: "not in canonical form: the file was re-archived or re-compressed (another tar or gzip); every entry is " +
        "checked as above, but the file's bytes are not the ones reach-wasm wrote" }];
    if (att !== null) checks.push(...att.checks);
    valid = checks.every((c) => c.ok);
    extra = { runHash: v.runHash, canonicalArchive: canonical, ...(v.signer === null ? {} : { signer: v.signer }), ...(v.redacted === undefined ? {} : { redacted: v.redacted }), ...(att === null ? {} : { attestation: { valid: att.valid, signer: att.signer } }) };
  }
  printChecks(io, checks);
  io.stderr(`reach-wasm: ${valid ? "verification passed" : `verification FAILED: ${checks.filter((c) => !c.ok).map((c) => c.name).join(", ")}`}\n`);
  if (values.json) io.stdout(JSON.stringify({ valid, checks, ...extra }) + "\n");
  return valid ? 0 : 1;
}
