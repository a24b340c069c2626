// Every HTTP face — the run service (serve), MCP over HTTP (mcp --http) and the federation node (node serve) — is
// served behind the same guard (src/platform/http-guard.ts): a request naming another Host (a DNS-rebound page), a
// page on another origin, Origin: null, or a browser's cross-site fetch is refused with 403 before the face sees it,
// whatever the face's token setting; its own name passes, as do --allowed-host / --allowed-origin. The service also
// on Deno (`deno run -A src/cli/main.ts serve`, Deno.serve), with the CLI's --allowed-host.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { servedUrl, spinPackArchive } from "./support/service.ts";
import { mcpFace, nodeFace, root, serviceFace } from "./_test-faces.ts";
import type { Face } from "./_test-faces.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-faces-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A GET from `from` (127.0.0.2 is another client than 127.0.0.1), answered once its status is known. */
function stream(url: string, from: string): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress: from, agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on("error", reject);
    req.end();
  });
}

/** The hostile requests: each must be refused with 403 and never reach the face. */
function hostile(port: number): { what: string; method: string; headers: Record<string, string>; body?: string }[] {
  const own = `127.0.0.1:${port}`;
  const form = "--x\r\ncontent-disposition: form-data; name=\"pack\"; filename=\"p\"\r\n\r\nx\r\n--x--\r\n";
  return [
    { what: "a DNS-rebound page (foreign Host)", method: "GET", headers: { host: `rebound.test:${port}` } },
    { what: "a rebound page's POST", method: "POST", headers: { host: `rebound.test:${port}`, origin: `http://rebound.test:${port}`, "content-type": "text/plain" }, body: "{}" },
    { what: "a form POST from another origin", method: "POST", headers: { host: own, origin: "http://evil.test", "content-type": "multipart/form-data; boundary=x", "sec-fetch-site": "cross-site" }, body: form },
    { what: "a no-cors text/plain POST from another port", method: "POST", headers: { host: own, origin: "http://127.0.0.1:1", "content-type": "text/plain", "sec-fetch-site": "same-site" }, body: "{}" },
    { what: "an urlencoded POST with Origin: null", method: "POST", headers: { host: own, origin: "null", "content-type": "application/x-www-form-urlencoded" }, body: "a=1" },
    { what: "a cross-site GET without Origin (<img>, navigation)", method: "GET", headers: { host: own, "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" } },
  ];
}

async function checkFace(face: Face): Promise<void> {
  const state = await face.state();
  const reached = face.reached();
  for (const h of hostile(face.port)) {
    const r = await raw(face.url, h.method, h.headers, h.body);
    expect(r.status, `${face.name}: ${h.what}`).toBe(403);
    expect(r.body, `${face.name}: ${h.what}`).toMatch(/POLICY_PERMISSION_DENIED/);
  }
  expect(face.reached(), face.name).toBe(reached);
  expect(await face.state(), face.name).toBe(state);
  // its own name passes (the face answers, whatever it answers: here a refusal of the empty message)
  const own = await raw(face.url, "POST", { host: `localhost:${face.port}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, "{}");
  expect(own.status, `${face.name}: own Host`).not.toBe(403);
  expect(face.reached(), face.name).toBeGreaterThan(reached);
}

describe("every HTTP face refuses foreign Host and Origin", () => {
  it("the run service (serve); --allowed-host and --allowed-origin let a proxy's name and a named page through, nothing else", async () => {
    const face = await serviceFace({ allowedHosts: ["runs.example.test"], allowedOrigins: ["http://ui.example.test:3000"] });
    try {
      await checkFace(face);
      expect((await raw(`${face.url}/runs`, "GET", { host: "runs.example.test" })).status).toBe(200);
      expect((await raw(`${face.url}/runs`, "GET", { host: `127.0.0.1:${face.port}`, origin: "http://ui.example.test:3000", "sec-fetch-site": "cross-site" })).status).toBe(200);
      expect((await raw(`${face.url}/runs`, "GET", { host: "other.example.test" })).status).toBe(403);
      expect((await raw(`${face.url}/runs`, "GET", { host: `127.0.0.1:${face.port}`, origin: "http://ui.example.test:3001" })).status).toBe(403);
    } finally {
      await face.close();
    }
  }, 120_000);

  it("MCP over HTTP (mcp --http)", async () => {
    const face = await mcpFace();
    try {
      await checkFace(face);
    } finally {
      await face.close();
    }
  }, 60_000);

  it("the federation node (node serve)", async () => {
    const face = await nodeFace(join(scratch, "node"));
    try {
      await checkFace(face);
    } finally {
      await face.close();
    }
  }, 60_000);

  it("on Deno too: `serve` refuses a rebound Host and a foreign Origin, honours --allowed-host, and counts streams per client address", async () => {
    const args = ["serve", "--listen", "127.0.0.1:0", "--data", join(scratch, "deno-store"), "--workers", "0", "--allowed-host", "runs.example.test", "--max-streams-per-client", "1", "--json"];
    const child = spawn(join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", join(root, "src/cli/main.ts"), ...args], {
      cwd: scratch, env: { ...process.env, HOME: scratch, XDG_CONFIG_HOME: join(scratch, "config"), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    try {
      const url = await servedUrl(child, () => stderr);
      const port = Number(new URL(url).port);
      for (const h of hostile(port)) expect((await raw(`${url}/runs`, h.method, h.headers, h.body)).status, h.what).toBe(403);
      expect((await raw(`${url}/runs`, "GET", { host: `127.0.0.1:${port}` })).status).toBe(200);
      expect((await raw(`${url}/runs`, "GET", { host: "runs.example.test" })).status).toBe(200);
      const list = JSON.parse((await raw(`${url}/runs`, "GET", { host: `localhost:${port}` })).body) as { runs: unknown[] };
      expect(list.runs).toEqual([]); // no hostile POST created a run
      // per client: one event stream each (--max-streams-per-client 1); the run stays PENDING (no worker)
      const form = new FormData();
      form.set("pack", new Blob([spinPackArchive(1, 10, "deno").slice().buffer as ArrayBuffer]), "p.tar.gz");
      const { runId } = (await (await fetch(`${url}/runs`, { method: "POST", body: form })).json()) as { runId: string };
      const streams = [await stream(`${url}/runs/${runId}/events`, "127.0.0.1"), await stream(`${url}/runs/${runId}/events`, "127.0.0.1"), await stream(`${url}/runs/${runId}/events`, "127.0.0.2")];
      expect(streams.map((s) => s.status)).toEqual([200, 429, 200]);
      for (const s of streams) s.close();
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  }, 120_000);
});
