/**
 * `reach-wasm replay <capsule> [--no-exec] [--json]` and `reach-wasm verify <capsule|pack-dir> [--trust FILE] [--json]`.
 * Exit 0: replay matched / verification passed; 1: replay diverged / a check failed; 2: the capsule or pack cannot
 * be read at all (malformed, malicious, truncated, over a limit) or a bad invocation.
 * @module
 */
import { stat } from "node:fs/promises";
import { archiveIsCanonical, readArchive, readRunCapsule, runCapsuleFromEntries } from "../engine/host-api.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import type { VerifyCheck } from "../engine/verify.ts";
import { DEFAULT_ARCHIVE_LIMITS } from "../engine/host-api.ts";
import { replayCapsule } from "../engine/replay.ts";
import { packTrust } from "../engine/pack.ts";
import { readHostFile } from "../platform/files.ts";
import { defaultEnvironment } from "../host/environment.ts";
import { ReachError } from "../protocol/errors.ts";
import type { CliIO } from "./io.ts";
import { loadHostPack } from "../host/host-pack.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { createProgress } from "./progress.ts";
import { isLargeRun } from "./run-source.ts";

function args(argv: readonly string[], name: string, bare: readonly string[], valued: readonly string[]) {
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (bare.includes(a)) flags.set(a, true);
    else if (valued.includes(a)) {
      const v = argv[++i];
      if (v === undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", `${name}: ${a} needs a value`);
      flags.set(a, v);
    } else if (a.startsWith("--")) throw new ReachError("PROTO_INVALID_ARGUMENT", `${name}: unknown option ${a}; see reach-wasm ${name} --help`);
    else positional.push(a);
  }
  if (positional.length !== 1) throw new ReachError("PROTO_INVALID_ARGUMENT", `${name}: give exactly one capsule${name === "verify" ? " or pack directory" : ""}; see reach-wasm ${name} --help`);
  return { target: positional[0]!, flags };
}

async function readCapsuleFile(path: string) {
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
  const { target, flags } = args(argv, "replay", ["--json", "--no-exec"], []);
  const progress = createProgress(io);
  let report: Awaited<ReturnType<typeof replayCapsule>>;
  try {
    const capsule = await progress.task(`reading ${target}`, () => readCapsuleFile(target), { announce: await isLargeRun(target) });
    const label = flags.has("--no-exec") ? "checking the capsule" : "replaying";
    report = await progress.task(label, () => replayCapsule(capsule, defaultEnvironment(), { noExec: flags.has("--no-exec"), onProgress: progress.run }));
  } finally {
    progress.done();
  }
  if (report.matches) {
    io.stderr(`reach-wasm: ${flags.has("--no-exec") ? "verified without execution" : `replayed (${report.status})`}: run hash ${report.runHash} matches (${report.durationMs.toFixed(0)} ms)\n`);
  } else {
    io.stderr(`reach-wasm: REPLAY_DIVERGENCE: ${report.divergence?.message ?? `run hash ${report.runHash} differs from the recorded ${report.expectedRunHash}`}\n`);
  }
  if (flags.has("--json")) {
    const out: Record<string, unknown> = { runHash: report.runHash, expectedRunHash: report.expectedRunHash, matches: report.matches, status: report.status, durationMs: Math.round(report.durationMs) };
    if (report.divergence !== null) out["divergence"] = { code: "REPLAY_DIVERGENCE", ...report.divergence };
    if (report.checks !== undefined) out["checks"] = report.checks;
    io.stdout(JSON.stringify(out) + "\n");
  }
  return report.matches ? 0 : 1;
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
  const { target, flags } = args(argv, "verify", ["--json"], ["--trust"]);
  const store = await loadTrustStore(flags.get("--trust") as string | undefined);
  const isDir = await stat(target).then((s) => s.isDirectory(), () => false);
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
    try {
      const bytes = await readHostFile(target, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes);
      const entries = await progress.task(`reading ${target}`, () => readArchive(bytes), { announce });
      canonical = archiveIsCanonical(bytes, entries);
      v = await progress.task("verifying", () => verifyRunCapsule(runCapsuleFromEntries(entries), store ?? undefined), { announce });
    } finally {
      progress.done();
    }
    valid = v.valid;
    checks = canonical ? v.checks : [...v.checks, { name: "archive", ok: true,
      message: "the file was re-compressed or re-packed: every entry is intact, but its bytes are not the ones reach-wasm wrote" }];
    extra = { runHash: v.runHash, ...(v.signer === null ? {} : { signer: v.signer }) };
  }
  printChecks(io, checks);
  io.stderr(`reach-wasm: ${valid ? "verification passed" : `verification FAILED: ${checks.filter((c) => !c.ok).map((c) => c.name).join(", ")}`}\n`);
  if (flags.has("--json")) io.stdout(JSON.stringify({ valid, checks, ...extra }) + "\n");
  return valid ? 0 : 1;
}
