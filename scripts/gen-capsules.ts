/**
 * `npm run capsules`: write the committed compatibility capsules `conformance/capsules/<pack>/<runHash>.capsule.tar.gz`
 * (seed 003 §9.1 "Backward Compatibility"). CI replays them (conformance suite `capsules`) so that a change that breaks
 * old capsules fails loudly. Regenerate only for an intentional format change, and say so in the CHANGELOG.
 * The signed capsule is signed with a key generated here and thrown away (its public key is in the capsule).
 * `npm run capsules -- NAME…` writes only those folders (the others keep their bytes: a signed capsule, or one made
 * against a local server on a random port, never comes out the same twice).
 * The capsules committed before salted value commitments and sandbox API levels (every folder but `notes-salted`,
 * `notes-redacted` and `secret-api-v2`) are written in that previous format (`commitments: null`, sandbox API level 1;
 * conformance/HASHING.md), so that CI shows capsules people already hold keep verifying, replaying and rebuilding as
 * recorded; do not regenerate them. Write new folders by name (`npm run capsules -- NAME`).
 * `notes-salted` is the notes run in the current format, and `notes-redacted` the same run redacted (a step's
 * values and host responses and a workspace file removed); it keeps the run hash of `notes-salted`.
 * @module
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { buildRunCapsule, capsuleFileName, capsuleRequest } from "../src/engine/capsule.ts";
import { runPack } from "../src/engine/coordinator.ts";
import { loadPack } from "../src/engine/pack.ts";
import type { JsonValue } from "../src/protocol/json.ts";
import { nativeSha256Backend } from "../src/platform/native-sha256.ts";
import { readPackFiles } from "../src/host/pack-files.ts";
import { readQuickJsEngineWasm } from "../src/platform/quickjs-engine.ts";
import { readPythonWasm } from "../src/platform/python-engine.ts";
import { generateKeyPair } from "../src/trust/keys.ts";
import { launchMcpStdio } from "../src/platform/mcp-stdio.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { forkCapsule, resumeCapsule } from "../src/engine/fork.ts";
import type { RunRequest } from "../src/engine/types.ts";
import { readJsonl } from "../src/ledger/jsonl.ts";
import { startEchoServer } from "../tests/support/secret-server.ts";
import { redactCapsule } from "../src/engine/redact.ts";

const root = new URL("../", import.meta.url).pathname;
const outRoot = join(root, "conformance/capsules");
/** Folder names to write (`npm run capsules -- mcp_memory`); none: all of them. */
const only = process.argv.slice(2);
// the MCP servers of packs/mcp_memory are the devDependencies' commands
process.env["PATH"] = `${join(root, "node_modules/.bin")}:${process.env["PATH"] ?? ""}`;

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm, sha256: nativeSha256Backend, mcpStdio: launchMcpStdio };

function save(folder: string, status: string, runHash: string, bytes: Uint8Array): Uint8Array {
  const dir = join(outRoot, folder);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, capsuleFileName(runHash)), bytes);
  console.log(`${folder}: ${status} ${runHash} (${bytes.length} bytes)`);
  return bytes;
}

/** Run a pack and write its capsule (unless `only` leaves the folder out); its bytes either way. */
async function capsule(pack: string, folder: string, options: { input?: JsonValue; salted?: boolean; restricted?: boolean; key?: Uint8Array; fetch?: typeof fetch; resume?: RunRequest["resume"]; always?: boolean; secrets?: Record<string, string> } = {}): Promise<Uint8Array | null> {
  if (only.length > 0 && !only.includes(folder) && options.always !== true) return null;
  const loaded = await loadPack(await readPackFiles(join(root, "packs", pack)));
  const req = { restricted: options.restricted ?? false, approve: false };
  // the previous format (no commitments, sandbox API level 1) unless salted (the current format: both); secret-api-v2
  // alone is level 2 without commitments, as it was committed
  const sandboxApi = options.salted === true || folder === "secret-api-v2" ? 2 : 1;
  const record = await runPack({ loaded, env, ...req, sandboxApi, commitments: options.salted === true ? "salted-v1" : null, ...(options.input === undefined ? {} : { input: options.input }), ...(options.fetch === undefined ? {} : { fetch: options.fetch }), ...(options.resume === undefined ? {} : { resume: options.resume }), ...(options.secrets === undefined ? {} : { secrets: options.secrets }) });
  const { bytes } = buildRunCapsule(record, loaded, capsuleRequest(record, req), options.key);
  return only.length > 0 && !only.includes(folder) ? bytes : save(folder, record.status, record.runHash, bytes);
}

