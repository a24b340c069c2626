// Clients never write where a server tells them: `submit --wait --out DIR` and `runs capsule ID --out DIR` name the
// capsule from the run hash the server sends, checked first; a hostile `X-Reach-Run-Hash` or `Content-Disposition`
// (`../x`, absolute names, NUL, backslashes) stays in DIR or is refused. A proxy in front of a real service rewrites
// the capsule's headers.
import { createServer, request } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import { main } from "./cli.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-download-"));
let t: TestService;
let proxy: Server;
let proxyUrl = "";
/** What the proxy puts in the capsule's headers (raw bytes: Node's server would refuse a NUL or a control character). */
let hostile: { hash?: string; name?: string } = {};

/** The capsule's response, its run hash and file name replaced by the hostile ones. */
function capsuleResponse(socket: Socket, status: number, headers: Record<string, string | string[] | undefined>, body: Buffer): void {
  const drop = ["transfer-encoding", "content-length", "connection", ...(hostile.hash === undefined ? [] : ["x-reach-run-hash"]), ...(hostile.name === undefined ? [] : ["content-disposition"])];
  const lines = Object.entries(headers).filter(([k]) => !drop.includes(k)).map(([k, v]) => `${k}: ${String(v)}`);
  if (hostile.hash !== undefined) lines.push(`x-reach-run-hash: ${hostile.hash}`);
  if (hostile.name !== undefined) lines.push(`content-disposition: attachment; filename="${hostile.name}"`);
  socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${status} OK\r\n${lines.join("\r\n")}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`, "latin1"), body]));
}

beforeAll(async () => {
  t = await startTestService();
  const target = new URL(t.url);
  proxy = createServer((req, res) => {
    const up = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } }, (ur) => {
      if (!/\/capsule$/.test(req.url ?? "")) {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
        return;
      }
      const parts: Buffer[] = [];
      ur.on("data", (c: Buffer) => parts.push(c));
      ur.on("end", () => capsuleResponse(res.socket!, ur.statusCode ?? 502, ur.headers, Buffer.concat(parts)));
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  process.env["REACH_WASM_CONNECT_WAIT"] = "0";
}, 120_000);
afterAll(async () => {
  delete process.env["REACH_WASM_CONNECT_WAIT"];
  await new Promise((resolve) => proxy?.close(resolve));
  await t?.close();
  rmSync(scratch, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
async function cli(...args: string[]): Promise<{ code: number; json: Json | null; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) });
  const lines = stdout.trim().split("\n").filter((l) => l !== "");
  return { code, json: lines.length === 1 && lines[0]!.startsWith("{") ? (JSON.parse(lines[0]!) as Json) : null, stderr };
}

/** Everything under the scratch folder, so that a file written outside DIR would show. */
const everything = (): string[] => (readdirSync(scratch, { recursive: true }) as string[]).sort();

const HOSTILE = [
  { hash: "../x", name: "../x" },
  { hash: "../../../../tmp/reach-download-escape", name: "/tmp/reach-download-escape" },
  { hash: "..\\x", name: "..\\x" },
  { hash: "a".repeat(63) + "/", name: "x\u0001y" },
  { hash: "ab\u0000cd", name: "a\u0000b" },
];

describe("a capsule downloaded from a service is named by its checked run hash, inside --out", () => {
  let runId = "";
  let runHash = "";

  it("submit --wait --out DIR refuses a hostile run hash header (nothing written, inside DIR or out), and ignores Content-Disposition", async () => {
    const dir = join(scratch, "submit");
    mkdirSync(dir);
    for (const h of HOSTILE) {
      hostile = h;
      const before = everything();
      const r = await cli("submit", join(root, "packs", "hello"), "--server", proxyUrl, "--wait", "--out", dir, "--json");
      expect(r.code, JSON.stringify(h)).toBe(2);
      expect((r.json!["error"] as Json)["code"], r.stderr).toMatch(/PROTO_INVALID_ARGUMENT|EXEC_RESOURCE_UNAVAILABLE/);
      expect(everything(), JSON.stringify(h)).toEqual(before);
    }
    expect(readdirSync(dir)).toEqual([]);
    hostile = { name: "../x" }; // the real run hash, a hostile file name: the file is named by the run hash, in DIR
    const ok = await cli("submit", join(root, "packs", "hello"), "--server", proxyUrl, "--wait", "--out", dir, "--json");
    expect(ok.code, ok.stderr).toBe(0);
    runId = ok.json!["runId"] as string;
    runHash = ok.json!["runHash"] as string;
    expect(readdirSync(dir)).toEqual([`${runHash}.capsule.tar.gz`]);
    for (const command of ["verify", "replay"]) expect((await cli(command, join(dir, `${runHash}.capsule.tar.gz`), "--json")).code, command).toBe(0);
  }, 60_000);

  it("runs capsule ID --out DIR does the same", async () => {
    const dir = join(scratch, "runs");
    mkdirSync(dir);
    for (const h of HOSTILE) {
      hostile = h;
      const before = everything();
      const r = await cli("runs", "capsule", runId, "--server", proxyUrl, "--out", dir, "--json");
      expect(r.code, JSON.stringify(h)).toBe(2);
      expect(everything(), JSON.stringify(h)).toEqual(before);
    }
    hostile = { name: "../../x" };
    const ok = await cli("runs", "capsule", runId, "--server", proxyUrl, "--out", dir, "--json");
    expect([ok.code, ok.json!["capsule"]], ok.stderr).toEqual([0, join(dir, `${runHash}.capsule.tar.gz`)]);
    expect(readdirSync(dir)).toEqual([`${runHash}.capsule.tar.gz`]);
    for (const command of ["verify", "replay"]) expect((await cli(command, join(dir, `${runHash}.capsule.tar.gz`), "--json")).code, command).toBe(0);
  }, 60_000);
});
