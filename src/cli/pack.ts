/**
 * `reach-wasm pack init|validate|build|sign|test`:
 * - `pack init <dir> [--template NAME]` — a new, runnable pack from a template (one tool in that language, its
 *   build script and test cases) in an empty or new directory (`pack-init.ts`);
 * - `pack validate <dir|archive> [--json]` — load and check it exactly as `run` would (exit 0 valid, 2 invalid);
 * - `pack build <dir> [--out FILE]` — a deterministic `.tar.gz` of the pack (default `<id>-<version>.pack.tar.gz`);
 * - `pack sign <dir> --key FILE [--signed-at ISO] [--json]` — sign the pack digest into `<dir>/.reach/signature`;
 * - `pack test [dir] [--trust FILE] [--json]` — run the pack's `tests/*.json` through the engine (`pack-test.ts`).
 * @module
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { bytesToHex } from "../engine/host-api.ts";
import { packTrust } from "../engine/pack.ts";
import { checkPackSources } from "../engine/source-check.ts";
import { defaultEnvironment } from "../host/environment.ts";
import { readPrivateKeyFile } from "../platform/files.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { parsePrivateKeyFile } from "../engine/host-api.ts";
import { formatPackSignature, PACK_SIGNATURE_PATH, signPack } from "../engine/host-api.ts";
import type { CliIO } from "./io.ts";
import { bad, parsePackArgs } from "./pack-args.ts";
import type { PackOpts as Opts } from "./pack-args.ts";
import { loadHostPack } from "../host/host-pack.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { createProgress } from "./progress.ts";

const enc = new TextEncoder();

async function validate(o: Opts, io: CliIO): Promise<number> {
  const [dir] = o.positional;
  if (dir === undefined) throw bad("validate needs a pack");
  const loaded = await loadHostPack(dir);
  await checkPackSources(defaultEnvironment(), loaded);
  const trust = packTrust(loaded, await loadTrustStore(o.flags.get("--trust") as string | undefined));
  const warnings = [...loaded.warnings, ...(loaded.deprecations ?? []).map((d) => d.message)];
  for (const w of warnings) io.stderr(`reach-wasm: warning: ${w}\n`);
  const summary = {
    valid: true,
    id: loaded.pack.id,
    version: loaded.pack.version,
    manifestHash: loaded.manifestHash,
    packDigest: loaded.packDigest,
    tools: [...loaded.tools.values()].map((t) => ({ name: t.name, kind: t.definition.kind, sha256: t.codeHash })),
    entrypoint: loaded.entrypoint.kind,
    signed: trust.signed,
    trusted: trust.trusted,
    warnings,
  };
  io.stderr(`reach-wasm: pack ${summary.id}@${summary.version} is valid: ${summary.tools.length} tool(s), ${summary.entrypoint === "plan" ? "static plan" : "planner module"}, ${trust.signed ? `signed${trust.trusted ? " by a trusted key" : " (key not in the trust store)"}` : "unsigned"}\n`);
  if (o.flags.has("--json")) io.stdout(JSON.stringify(summary) + "\n");
  return 0;
}

async function build(o: Opts, io: CliIO): Promise<number> {
  const [dir] = o.positional;
  if (dir === undefined) throw bad("build needs a pack directory");
  const { writeArchive } = await import("../capsule/archive.ts");
  const progress = createProgress(io);
  let loaded: Awaited<ReturnType<typeof loadHostPack>>;
  let bytes: Uint8Array;
  try {
    loaded = await progress.task(`loading ${dir}`, () => loadHostPack(dir));
    bytes = await progress.task("archiving", () => writeArchive([...loaded.files].map(([path, b]) => ({ path, bytes: b }))));
  } finally {
    progress.done();
  }
  const out = (o.flags.get("--out") as string | undefined) ?? `${loaded.pack.id}-${loaded.pack.version}.pack.tar.gz`;
  await writeFileAtomic(out, bytes);
  io.stderr(`reach-wasm: wrote ${out} (${bytes.length} bytes, pack digest ${loaded.packDigest})\n`);
  if (o.flags.has("--json")) io.stdout(JSON.stringify({ archive: out, bytes: bytes.length, packDigest: loaded.packDigest }) + "\n");
  return 0;
}

async function sign(o: Opts, io: CliIO): Promise<number> {
  const [dir] = o.positional;
  const keyPath = o.flags.get("--key");
  if (dir === undefined || typeof keyPath !== "string") throw bad("sign needs a pack directory and --key FILE");
  if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) throw bad(`${JSON.stringify(dir)} is not a pack directory (sign the directory, then build the archive)`);
  const pair = parsePrivateKeyFile(new TextDecoder().decode(await readPrivateKeyFile(keyPath)));
  const loaded = await loadHostPack(dir); // a pack that does not load is not signed
  const signedAt = o.flags.get("--signed-at");
  const doc = signPack(loaded.files, pair.privateKey, typeof signedAt === "string" ? signedAt : undefined);
  await writeFileAtomic(join(dir, ...PACK_SIGNATURE_PATH.split("/")), enc.encode(formatPackSignature(doc)), 0o644, { within: dir });
  const publicKey = bytesToHex(pair.publicKey);
  io.stderr(`reach-wasm: signed ${loaded.pack.id}@${loaded.pack.version} (digest ${doc.packDigest}) with key ${publicKey} into ${join(dir, PACK_SIGNATURE_PATH)}\n`);
  if (o.flags.has("--json")) io.stdout(JSON.stringify({ packDigest: doc.packDigest, publicKey, signature: join(dir, PACK_SIGNATURE_PATH) }) + "\n");
  return 0;
}

/**
 * The `pack` command.
 * @param argv arguments after `pack`
 * @param io output streams
 * @returns the exit code
 */
export async function runPackCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = argv;
  const o = parsePackArgs(rest, ["--key", "--out", "--signed-at", "--trust", "--template"], ["--json"]);
  switch (sub) {
    case "init":
      return (await import("./pack-init.ts")).packInit(o, io);
    case "test":
      return (await import("./pack-test.ts")).packTest(o, io);
    case "validate":
      return validate(o, io);
    case "build":
      return build(o, io);
    case "sign":
      return sign(o, io);
    default:
      throw bad(sub === undefined ? "a subcommand is missing" : `unknown subcommand ${JSON.stringify(sub)}`);
  }
}