/**
 * Forks and resumed runs (conformance/HASHING.md "Forks and resumed runs"): notes forked at its "save" step with other
 * arguments, and notes aborted as its "stats" step starts (a signal's stop at fuel 0), then resumed.
 */
async function lineage(): Promise<void> {
  const wanted = (folder: string) => only.length === 0 || only.includes(folder);
  if (!["notes-fork", "notes-aborted", "notes-resumed"].some(wanted)) return;
  const notes = readRunCapsule((await capsule("notes", "notes", { always: true }))!);
  if (wanted("notes-fork")) {
    const forked = await forkCapsule(notes, env, "save", { arguments: { title: "A forked note", slug: "a-forked-note", text: "Written by a fork of the notes run." } });
    save("notes-fork", forked.status, forked.runHash, forked.capsule.bytes);
  }
  const stats = String(readJsonl(notes.entries.get("events.jsonl")!).events.map((e) => e as { type: string; payload: Record<string, unknown> })
    .find((e) => e.type === "tool.invoked" && e.payload["stepId"] === "stats")!.payload["invocationId"]);
  const aborted = readRunCapsule((await capsule("notes", "notes-aborted", { always: true, resume: { stops: new Map([[stats, { fuel: 0n, reason: "abort" }]]), signal: "SIGINT" } }))!);
  if (wanted("notes-resumed")) {
    const resumed = await resumeCapsule(aborted, env);
    save("notes-resumed", resumed.status, resumed.runHash, resumed.capsule.bytes);
  }
}

/** The notes run salted, and redacted (conformance/HASHING.md "Redaction"): same run hash, the save step's values and a file gone. */
async function redacted(): Promise<void> {
  const bytes = await capsule("notes", "notes-salted", { salted: true, always: only.includes("notes-redacted") });
  if (only.length > 0 && !only.includes("notes-redacted")) return;
  const notes = readRunCapsule(bytes!);
  const out = redactCapsule(notes, { steps: ["save"], entries: ["workspace/after/out/index.json"] });
  save("notes-redacted", "COMPLETED", out.index.runHash, out.bytes);
}

await capsule("hello", "hello", { restricted: true });
await capsule("notes", "notes");
await lineage();
await redacted();
await capsule("notes", "notes-signed", { key: generateKeyPair().privateKey });
await capsule("return_spec_fail", "return_spec_fail");
await capsule("path_escape_fail", "path_escape_fail");
// parallel steps (the same bytes at any --parallel), a Python tool with an intent (seed 004) and a generator tool
await capsule("parallel", "parallel");
await capsule("chart", "chart");
// an MCP tool (recorded, not contained): server-memory over stdio; the capsule replays without it
await capsule("mcp_memory", "mcp_memory");
const server = createServer((_req, res) => {
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ title: "a recorded document", body: "x".repeat(6000) }));
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
try {
  await capsule("http", "http", { input: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/doc.json` }, fetch: (u, i) => fetch(u, i) });
} finally {
  server.close();
}
// a run with a secret (packs/secret-api against a local API that echoes its bearer token): the capsule holds only
// {{secret:API_TOKEN}}, and replays offline without the value. Written as secret-api-v2: a run at sandbox API level 2,
// whose js and python tools take the placeholder from reach.secret. The folder secret-api holds the run of the pack
// as it was before levels existed (level 1: its tool wrote the placeholder itself); like every other folder made
// before levels, it is kept as committed (regenerating it would record level 2) so that CI replays level 1 too.
const api = await startEchoServer(["committed-capsule-token-0123456789"]);
try {
  await capsule("secret-api", "secret-api-v2", { input: { url: `http://127.0.0.1:${api.port}/bounce` }, fetch: (u, i) => fetch(u, i), secrets: { API_TOKEN: "committed-capsule-token-0123456789" } });
} finally {
  await api.close();
}
