/**
 * `reach-wasm pack init|validate|build|sign|test`:
 * - `pack init <dir> [--template NAME]` — a new, runnable pack from a template (one tool in that language, its
 *   build script and test cases) in an empty or new directory (`pack-init.ts`);
 * - `pack validate <dir|archive> [--json]` — load and check it exactly as `run` would, its static plan through the plan
 *   gate included (`static-plan.ts`; exit 0 valid, 2 invalid);
 * - `pack build <dir> [--out FILE]` — a deterministic `.tar.gz` of the pack (default `<id>-<version>.pack.tar.gz`);
 * - `pack sign <dir> --key FILE [--signed-at ISO] [--json]` — sign the pack digest into `<dir>/.reach/signature`;
 * - `pack test [dir] [--trust FILE] [--json]` — run the pack's `tests/*.json` through the engine (`pack-test.ts`).
 * @module
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { bytesToHex } from "../engine/mod.ts";
import { packTrust } from "../engine/mod.ts";
import { checkPackSources } from "../engine/mod.ts";
import { checkStaticPlan } from "../engine/mod.ts";
import { defaultEnvironment } from "../host/mod.ts";
import { readPrivateKeyFile } from "../platform/files.ts";
import { refuseInsidePack } from "../platform/out-dir.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { parsePrivateKeyFile } from "../engine/mod.ts";
import { formatPackSignature, PACK_SIGNATURE_PATH, signPack } from "../engine/mod.ts";
import type { CliIO } from "./io.ts";
import { findCommand } from "./commands.ts";
import { parseCommand, subcommandOf, usageError } from "./options.ts";
import { PACK_BUILD, PACK_SIGN, PACK_SUBCOMMANDS, PACK_VALIDATE } from "./specs-pack.ts";
import { loadHostPack } from "../host/mod.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { createProgress } from "./progress.ts";

const enc = new TextEncoder();

async function validate(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(PACK_VALIDATE, argv);
  const dir = positionals[0]!;
  const loaded = await loadHostPack(dir);
  await checkPackSources(defaultEnvironment(), loaded);
  const plan = await checkStaticPlan(loaded); // refused with the code run would refuse it with
  const trust = packTrust(loaded, await loadTrustStore(values.trust));
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
    ...(plan === null ? {} : { plan }),
    signed: trust.signed,
    trusted: trust.trusted,
    warnings,
  };
  io.stderr(`reach-wasm: pack ${summary.id}@${summary.version} is valid: ${summary.tools.length} tool(s), ${plan === null ? "planner module" : `static plan ${JSON.stringify(plan.planId)} (${plan.steps} ${plan.work}${plan.approvalRequired ? "; risk 3: run needs --approve or --approval" : ""})`}, ${trust.signed ? `signed${trust.trusted ? " by a trusted key" : " (key not in the trust store)"}` : "unsigned"}\n`);
  if (values.json) io.stdout(JSON.stringify(summary) + "\n");
  return 0;
}

async function build(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(PACK_BUILD, argv);
  const dir = positionals[0]!;
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
  const out = values.out ?? `${loaded.pack.id}-${loaded.pack.version}.pack.tar.gz`;
  await refuseInsidePack(out, dir, "--out");
  await writeFileAtomic(out, bytes);
  io.stderr(`reach-wasm: wrote ${out} (${bytes.length} bytes, pack digest ${loaded.packDigest})\n`);
  if (values.json) io.stdout(JSON.stringify({ archive: out, bytes: bytes.length, packDigest: loaded.packDigest }) + "\n");
  return 0;
}

async function sign(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(PACK_SIGN, argv);
  const dir = positionals[0]!;
  const keyPath = values.key;
  if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) throw usageError(PACK_SIGN, `${JSON.stringify(dir)} is not a pack directory (sign the directory, then build the archive)`);
  const pair = parsePrivateKeyFile(new TextDecoder().decode(await readPrivateKeyFile(keyPath)));
  const loaded = await loadHostPack(dir); // a pack that does not load is not signed
  const doc = signPack(loaded.files, pair.privateKey, values["signed-at"]);
  await writeFileAtomic(join(dir, ...PACK_SIGNATURE_PATH.split("/")), enc.encode(formatPackSignature(doc)), 0o644, { within: dir });
  const publicKey = bytesToHex(pair.publicKey);
  io.stderr(`reach-wasm: signed ${loaded.pack.id}@${loaded.pack.version} (digest ${doc.packDigest}) with key ${publicKey} into ${join(dir, PACK_SIGNATURE_PATH)}\n`);
  if (values.json) io.stdout(JSON.stringify({ packDigest: doc.packDigest, publicKey, signature: join(dir, PACK_SIGNATURE_PATH) }) + "\n");
  return 0;
}

/**
 * The `pack` command.
 * @param argv arguments after `pack`
 * @param io output streams
 * @returns the exit code
 */
export async function runPackCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { spec, argv: rest } = subcommandOf(findCommand("pack")!, PACK_SUBCOMMANDS, argv);
  switch (spec.name) {
    case "pack init":
      return (await import("./pack-init.ts")).packInit(rest, io);
    case "pack test":
      return (await import("./pack-test.ts")).packTest(rest, io);
    case "pack add-mcp":
      return (await import("./pack-add-mcp.ts")).packAddMcp(rest, io);
    case "pack validate":
      return validate(rest, io);
    case "pack build":
      return build(rest, io);
    default:
      return sign(rest, io);
  }
}
