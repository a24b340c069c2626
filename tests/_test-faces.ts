// The three HTTP faces started in this process the way their commands start them, for the Host/Origin tests
// (tests/http-faces.test.ts, tests/browser-origin.test.ts): the run service (`serve`: PGlite, no worker, so a run
// stays PENDING), MCP over HTTP (`mcp --http`: McpHttpHandler behind serveHttp) and a federation node
// (`node serve --insecure-loopback`). Each says how many requests reached the face itself (past the guards).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { main } from "../src/cli/cli.ts";
import { startNode } from "../src/cli/node-serve.ts";
import type { EngineRun } from "../src/engine/engine.ts";
import { McpHttpHandler, MCP_PATH } from "../src/mcp/http.ts";
import { openInlineFirstSession } from "../src/host/engine-inline-session.ts";
import { openIsolatedSession } from "../src/host/engine-thread.ts";
import { serveHttp } from "../src/platform/http-server.ts";
import { readPackFiles } from "../src/host/pack-files.ts";
import { startTestService } from "./support/service.ts";

export const root = new URL("../", import.meta.url).pathname;

/** A face: its base URL, the URL of a state-changing request, and what it holds. */
export type Face = {
  name: string;
  url: string;
  port: number;
  /** Requests that reached the face past the guards. */
  reached(): number;
  /** What the face holds that a request could create: runs, sessions, revocations. */
  state(): Promise<number>;
  close(): Promise<void>;
};

/** Options for every face. */
export type FaceOptions = { allowedOrigins?: string[]; allowedHosts?: string[] };

/** The run service; `state` is the number of runs. */
export async function serviceFace(o: FaceOptions = {}): Promise<Face & { submitPending(): Promise<string>; status(id: string): Promise<string> }> {
  let reached = 0;
  const t = await startTestService({
    workers: 0,
    serve: (handler) => serveHttp((request, client) => (reached++, handler(request, client)), { hostname: "127.0.0.1", port: 0, ...o }),
  });
  const port = Number(new URL(t.url).port);
  const runs = async (): Promise<{ runId: string; status: string }[]> => ((await (await fetch(`${t.url}/runs?limit=200`)).json()) as { runs: { runId: string; status: string }[] }).runs;
  return {
    name: "serve", url: t.url, port, reached: () => reached,
    state: async () => (await runs()).length,
    submitPending: async () => {
      const { spinPackArchive } = await import("./support/service.ts");
      const f = new FormData();
      f.set("pack", new Blob([spinPackArchive(1, 10, "pending").slice().buffer as ArrayBuffer]), "p.tar.gz");
      return ((await (await fetch(`${t.url}/runs`, { method: "POST", body: f })).json()) as { runId: string }).runId;
    },
    status: async (id) => ((await (await fetch(`${t.url}/runs/${id}`)).json()) as { status: string }).status,
    close: () => t.close(),
  };
}

/** MCP over HTTP on packs/hello; `state` is the number of sessions opened (and runs ended). */
export async function mcpFace(o: FaceOptions = {}): Promise<Face> {
  const files = await readPackFiles(join(root, "packs/hello"));
  const runs: EngineRun[] = [];
  let opened = 0;
  let reached = 0;
  const handler = new McpHttpHandler({
    engine: { openSession: (opts) => openInlineFirstSession({ pack: { files } }, opts, 60_000, (r, oo) => openIsolatedSession(r, oo)) },
    sink: async (run) => (runs.push(run), `mem/${run.capsule.name}`),
    info: { name: "reach-wasm", version: "test" },
    token: null,
    onSession: (e) => void (e.kind === "open" ? opened++ : undefined),
  });
  const server = await serveHttp((request, client) => (reached++, handler.fetch(request, client)), { hostname: "127.0.0.1", port: 0, ...o });
  return {
    name: "mcp", url: server.url + MCP_PATH, port: server.port, reached: () => reached,
    state: async () => opened + runs.length,
    close: async () => void (await handler.close(true), await server.close()),
  };
}

/** A federation node (plain HTTP on loopback); `state` is the number of revocations it holds; `reached` counts its log. */
export async function nodeFace(dir: string, o: FaceOptions = {}): Promise<Face> {
  mkdirSync(dir, { recursive: true });
  const { createServer } = await import("node:net");
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const quiet = { stdout: () => {}, stderr: () => {} };
  const code = await main(["node", "init", "--dir", dir, "--endpoint", `http://127.0.0.1:${port}`], quiet);
  if (code !== 0) throw new Error("node init failed");
  const lines: string[] = [];
  const node = await startNode({ dir, insecureLoopback: true, log: (l) => void lines.push(l), ...o });
  return {
    name: "node", url: `${node.url}/federation/v1/messages`, port, reached: () => lines.filter((l) => l.startsWith("refused") || l.startsWith("run request")).length,
    state: async () => (await node.state.revocations()).length,
    close: () => node.close(),
  };
}

export { MCP_PATH };
