// Federation between three nodes on loopback over TLS (seed 003 §6; issue "Deliver — federation" point 7): A and B are
// Node nodes served in this process, C is a Deno node (`deno run -A src/cli/main.ts node serve`). The certificates
// are made here with openssl. A→B→C: C runs a pack for A under a re-delegated subset, with the run hash of a local
// run; a widened scope, an expired link, a forged signature, an unregistered node, a replayed message and a revoked
// link are each refused with their code and write nothing; a revocation whose push is skipped is honoured by C
// through its pull within 60 s; B's revocation of A's grant does not stop A's from landing at C; a plan calling
// exec_python runs at C only when the scope names tool:exec_python. Verdicts do not depend on machine speed: the only time bound is the 60 s of the seed.
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import { nodeState, peerFetch } from "../src/cli/federation-host.ts";
import { startNode } from "../src/cli/node-serve.ts";
import type { RunningNode } from "../src/cli/node-serve.ts";
import { postEnvelope } from "../src/federation/client.ts";
import { signDelegation } from "../src/federation/delegation.ts";
import { signMessage } from "../src/federation/message.ts";
import { signRevocation } from "../src/federation/revocation.ts";
import { pushRevocations } from "../src/federation/sync.ts";
import type { Delegation } from "../src/protocol/delegation.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-fed-"));
const at = (...p: string[]): string => join(scratch, ...p);
const iso = (ms: number): string => new Date(ms).toISOString();

type Out = { code: number; json: Record<string, unknown> | null; stderr: string };
async function cli(...args: string[]): Promise<Out> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, json: stdout.trim() === "" ? null : (JSON.parse(stdout) as Record<string, unknown>), stderr };
}
const errorCode = (o: Out): unknown => (o.json?.["error"] as { code?: unknown } | undefined)?.code;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

function certificates(): void {
  const ssl = (...args: string[]): void => void execFileSync("openssl", args, { cwd: scratch, stdio: "ignore" });
  ssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=reach-wasm test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  ssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "key.pem", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(at("leaf.ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n");
  ssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "cert.pem", "-days", "2", "-extfile", "leaf.ext");
}

let denoC: ChildProcess | undefined;
let denoLog = "";
function serveOnDeno(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, "node_modules/.bin/deno"), ["run", "-A", join(root, "src/cli/main.ts"), "node", "serve", "--dir", dir, "--tls-cert", at("cert.pem"), "--tls-key", at("key.pem"), "--ca", at("ca.pem"), "--pull-interval", "0.5", "--json"], { cwd: root });
    denoC = child;
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve();
    });
    child.stderr.on("data", (d) => (denoLog += d));
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`the Deno node exited with ${code}: ${denoLog}`)));
  });
}

const ids: Record<"A" | "B" | "C" | "D", string> = { A: "", B: "", C: "", D: "" };
const running: RunningNode[] = [];
const dirs = { A: at("node-a"), B: at("node-b"), C: at("node-c"), D: at("node-d") };
const tls = { cert: "", key: "" };
const ca = at("ca.pem");

/** A delegated run from `dir` at C; returns the CLI outcome and whether anything was written. */
async function runAtC(delegation: string, out: string, dir = dirs.A, pack = join(root, "packs/hello")): Promise<Out & { wrote: boolean }> {
  const r = await cli("run", pack, "--on", ids.C, "--delegation", delegation, "--dir", dir, "--ca", ca, "--seed", "7", "--input", at("input.json"), "--out", out, "--json");
  return { ...r, wrote: existsSync(out) };
}

async function keyOf(dir: string): Promise<Uint8Array> {
  return (await nodeState(dir).self()).keys.privateKey;
}

beforeAll(async () => {
  certificates();
  tls.cert = readFileSync(at("cert.pem"), "utf8");
  tls.key = readFileSync(at("key.pem"), "utf8");
  writeFileSync(at("input.json"), JSON.stringify({ text: "federated hello world" }));
  for (const name of ["A", "B", "C", "D"] as const) {
    const r = await cli("node", "init", "--dir", dirs[name], "--endpoint", `https://127.0.0.1:${await freePort()}`, "--json");
    expect(r.code, r.stderr).toBe(0);
    ids[name] = String(r.json!["nodeId"]);
  }
  for (const [x, y] of [["A", "B"], ["A", "C"], ["B", "A"], ["B", "C"], ["C", "A"], ["C", "B"], ["D", "C"]] as const) {
    expect((await cli("node", "trust", "--dir", dirs[x], join(dirs[y], "node.json"))).code).toBe(0);
  }
  for (const name of ["A", "B"] as const) running.push(await startNode({ dir: dirs[name], tls, ca, pullIntervalMs: 500 }));
  await serveOnDeno(dirs.C);
}, 120_000);

