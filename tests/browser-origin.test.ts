// Web pages against the HTTP faces in a real browser (headless Chromium, Debian's `chromium`, driven by playwright-core
// as in tests/report-browser.test.ts): a page on another origin — another port of 127.0.0.1 (same site) and another
// site (attacker.test, resolved to 127.0.0.1) — submits a run with a multipart form POST and with fetch no-cors
// (FormData, text/plain), cancels a run, and starts an MCP session and a federation message, against `serve`,
// `mcp --http` and `node serve`: nothing reaches a face and nothing is created. A DNS-rebound page (rebind.test,
// resolved to 127.0.0.1 on the service's port, so that the service is its own origin) cannot read the run list. The
// control: the same page script on an origin the service allows (--allowed-origin) does create a run, so the browser
// did send what the faces refuse. Chromium's own Local Network Access checks are turned off: the faces must not rely
// on a browser protecting them (other browsers and older ones do not).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spinPackArchive } from "./support/service.ts";
import { mcpFace, nodeFace, serviceFace } from "./_test-faces.ts";
import type { Face } from "./_test-faces.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const present = existsSync(CHROMIUM);
if (!present && process.env["CI"] === "true") throw new Error(`${CHROMIUM} is missing: CI must install Debian's chromium (.ci/run)`);
if (!present) console.warn(`browser-origin.test.ts: SKIPPED — ${CHROMIUM} is missing; install it with \`apt-get install -y chromium\` to run the browser checks`);

const scratch = mkdtempSync(join(tmpdir(), "reach-origin-"));
const PACK_B64 = Buffer.from(spinPackArchive(1, 10, "from-a-page")).toString("base64");

/** What the attacking page does to one face: every simple request a page can send without a preflight. */
async function attack(page: Page, target: { kind: "serve" | "mcp" | "node"; url: string; runId?: string }): Promise<string[]> {
  return await page.evaluate(async ({ kind, url, runId, pack }) => {
    const log: string[] = [];
    const bytes = Uint8Array.from(atob(pack), (c) => c.charCodeAt(0));
    const send = async (what: string, init: RequestInit, to = url): Promise<void> => {
      try {
        const r = await fetch(to, { mode: "no-cors", credentials: "include", ...init });
        log.push(`${what}: opaque ${r.type}`);
      } catch (err) {
        log.push(`${what}: ${String(err)}`);
      }
    };
    const formPost = async (to: string, fields: Record<string, string | Blob>): Promise<void> => {
      // a real <form> submitted into a frame: the classic cross-site request forgery
      const frame = document.createElement("iframe");
      frame.name = `f${Math.random().toString(36).slice(2)}`;
      document.body.append(frame);
      const form = document.createElement("form");
      form.method = "POST";
      form.enctype = "multipart/form-data";
      form.action = to;
      form.target = frame.name;
      for (const [name, value] of Object.entries(fields)) {
        const input = document.createElement("input");
        input.name = name;
        if (typeof value === "string") input.value = value;
        else {
          input.type = "file";
          const dt = new DataTransfer();
          dt.items.add(new File([value], "pack.tar.gz"));
          input.files = dt.files;
        }
        form.append(input);
      }
      document.body.append(form);
      const loaded = new Promise((r) => frame.addEventListener("load", r, { once: true }));
      form.submit();
      await Promise.race([loaded, new Promise((r) => setTimeout(r, 3000))]);
      log.push("form submitted");
    };
    if (kind === "serve") {
      await formPost(`${url}/runs`, { pack: new Blob([bytes]), request: "{}" });
      const fd = new FormData();
      fd.set("pack", new Blob([bytes]), "p.tar.gz");
      await send("fetch multipart /runs", { method: "POST", body: fd }, `${url}/runs`);
      await send("fetch multipart /agent/run", { method: "POST", body: fd }, `${url}/agent/run`);
      await send("fetch text/plain cancel", { method: "POST", body: "x" }, `${url}/runs/${runId}/cancel`);
      await send("fetch urlencoded cancel", { method: "POST", body: new URLSearchParams({ a: "1" }) }, `${url}/runs/${runId}/cancel`);
    } else if (kind === "mcp") {
      const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } } });
      await send("fetch text/plain initialize", { method: "POST", body: init, headers: { "content-type": "text/plain" } });
      await formPost(url, { message: init });
    } else {
      await send("fetch text/plain message", { method: "POST", body: JSON.stringify({ type: "revocation.push" }) });
      await formPost(url, { message: "{}" });
    }
    try {
      const r = await fetch(kind === "serve" ? `${url}/runs` : url, { mode: "cors" });
      log.push(`read: ${r.status} ${(await r.text()).slice(0, 200)}`);
    } catch {
      log.push("read: blocked");
    }
    return log;
  }, { ...target, pack: PACK_B64 });
}

