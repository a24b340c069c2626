/**
 * `reach-wasm pack init|validate|build|sign`:
 * - `pack init <dir>` — a new, runnable pack (one QuickJS tool, a static plan) in an empty or new directory;
 * - `pack validate <dir|archive> [--json]` — load and check it exactly as `run` would (exit 0 valid, 2 invalid);
 * - `pack build <dir> [--out FILE]` — a deterministic `.tar.gz` of the pack (default `<id>-<version>.pack.tar.gz`);
 * - `pack sign <dir> --key FILE [--signed-at ISO] [--json]` — sign the pack digest into `<dir>/.reach/signature`.
 * @module
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { bytesToHex } from "../canonical/hex.ts";
import { packTrust } from "../engine/pack.ts";
import { readHostFile } from "../platform/files.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { ReachError } from "../protocol/errors.ts";
import { parsePrivateKeyFile } from "../trust/keys.ts";
import { formatPackSignature, PACK_SIGNATURE_PATH, signPack } from "../trust/pack-signature.ts";
import type { CliIO } from "./io.ts";
import { loadHostPack } from "../platform/host-pack.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { createProgress } from "./progress.ts";

const USAGE = "reach-wasm pack init <dir> | validate <dir|archive> [--json] | build <dir> [--out FILE] | sign <dir> --key FILE [--signed-at ISO] [--json]";
const enc = new TextEncoder();

function bad(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `pack: ${message}; usage: ${USAGE}`);
}

type Opts = { positional: string[]; flags: Map<string, string | true> };
function parse(argv: readonly string[], valued: readonly string[], bare: readonly string[]): Opts {
  const out: Opts = { positional: [], flags: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (valued.includes(a)) {
      const v = argv[++i];
      if (v === undefined) throw bad(`${a} needs a value`);
      out.flags.set(a, v);
    } else if (bare.includes(a)) out.flags.set(a, true);
    else if (a.startsWith("--")) throw bad(`unknown option ${a}`);
    else out.positional.push(a);
  }
  return out;
}

const INIT_TOOL = `// greet — a QuickJS tool: (input, reach) => output. Input and output are JSON objects.
export default function greet(input, reach) {
  const name = typeof input.name === "string" ? input.name : "world";
  reach.log.info(\`greeting \${name}\`);
  return { greeting: \`Hello, \${name}!\` };
}
`;

function initFiles(id: string): Map<string, string> {
  const pack = {
    specVersion: "1.0.0",
    id,
    version: "0.1.0",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "greet" }] }, policies: { maxToolCalls: 10 } },
    entrypoint: "plan.json",
    metadata: { description: "A new reach-wasm pack" },
    tools: {
      greet: {
        kind: "js",
        module: "tools/greet.js",
        inputSchema: { type: "object", properties: { name: { type: "string" } } },
        outputSchema: { type: "object", properties: { greeting: { type: "string" } }, required: ["greeting"] },
      },
    },
  };
  const plan = {
    contract_version: "S2-B-05.v1",
    plan_id: `${id}-1`,
    goal_id: "greet",
    created_at: "1970-01-01T00:00:00.000Z",
    planner: "static",
    status: "APPROVED",
    risk: { level: 0 },
    scope: { allowed: ["greet"] },
    steps: [{ id: "greet", tool: "greet", arguments: { name: { $input: "/name" } }, return_spec: { type: "object", required: ["greeting"] } }],
    success_criteria: ["a greeting"],
  };
  return new Map([
    ["reach.json", JSON.stringify(pack, null, 2) + "\n"],
    ["plan.json", JSON.stringify(plan, null, 2) + "\n"],
    ["tools/greet.js", INIT_TOOL],
  ]);
}

async function init(o: Opts, io: CliIO): Promise<number> {
  const [dir] = o.positional;
  if (dir === undefined) throw bad("init needs a directory");
  const existing = await readdir(dir).catch(() => null);
  if (existing !== null && existing.length > 0) throw bad(`${JSON.stringify(dir)} is not empty; give a new or empty directory`);
  const id = (dir.split(/[\\/]/).filter(Boolean).pop() ?? "my-pack").replace(/[^a-zA-Z0-9._-]/g, "-");
  for (const [path, text] of initFiles(id)) await writeFileAtomic(join(dir, path), enc.encode(text));
  io.stderr(`reach-wasm: created pack ${id} in ${dir}; try: reach-wasm run ${dir} --input - <<< '{"name":"Ada"}'\n`);
  return 0;
}

async function validate(o: Opts, io: CliIO): Promise<number> {
  const [dir] = o.positional;
  if (dir === undefined) throw bad("validate needs a pack");
  const loaded = await loadHostPack(dir);
  const trust = packTrust(loaded, await loadTrustStore(o.flags.get("--trust") as string | undefined));
  for (const w of loaded.warnings) io.stderr(`reach-wasm: warning: ${w}\n`);
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
    warnings: loaded.warnings,
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
  const pair = parsePrivateKeyFile(new TextDecoder().decode(await readHostFile(keyPath, 64 * 1024)));
  const loaded = await loadHostPack(dir); // a pack that does not load is not signed
  const signedAt = o.flags.get("--signed-at");
  const doc = signPack(loaded.files, pair.privateKey, typeof signedAt === "string" ? signedAt : undefined);
  await writeFileAtomic(join(dir, ...PACK_SIGNATURE_PATH.split("/")), enc.encode(formatPackSignature(doc)));
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
  const o = parse(rest, ["--key", "--out", "--signed-at", "--trust"], ["--json"]);
  switch (sub) {
    case "init":
      return init(o, io);
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

