// Secrets (docs/authoring.md "Secrets"): a pack declares what it needs, the caller supplies values that never enter a
// record, a tool writes {{secret:NAME}}, the host substitutes the value only for the secret's hosts and puts the
// placeholder back wherever the value comes back. Not one byte of the value (nor its encodings) in the capsule, the
// run files, the event stream or the outputs; replay needs neither the value nor the network and gives the same hash.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive } from "../src/capsule/archive.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { runEngine } from "../src/engine/engine.ts";
import type { EngineRun, EngineRunRequest } from "../src/engine/engine.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { forkCapsule } from "../src/engine/fork.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { main } from "../src/cli/cli.ts";
import type { RunProgress } from "../src/engine/types.ts";
import { defaultEnvironment } from "../src/host/environment.ts";
import { ReachError } from "../src/protocol/errors.ts";
import { jsPack, packFromDisk, planOf } from "./support/pack.ts";
import { leaksIn, startEchoServer } from "./support/secret-server.ts";
import type { EchoServer } from "./support/secret-server.ts";

const T1 = "tok/en+One=42&x~s3cr3t";
const T2 = "another-Value_9876543210";
let server: EchoServer;
beforeAll(async () => {
  server = await startEchoServer([T1, T2]);
});
afterAll(async () => {
  await server?.close();
});

const env = defaultEnvironment();
const net: EngineRunRequest["fetch"] = (u, i) => fetch(u, i);

async function run(files: Map<string, Uint8Array>, extra: Partial<EngineRunRequest> = {}): Promise<{ run: EngineRun; events: string }> {
  let events = "";
  const onProgress = (p: RunProgress): void => {
    events += JSON.stringify(p) + "\n";
  };
  const r = await runEngine(env, { pack: { files }, trust: { unrestricted: true }, fetch: net, liveEvents: true, onProgress, ...extra });
  return { run: r, events };
}

/** Every byte a run left: the capsule's entries (decompressed), the run files, the result, the events, the error. */
function everything(r: EngineRun, events: string): [string, Uint8Array | string][] {
  const out: [string, Uint8Array | string][] = [["capsule.tar.gz", r.capsule.bytes]];
  for (const [name, bytes] of readArchive(r.capsule.bytes)) out.push([`capsule:${name}`, bytes]);
  for (const [name, bytes] of r.files) out.push([`files:${name}`, bytes]);
  out.push(["result", JSON.stringify(r.result)], ["events", events], ["error", JSON.stringify(r.error?.toDetails() ?? null)]);
  return out;
}

function expectNoLeak(where: [string, Uint8Array | string][], ...values: string[]): void {
  for (const [name, bytes] of where) for (const v of values) expect(leaksIn(bytes, v), `${name} holds the secret`).toEqual([]);
}

const apiPack = (): Map<string, Uint8Array> => packFromDisk("secret-api");

