/**
 * `npm run capsules`: write the committed compatibility capsules `conformance/capsules/<pack>/<runHash>.capsule.tar.gz`
 * (issue 5 "Compatibility over time"). CI replays them (conformance suite `capsules`) so that a change that breaks
 * old capsules fails loudly. Regenerate only for an intentional format change, and say so in the CHANGELOG.
 * The signed capsule is signed with a key generated here and thrown away (its public key is in the capsule).
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

const root = new URL("../", import.meta.url).pathname;
const outRoot = join(root, "conformance/capsules");
/** Folder names to write (`npm run capsules -- mcp_memory`); none: all of them. */
const only = process.argv.slice(2);
// the MCP servers of packs/mcp_memory are the devDependencies' commands
process.env["PATH"] = `${join(root, "node_modules/.bin")}:${process.env["PATH"] ?? ""}`;

async function capsule(pack: string, folder: string, options: { input?: JsonValue; restricted?: boolean; key?: Uint8Array; fetch?: typeof fetch } = {}): Promise<void> {
  if (only.length > 0 && !only.includes(folder)) return;
  const loaded = await loadPack(await readPackFiles(join(root, "packs", pack)));
  const req = { restricted: options.restricted ?? false, approve: false };
  const record = await runPack({ loaded, env: { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm, sha256: nativeSha256Backend, mcpStdio: launchMcpStdio }, ...req, ...(options.input === undefined ? {} : { input: options.input }), ...(options.fetch === undefined ? {} : { fetch: options.fetch }) });
  const { bytes } = buildRunCapsule(record, loaded, capsuleRequest(record, req), options.key);
  const dir = join(outRoot, folder);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, capsuleFileName(record.runHash)), bytes);
  console.log(`${folder}: ${record.status} ${record.runHash} (${bytes.length} bytes)`);
}

await capsule("hello", "hello", { restricted: true });
await capsule("notes", "notes");
await capsule("notes", "notes-signed", { key: generateKeyPair().privateKey });
await capsule("return_spec_fail", "return_spec_fail");
await capsule("path_escape_fail", "path_escape_fail");
// issue 13: parallel steps (the same bytes at any --parallel), a Python tool with an intent and a generator tool
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