/** A server for the attacker's (and the control's) page: an empty document on its own port. */
function pageServer(): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>page</title><body></body>"));
    s.listen(0, "127.0.0.1", () => resolve(s));
  });
}

describe.skipIf(!present)("web pages against the HTTP faces in headless Chromium", () => {
  let browser: Browser;
  let pages: Server;
  let pagePort = 0;
  let serve: Awaited<ReturnType<typeof serviceFace>>;
  let mcp: Face;
  let node: Face;
  beforeAll(async () => {
    pages = await pageServer();
    pagePort = (pages.address() as AddressInfo).port;
    // the control origin is allowed explicitly; the attacker's are not
    [serve, mcp, node] = await Promise.all([serviceFace({ allowedOrigins: [`http://control.test:${pagePort}`] }), mcpFace(), nodeFace(join(scratch, "node"))]);
    const rules = "MAP attacker.test 127.0.0.1, MAP control.test 127.0.0.1, MAP rebind.test 127.0.0.1";
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, `--host-resolver-rules=${rules}`, "--disable-features=LocalNetworkAccessChecks,PrivateNetworkAccessSendPreflights,BlockInsecurePrivateNetworkRequests"], headless: true });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([serve?.close(), mcp?.close(), node?.close()]);
    await new Promise((r) => pages?.close(r));
    rmSync(scratch, { recursive: true, force: true });
  });

  async function pageAt(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  for (const origin of ["http://127.0.0.1:PORT (same site, another port)", "http://attacker.test:PORT (another site)"]) {
    it(`a page at ${origin} creates nothing on any face`, async () => {
      const runId = await serve.submitPending();
      const before = { runs: await serve.state(), mcp: await mcp.state(), node: await node.state() };
      const reached = [serve.reached(), mcp.reached(), node.reached()];
      const page = await pageAt(origin.split(" ")[0]!.replace("PORT", String(pagePort)));
      const log = [
        ...(await attack(page, { kind: "serve", url: serve.url, runId })),
        ...(await attack(page, { kind: "mcp", url: mcp.url })),
        ...(await attack(page, { kind: "node", url: node.url })),
      ];
      await page.close();
      // nothing reached a face past the guard
      expect([serve.reached(), mcp.reached(), node.reached()], log.join("\n")).toEqual(reached);
      expect(log.filter((l) => l.startsWith("read: 200"))).toEqual([]);
      expect(await serve.state()).toBe(before.runs); // no run submitted
      expect(await serve.status(runId)).toBe("PENDING"); // nor cancelled
      expect(await mcp.state()).toBe(before.mcp); // no MCP session
      expect(await node.state()).toBe(before.node);
    }, 120_000);
  }

  it("a DNS-rebound page (its name now resolving to the service) cannot read the runs", async () => {
    await serve.submitPending();
    const origin = `http://rebind.test:${serve.port}`;
    const page = await browser.newPage();
    // the attacker's server gave this document; then the name was rebound to 127.0.0.1 (the route serves it once)
    await page.route(`${origin}/`, (route) => route.fulfill({ contentType: "text/html", body: "<!doctype html><title>rebound</title><body></body>" }));
    await page.goto(`${origin}/`);
    const read = await page.evaluate(async () => {
      const r = await fetch("/runs");
      return { status: r.status, body: (await r.text()).slice(0, 300) };
    });
    await page.close();
    expect(read.status).toBe(403);
    expect(read.body).not.toMatch(/runId/);
  }, 60_000);

  it("control: the same page script on an origin the service allows does create runs and cancel (the browser sent it)", async () => {
    const runId = await serve.submitPending();
    const before = await serve.state();
    const page = await pageAt(`http://control.test:${pagePort}`);
    await attack(page, { kind: "serve", url: serve.url, runId });
    await page.close();
    expect(await serve.state()).toBeGreaterThan(before); // runs from the page
    expect(await serve.status(runId)).toBe("ABORTED"); // and its cancel
  }, 60_000);
});