describe("secrets through the engine call (the library face)", () => {
  it("the value reaches the API, never a record; the tool sees placeholders; the audit names it; replay needs no value", async () => {
    const before = server.seen.length;
    const { run: r, events } = await run(apiPack(), { input: { url: `http://127.0.0.1:${server.port}/bounce` }, secrets: { API_TOKEN: T1 } });
    expect(r.status, JSON.stringify(r.error?.toDetails())).toBe("COMPLETED");
    // the API got the real token, in the header on both hops and in the redirect's query
    const got = server.seen.slice(before);
    expect(got.map((s) => s.headers.authorization)).toEqual([`Bearer ${T1}`, `Bearer ${T1}`]);
    expect(got[1]!.path).toContain(encodeURIComponent(T1));
    // the tool saw placeholders wherever the value came back
    const out = (r.result["outputs"] as Record<string, { answer: Record<string, unknown>; echoed: string; url: string }>)["call"]!;
    expect(out.echoed).toBe("{{secret:API_TOKEN}}");
    expect(out.answer).toMatchObject({ token: "{{secret:API_TOKEN}}", percent: "{{secret:API_TOKEN}}", t: "{{secret:API_TOKEN}}" });
    expect(out.url).toContain("secret:API_TOKEN");
    expect((r.result["capabilityAudit"] as { secrets: unknown }).secrets).toEqual({ declared: ["API_TOKEN"], used: ["API_TOKEN"], unused: [] });
    expectNoLeak(everything(r, events), T1);
    // replay: no value, no network, the same run hash
    const replay = await replayCapsule(readRunCapsule(r.capsule.bytes), env);
    expect(replay.divergence).toBeNull();
    expect(replay.matches).toBe(true);
    // another value, the same answers: the same run hash
    const again = await run(apiPack(), { input: { url: `http://127.0.0.1:${server.port}/bounce` }, secrets: { API_TOKEN: T2 } });
    expect(again.run.runHash).toBe(r.runHash);
    expectNoLeak(everything(again.run, again.events), T2);
  }, 60_000);

  it("a js and a python tool hold only the placeholder; neither can read the value", async () => {
    const files = jsPack({
      tools: { js: `export default (input, reach) => ({ p: "{{secret:" + "API_TOKEN}}" });\n` },
      plan: planOf([{ id: "js", tool: "js" }, { id: "py", tool: "py" }]),
      manifest: { capabilities: { tools: [{ name: "js" }, { name: "py" }] } },
    });
    files.set("tools/py.py", new TextEncoder().encode('def main(input, reach):\n    return {"p": "{{secret:" + "API_TOKEN}}"}\n'));
    const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json")));
    doc.tools.py = { kind: "python", module: "tools/py.py" };
    doc.secrets = { API_TOKEN: { hosts: ["127.0.0.1"] } };
    files.set("reach.json", new TextEncoder().encode(JSON.stringify(doc)));
    const { run: r, events } = await run(files, { secrets: { API_TOKEN: T1 } });
    expect(r.status, JSON.stringify(r.error?.toDetails())).toBe("COMPLETED");
    expect(r.result["outputs"]).toEqual({ js: { p: "{{secret:API_TOKEN}}" }, py: { p: "{{secret:API_TOKEN}}" } });
    expect((r.result["capabilityAudit"] as { secrets: unknown }).secrets).toEqual({ declared: ["API_TOKEN"], used: [], unused: ["API_TOKEN"] });
    expectNoLeak(everything(r, events), T1);
  }, 60_000);

  it("a missing, undeclared or short value is a clear error before anything runs", async () => {
    const url = `http://127.0.0.1:${server.port}/echo`;
    const before = server.seen.length;
    const missing = await run(apiPack(), { input: { url } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ReachError);
    expect((missing as ReachError).code).toBe("PROTO_INVALID_ARGUMENT");
    expect((missing as ReachError).message).toMatch(/needs secret API_TOKEN.*--secret API_TOKEN/);
    const short = await run(apiPack(), { input: { url }, secrets: { API_TOKEN: "short" } }).catch((e: unknown) => e);
    expect((short as ReachError).message).toMatch(/at least 8 bytes.*corrupt/);
    expect((short as ReachError).message).not.toContain("short\"");
    const undeclared = await run(apiPack(), { input: { url }, secrets: { API_TOKEN: T1, OTHER: T2 } }).catch((e: unknown) => e);
    expect((undeclared as ReachError).message).toMatch(/"OTHER", which the pack does not declare/);
    expect(server.seen.length).toBe(before);
  });

  const leakyPack = (url: string, header: string): Map<string, Uint8Array> => {
    const files = jsPack({
      tools: { leak: `export default async (input, reach) => { const r = await reach.http.fetch(${JSON.stringify(url)}, { headers: { ${JSON.stringify(header)}: "{{secret:API_TOKEN}}" } }); return { status: r.status }; };\n` },
      plan: planOf([{ id: "leak", tool: "leak" }]),
      manifest: { capabilities: { tools: [{ name: "leak" }], permissions: ["network"] }, policies: { allowedHosts: ["127.0.0.1", "localhost"] } },
    });
    const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json")));
    doc.secrets = { API_TOKEN: { hosts: ["127.0.0.1"] } };
    files.set("reach.json", new TextEncoder().encode(JSON.stringify(doc)));
    return files;
  };

  it.each([
    ["to another host", "/echo", "localhost", "authorization"],
    ["through a redirect to another host", "/away", "127.0.0.1", "x-api-key"],
  ])("a tool sending the placeholder %s is refused (POLICY_VIOLATION, recorded, not sent); replay refuses it the same", async (_what, path, host, header) => {
    const before = server.seen.length;
    const { run: r, events } = await run(leakyPack(`http://${host}:${server.port}${path}`, header), { secrets: { API_TOKEN: T1 } });
    expect(r.status).toBe("FAILED");
    expect(r.error?.code).toBe("POLICY_VIOLATION");
    expect(r.error?.details["secret"]).toBe("API_TOKEN");
    expect(events).toContain("policy.violation");
    // nothing reached localhost: not the value, not the request
    for (const s of server.seen.slice(before)) expect(s.host.startsWith("localhost"), `a request reached ${s.host}`).toBe(false);
    expectNoLeak(everything(r, events), T1);
    const replay = await replayCapsule(readRunCapsule(r.capsule.bytes), env);
    expect(replay.matches).toBe(true);
  }, 60_000);
});

describe("a fork of a run whose pack declares secrets", () => {
  it("takes the values for its live steps (library secrets, CLI --secret); none reaches a record; it replays without them", async () => {
    const { run: parent } = await run(apiPack(), { input: { url: `http://127.0.0.1:${server.port}/bounce` }, secrets: { API_TOKEN: T1 } });
    expect(parent.status).toBe("COMPLETED");
    const capsule = readRunCapsule(parent.capsule.bytes);
    // without a value the live step cannot run: a clear error naming the option
    await expect(forkCapsule(capsule, env, "call", { seed: "7" }, { fetch: net })).rejects.toMatchObject({ code: "PROTO_INVALID_ARGUMENT", message: expect.stringContaining("--secret API_TOKEN") });
    const before = server.seen.length;
    const child = await forkCapsule(capsule, env, "call", { seed: "7" }, { fetch: net, secrets: { API_TOKEN: T2 } });
    expect(child.status, JSON.stringify(child.error?.toDetails())).toBe("COMPLETED");
    expect(server.seen.slice(before).map((s) => s.headers.authorization)).toEqual([`Bearer ${T2}`, `Bearer ${T2}`]);
    const where: [string, Uint8Array | string][] = [["capsule.tar.gz", child.capsule.bytes], ["result", JSON.stringify(child.result)]];
    for (const [name, bytes] of readArchive(child.capsule.bytes)) where.push([`capsule:${name}`, bytes]);
    for (const [name, bytes] of child.files) where.push([`files:${name}`, bytes]);
    expectNoLeak(where, T1, T2);
    const forked = readRunCapsule(child.capsule.bytes);
    expect(verifyRunCapsule(forked).valid).toBe(true);
    expect((await replayCapsule(forked, env)).matches).toBe(true);
    // the CLI's fork reads the value as run does (--secret NAME=env:VAR), never from the command line
    const dir = mkdtempSync(join(tmpdir(), "reach-fork-secret-"));
    try {
      writeFileSync(join(dir, "parent.capsule.tar.gz"), parent.capsule.bytes);
      process.env["REACH_TEST_FORK_TOKEN"] = T2;
      let stdout = "";
      let stderr = "";
      const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t) };
      const code = await main(["fork", join(dir, "parent.capsule.tar.gz"), "--at", "call", "--seed", "7", "--secret", "API_TOKEN=env:REACH_TEST_FORK_TOKEN", "--out", join(dir, "out"), "--json"], io);
      expect(code, stderr).toBe(0);
      expect((JSON.parse(stdout) as { runHash: string }).runHash).toBe(child.runHash);
      expect(stdout + stderr).not.toContain(T2);
    } finally {
      delete process.env["REACH_TEST_FORK_TOKEN"];
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