afterAll(async () => {
  if (denoC !== undefined && denoC.exitCode === null) {
    denoC.removeAllListeners("exit");
    const gone = new Promise((r) => denoC!.once("exit", r));
    denoC.kill("SIGTERM");
    await gone;
  }
  for (const n of running) await n.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("three nodes over TLS, C on Deno (seed 003 §6)", () => {
  it("A→B→C: C runs packs/hello for A under a re-delegated subset, with the run hash of a local run", async () => {
    let r = await cli("delegate", "--dir", dirs.A, "--to", ids.B, "--scope", "tool:wordcount,tool:stats", "--expires", "1h", "--out", at("a-to-b.json"));
    expect(r.code, r.stderr).toBe(0);
    r = await cli("delegate", "--dir", dirs.B, "--to", ids.C, "--scope", "tool:wordcount", "--expires", "30m", "--parent", at("a-to-b.json"), "--out", at("b-to-c.json"));
    expect(r.code, r.stderr).toBe(0);
    const remote = await runAtC(at("b-to-c.json"), at("out-remote"));
    expect(remote.code, remote.stderr + denoLog).toBe(0);
    const local = await cli("run", join(root, "packs/hello"), "--seed", "7", "--input", at("input.json"), "--out", at("out-local"), "--json");
    expect(local.code).toBe(0);
    expect(remote.json!["runHash"]).toBe(local.json!["runHash"]);
    expect(remote.json!["node"]).toBe(ids.C);
    const capsule = String(remote.json!["capsule"]);
    expect(existsSync(capsule)).toBe(true);
    expect(existsSync(join(String(remote.json!["out"]), "result.json"))).toBe(true);
    const verified = await cli("verify", capsule, "--json");
    expect(verified.json!["valid"]).toBe(true);
  }, 120_000);

  it("a widened scope is refused when delegating, and at C's hop (FED_DELEGATION_INVALID)", async () => {
    const r = await cli("delegate", "--dir", dirs.B, "--to", ids.C, "--scope", "tool:wordcount,tool:slugify", "--expires", "30m", "--parent", at("a-to-b.json"), "--out", at("widened-cli.json"), "--json");
    expect([r.code, errorCode(r), existsSync(at("widened-cli.json"))]).toEqual([2, "FED_DELEGATION_INVALID", false]);
    const ab = JSON.parse(readFileSync(at("a-to-b.json"), "utf8")) as Delegation;
    const now = Date.now();
    const widened = signDelegation({ delegator: ids.B, delegate: ids.C, scope: ["tool:wordcount", "tool:slugify"], issuedAt: iso(now), expiresAt: iso(now + 600_000), parent: ab.delegationId }, await keyOf(dirs.B));
    writeFileSync(at("widened.json"), JSON.stringify(widened));
    const run = await runAtC(at("widened.json"), at("out-widened"));
    expect([run.code, errorCode(run), run.wrote]).toEqual([2, "FED_DELEGATION_INVALID", false]);
  }, 60_000);

  it("an expired link is refused (FED_DELEGATION_EXPIRED)", async () => {
    const now = Date.now();
    const expired = signDelegation({ delegator: ids.A, delegate: ids.C, scope: ["tool:wordcount"], issuedAt: iso(now - 7_200_000), expiresAt: iso(now - 3_600_000) }, await keyOf(dirs.A));
    writeFileSync(at("expired.json"), JSON.stringify(expired));
    const run = await runAtC(at("expired.json"), at("out-expired"));
    expect([run.code, errorCode(run), run.wrote]).toEqual([2, "FED_DELEGATION_EXPIRED", false]);
  }, 60_000);

  it("a forged signature is refused (FED_SIGNATURE_INVALID)", async () => {
    const bc = JSON.parse(readFileSync(at("b-to-c.json"), "utf8")) as Delegation;
    writeFileSync(at("forged.json"), JSON.stringify({ ...bc, scope: ["tool:wordcount", "tool:stats"] }));
    const run = await runAtC(at("forged.json"), at("out-forged"));
    expect([run.code, errorCode(run), run.wrote]).toEqual([2, "FED_SIGNATURE_INVALID", false]);
  }, 60_000);

  it("an unregistered node is refused (FED_NODE_UNAUTHORIZED)", async () => {
    const now = Date.now();
    writeFileSync(at("d-to-c.json"), JSON.stringify(signDelegation({ delegator: ids.D, delegate: ids.C, scope: ["tool:wordcount"], issuedAt: iso(now), expiresAt: iso(now + 600_000) }, await keyOf(dirs.D))));
    const run = await runAtC(at("d-to-c.json"), at("out-d"), dirs.D);
    expect([run.code, errorCode(run), run.wrote]).toEqual([2, "FED_NODE_UNAUTHORIZED", false]);
  }, 60_000);

  it("a replayed message is refused (FED_MESSAGE_REPLAYED)", async () => {
    const c = JSON.parse(readFileSync(join(dirs.C, "node.json"), "utf8")) as { endpoint: string };
    const msg = signMessage({ type: "revocation.pull", from: ids.A, to: ids.C, body: {} }, await keyOf(dirs.A), Date.now());
    const fetch = await peerFetch(ca);
    const first = await postEnvelope(fetch, c.endpoint, msg);
    const again = await postEnvelope(fetch, c.endpoint, msg);
    expect(first.status).toBe(200);
    expect([again.status, (again.value as { body: { error: { code: string } } }).body.error.code]).toEqual([409, "FED_MESSAGE_REPLAYED"]);
  }, 60_000);

  it("a revoked link is refused (FED_DELEGATION_REVOKED), for every chain through it", async () => {
    const r = await cli("revoke", "--dir", dirs.A, at("a-to-b.json"), "--ca", ca, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect((r.json!["pushed"] as { ok: boolean }[]).every((p) => p.ok)).toBe(true);
    const run = await runAtC(at("b-to-c.json"), at("out-revoked"));
    expect([run.code, errorCode(run), run.wrote]).toEqual([2, "FED_DELEGATION_REVOKED", false]);
  }, 60_000);

  it("on C (Deno), B's revocation of A's delegation neither revokes it nor blocks A's revocation, which lands", async () => {
    let r = await cli("delegate", "--dir", dirs.A, "--to", ids.C, "--scope", "tool:wordcount", "--expires", "1h", "--out", at("a-to-c-forged.json"));
    expect(r.code).toBe(0);
    const d = JSON.parse(readFileSync(at("a-to-c-forged.json"), "utf8")) as Delegation;
    const b = await nodeState(dirs.B).self();
    const c = JSON.parse(readFileSync(join(dirs.C, "node.json"), "utf8")) as { nodeId: string; publicKey: string; endpoint: string };
    const forged = signRevocation({ ...d, delegator: ids.B }, ids.B, b.keys.privateKey, Date.now());
    const [pushed] = await pushRevocations({ self: b, now: Date.now, fetch: await peerFetch(ca) }, [c], [forged]);
    expect(pushed).toMatchObject({ ok: true, count: 1 });
    expect((await runAtC(at("a-to-c-forged.json"), at("out-forged-rev"))).code).toBe(0);
    r = await cli("revoke", "--dir", dirs.A, at("a-to-c-forged.json"), "--ca", ca, "--json");
    expect((r.json!["pushed"] as { nodeId: string; count: number }[]).find((p) => p.nodeId === ids.C)?.count).toBe(1);
    const run = await runAtC(at("a-to-c-forged.json"), at("out-forged-rev-2"));
    expect([run.code, errorCode(run), run.wrote]).toEqual([2, "FED_DELEGATION_REVOKED", false]);
  }, 60_000);

  it("on C (Deno), a tool:wordcount delegation cannot run exec_python; tool:wordcount,tool:exec_python can", async () => {
    const pack = at("hello-python");
    cpSync(join(root, "packs/hello"), pack, { recursive: true });
    const plan = JSON.parse(readFileSync(join(pack, "plan.json"), "utf8")) as { scope: { allowed: string[] }; steps: object[] };
    plan.steps.push({ id: "py", tool: "exec_python", arguments: { code: "result = 6 * 7" }, return_spec: { type: "object" } });
    plan.scope.allowed.push("exec_python");
    writeFileSync(join(pack, "plan.json"), JSON.stringify(plan));
    for (const [scope, file] of [["tool:wordcount", "wc.json"], ["tool:wordcount,tool:exec_python", "wc-py.json"]] as const) {
      expect((await cli("delegate", "--dir", dirs.A, "--to", ids.C, "--scope", scope, "--expires", "1h", "--out", at(file))).code).toBe(0);
    }
    const refused = await runAtC(at("wc.json"), at("out-wc"), dirs.A, pack);
    expect([refused.code, errorCode(refused), refused.wrote]).toEqual([2, "POLICY_VIOLATION", false]);
    expect((refused.json!["error"] as { details: { attemptedCapability: string } }).details.attemptedCapability).toBe("tool:exec_python");
    const granted = await runAtC(at("wc-py.json"), at("out-wc-py"), dirs.A, pack);
    expect(granted.code, granted.stderr + denoLog).toBe(0);
    const replay = await cli("replay", String(granted.json!["capsule"]), "--json");
    expect([replay.code, replay.json!["matches"]]).toEqual([0, true]);
  }, 120_000);

  it("a revocation whose push is lost is honoured by C within 60 s through its pull", async () => {
    let r = await cli("delegate", "--dir", dirs.A, "--to", ids.C, "--scope", "tool:wordcount", "--expires", "1h", "--out", at("a-to-c.json"));
    expect(r.code).toBe(0);
    expect((await runAtC(at("a-to-c.json"), at("out-before"))).code).toBe(0);
    const t0 = performance.now();
    r = await cli("revoke", "--dir", dirs.A, at("a-to-c.json"), "--no-push");
    expect(r.code).toBe(0);
    const id = (JSON.parse(readFileSync(at("a-to-c.json"), "utf8")) as Delegation).delegationId;
    while (!existsSync(join(dirs.C, "revocations", ids.A, `${id}.json`)) && performance.now() - t0 < 60_000) await new Promise((s) => setTimeout(s, 100));
    const run = await runAtC(at("a-to-c.json"), at("out-after"));
    expect([run.code, errorCode(run), run.wrote]).toEqual([2, "FED_DELEGATION_REVOKED", false]);
    expect(performance.now() - t0).toBeLessThan(60_000);
  }, 90_000);
});
