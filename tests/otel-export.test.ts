// OpenTelemetry (docs/opentelemetry.md): `reach-wasm export otel` writes a run's traces as OTLP/JSON — the same bytes
// every time and on every runtime, byte for byte what the official OpenTelemetry JS SDK's serializer writes for the
// same spans, valid under a strict decoder of the protobuf JSON mapping — with GenAI `execute_tool` spans for tool
// calls, MCP `tools/call` spans for a session run's calls, host calls as span events, and ids derived from the run and
// event hashes. `--otlp-endpoint` posts each run's trace through the SDK's OTLP/HTTP exporter to a real HTTP receiver;
// a failed export is a warning, never a failed run.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { canonicalize } from "../src/canonical/jcs.ts";
import { openSession } from "../src/engine/engine.ts";
import type { EngineRun } from "../src/engine/engine.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { SESSION_START } from "../src/engine/session-chain.ts";
import { exportOtlpTraces, readableSpans } from "../src/platform/otlp-exporter.ts";
import { otelTrace } from "../src/report/otel.ts";
import { encodeOtlpJson } from "../src/report/otlp-json.ts";
import { packFromDisk } from "./support/pack.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "./support/platform.ts";
import { decodeOtlpTraces } from "./support/otlp-decode.ts";
import type { DecodedSpan } from "./support/otlp-decode.ts";
import { cli, ROOT } from "./_test-report.ts";
import { servedUrl } from "./support/service.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const scratch = mkdtempSync(join(tmpdir(), "reach-otel-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const capsuleOf = (folder: string): string => {
  const dir = join(ROOT, "conformance/capsules", folder);
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".capsule.tar.gz"))!);
};
const NOTES = capsuleOf("notes");
const SCOPE = { name: "reach-wasm", version: "test" };
const sha = (text: string, bytes: number): string => createHash("sha256").update(text).digest("hex").slice(0, bytes * 2);
const lines = (bytes: Uint8Array | undefined): string[] => new TextDecoder().decode(bytes).split("\n").filter((l) => l !== "");

/** What an OTLP/HTTP receiver got: path, content type, body. */
type Received = { path: string; type: string; body: string };

/** A real OTLP/HTTP receiver on a free loopback port, answering `status` to every POST. */
async function receiver(status = 200): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ path: req.url ?? "", type: String(req.headers["content-type"]), body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status, { "content-type": "application/json" }).end(status === 200 ? "{}" : '{"code":3,"message":"refused by the test"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/v1/traces`, got, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const attr = (s: DecodedSpan, key: string): unknown => s.attributes.get(key);

async function checkCapsule(bytes: Uint8Array): Promise<void> {
  const capsule = readRunCapsule(bytes);
  expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, replay.divergence?.message).toBe(true);
}

describe("export otel", () => {
  it("writes the same OTLP/JSON bytes twice, equal to the SDK's JsonTraceSerializer output, valid under a strict decoder", async () => {
    const out = join(scratch, "notes.otlp.json");
    const a = await cli(["export", "otel", NOTES, "--out", out]);
    expect(a.code, a.stderr).toBe(0);
    const first = readFileSync(out);
    expect((await cli(["export", "otel", NOTES, "--out", out])).code).toBe(0);
    expect(readFileSync(out).equals(first)).toBe(true);
    const stdout = await cli(["export", "otel", NOTES]);
    expect(stdout.stdout).toBe(`${first.toString("utf8")}\n`);
    // the official serializer, on the SDK's ReadableSpans of the same trace, writes the same bytes
    const trace = otelTrace(readRunCapsule(readFileSync(NOTES)).entries, { scope: { name: "reach-wasm", version: JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version } });
    const sdk = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(await readableSpans([trace])));
    expect(sdk).toBe(first.toString("utf8"));
    expect(() => decodeOtlpTraces(sdk)).not.toThrow();
  });

  it("--json: without --out the OTLP/JSON document itself; with --out one object {out, spans, traceId}", async () => {
    const plain = await cli(["export", "otel", NOTES]);
    const json = await cli(["export", "otel", NOTES, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).toBe(plain.stdout);
    const out = join(scratch, "notes-json.otlp.json");
    const written = await cli(["export", "otel", NOTES, "--out", out, "--json"]);
    expect(written.code, written.stderr).toBe(0);
    const doc = JSON.parse(written.stdout) as { out: string; spans: number; traceId: string };
    expect(doc).toEqual({ out, spans: decodeOtlpTraces(readFileSync(out, "utf8"))[0]!.spans.length, traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  });

  it("a span for the run, each step and each tool call (GenAI execute_tool), host calls as events, ids from the hashes", () => {
    const capsule = readRunCapsule(readFileSync(NOTES));
    const events = lines(capsule.entries.get("events.jsonl")).map((l) => JSON.parse(l) as { type: string; eventHash: string; payload: Record<string, unknown> });
    const runHash = capsule.index.runHash;
    const [doc] = decodeOtlpTraces(encodeOtlpJson([otelTrace(capsule.entries, { scope: SCOPE })]));
    const spans = doc!.spans;
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([sha(`reach-wasm/otel/trace:${runHash}`, 16)]));
    const [root, ...rest] = spans;
    expect(root).toMatchObject({ spanId: sha(`reach-wasm/otel/run:${runHash}`, 8), parentSpanId: null, name: "invoke_workflow notes", kind: 1 });
    expect(attr(root!, "gen_ai.operation.name")).toBe("invoke_workflow");
    expect(attr(root!, "reach.run.hash")).toBe(runHash);
    const steps = rest.filter((s) => s.name.startsWith("step "));
    const tools = rest.filter((s) => attr(s, "gen_ai.operation.name") === "execute_tool");
    const invoked = events.filter((e) => e.type === "tool.invoked");
    expect(steps).toHaveLength(events.filter((e) => e.type === "run.step.started").length);
    expect(tools).toHaveLength(invoked.length);
    for (const [i, t] of tools.entries()) {
      const e = invoked[i]!;
      expect(t.spanId).toBe(sha(`reach-wasm/otel/span:${runHash}:${e.eventHash}`, 8));
      expect(t.name).toBe(`execute_tool ${String(e.payload["toolName"])}`);
      expect(attr(t, "gen_ai.tool.name")).toBe(e.payload["toolName"]);
      expect(attr(t, "gen_ai.tool.call.id")).toBe(e.payload["invocationId"]);
      expect(steps.find((s) => s.spanId === t.parentSpanId)?.attributes.get("reach.step.id")).toBe(e.payload["stepId"]);
      expect(t.start).toBeLessThanOrEqual(t.end);
    }
    for (const s of steps) expect(s.parentSpanId).toBe(root!.spanId);
    // every host call of the tape is an event of its tool call's span
    const tape = lines(capsule.entries.get("tape.jsonl")).map((l) => JSON.parse(l) as { invocationId: string; op: string; requestHash: string });
    const hostEvents = tools.flatMap((t) => t.events.filter((e) => e.name === "reach.host_call").map((e) => ({ call: attr(t, "gen_ai.tool.call.id"), op: e.attributes.get("reach.host.op"), request: e.attributes.get("reach.host.request_hash") })));
    expect(hostEvents).toEqual(tape.map((r) => ({ call: r.invocationId, op: r.op, request: r.requestHash })));
    expect(hostEvents.length).toBeGreaterThan(0);
  });

  it("a failed run: ERROR status with the error code; its policy violation is an event of the run's span", async () => {
    const r = await cli(["export", "otel", capsuleOf("path_escape_fail")]);
    expect(r.code, r.stderr).toBe(0);
    const [root, ...rest] = decodeOtlpTraces(r.stdout)[0]!.spans;
    expect(root!.status).toEqual({ code: 2, message: "POLICY_VIOLATION" });
    expect(attr(root!, "error.type")).toBe("POLICY_VIOLATION");
    expect(root!.events.map((e) => e.name)).toContain("reach.policy.violation");
    expect(rest.some((s) => s.status.code === 2)).toBe(true);
  });

  it("refuses a capsule whose event chain does not verify, and bad invocations (exit 2, nothing written)", async () => {
    const broken = join(scratch, "broken.capsule.tar.gz");
    const bytes = readFileSync(NOTES);
    const { writeArchive, readArchive } = await import("../src/capsule/archive.ts");
    const entries = readArchive(bytes);
    const ev = new TextDecoder().decode(entries.get("events.jsonl")).replace(/"sequence":1,/, '"sequence":7,');
    entries.set("events.jsonl", new TextEncoder().encode(ev));
    (await import("node:fs")).writeFileSync(broken, writeArchive([...entries].map(([path, b]) => ({ path, bytes: b }))));
    const r = await cli(["export", "otel", broken, "--out", join(scratch, "never.json")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/REPLAY_CAPSULE_(INVALID|CORRUPT|TAMPERED)/);
    expect(readdirSync(scratch)).not.toContain("never.json");
    // an entry that does not match the index (the chain alone would not notice a changed tape line)
    const tape = readArchive(bytes);
    tape.set("tape.jsonl", new TextEncoder().encode(new TextDecoder().decode(tape.get("tape.jsonl")).replace('"op":"', '"op":"x')));
    (await import("node:fs")).writeFileSync(broken, writeArchive([...tape].map(([path, b]) => ({ path, bytes: b }))));
    const t = await cli(["export", "otel", broken]);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain("tape.jsonl");
    expect(t.stdout).toBe("");
    expect((await cli(["export", "otel"])).code).toBe(2);
    expect((await cli(["export", "trace", NOTES])).stderr).toContain("choose one of otel");
    expect((await cli(["run", "packs/hello", "--otlp-endpoint", "ftp://x/v1/traces"])).stderr).toContain("--otlp-endpoint expects an http:// or https:// URL");
  });

  it("on Deno: the same bytes as on Node", async () => {
    const node = await cli(["export", "otel", NOTES]);
    const deno = spawnSync(join(ROOT, "node_modules/.bin/deno"), ["run", "-A", "--quiet", join(ROOT, "src/cli/main.ts"), "export", "otel", NOTES], { encoding: "utf8" });
    expect(deno.status, deno.stderr).toBe(0);
    expect(deno.stdout).toBe(node.stdout);
  }, 60_000);
});

describe("MCP session runs", () => {
  it("each call is an MCP tools/call SERVER span that is also a GenAI execute_tool span; a continued run links to the one before", async () => {
    const first = await openSession(env, { pack: { files: packFromDisk("hello") }, session: SESSION_START });
    expect(await first.call("wordcount", { text: "a b c" })).toMatchObject({ ok: true });
    expect(await first.call("write_temp", { name: "t.txt", content: "x" })).toMatchObject({ ok: true });
    const a: EngineRun = await first.close();
    await checkCapsule(a.capsule.bytes);
    const second = await openSession(env, { pack: { files: packFromDisk("hello") }, session: a.next! });
    expect(await second.call("read_lines", { path: "temp/t.txt" })).toMatchObject({ ok: true });
    const b = await second.close();
    await checkCapsule(b.capsule.bytes);

    const [ta] = decodeOtlpTraces(encodeOtlpJson([otelTrace(readRunCapsule(a.capsule.bytes).entries, { scope: SCOPE })]));
    const calls = ta!.spans.filter((s) => attr(s, "mcp.method.name") === "tools/call");
    expect(calls.map((s) => s.name)).toEqual(["tools/call wordcount", "tools/call write_temp"]);
    for (const s of calls) {
      expect(s.kind).toBe(2); // SERVER
      expect(attr(s, "gen_ai.operation.name")).toBe("execute_tool");
      expect(attr(s, "mcp.session.id")).toBe(a.runHash); // the chain's first run names the session
    }
    const tb = otelTrace(readRunCapsule(b.capsule.bytes).entries, { scope: SCOPE, mcpSessionId: a.runHash });
    const [rootB] = decodeOtlpTraces(encodeOtlpJson([tb]))[0]!.spans;
    expect(rootB!.links).toEqual([{ traceId: ta!.spans[0]!.traceId, spanId: ta!.spans[0]!.spanId }]);
    expect(attr(rootB!, "reach.session.segment")).toBe(2);
    expect(attr(rootB!, "mcp.session.id")).toBe(a.runHash);
  });
});

describe("--otlp-endpoint (live, through the OpenTelemetry SDK's OTLP/HTTP exporter)", () => {
  it("the SDK exporter posts exactly the file's bytes as application/json", async () => {
    const r = await receiver();
    try {
      const trace = otelTrace(readRunCapsule(readFileSync(NOTES)).entries, { scope: SCOPE });
      expect(await exportOtlpTraces(r.url, [trace])).toBeNull();
      expect(r.got).toHaveLength(1);
      expect(r.got[0]).toMatchObject({ path: "/v1/traces", type: "application/json" });
      expect(r.got[0]!.body).toBe(encodeOtlpJson([trace]));
    } finally {
      await r.close();
    }
  });

  it("run: the trace reaches the receiver with the capsule's ids and real times; a refusing endpoint is only a warning", async () => {
    const r = await receiver();
    try {
      const out = join(scratch, "live");
      const run = await cli(["run", join(ROOT, "packs/hello"), "--out", out, "--json", "--quiet", "--otlp-endpoint", r.url]);
      expect(run.code, run.stderr).toBe(0);
      const { capsule } = JSON.parse(run.stdout) as { capsule: string };
      await checkCapsule(readFileSync(capsule));
      expect(r.got).toHaveLength(1);
      const live = decodeOtlpTraces(r.got[0]!.body)[0]!.spans;
      const file = decodeOtlpTraces((await cli(["export", "otel", capsule])).stdout)[0]!.spans;
      expect(live.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name])).toEqual(file.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name]));
      expect(file[0]!.start).toBe(0n); // the virtual clock starts at its epoch
      expect(live[0]!.start).toBeGreaterThan(BigInt(Date.parse("2020-01-01")) * 1_000_000n); // real time
    } finally {
      await r.close();
    }
    const refusing = await receiver(400);
    try {
      const run = await cli(["run", join(ROOT, "packs/hello"), "--out", join(scratch, "refused"), "--json", "--otlp-endpoint", refusing.url]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/warning: the trace of run [0-9a-f]{64} was not exported/);
      expect(refusing.got).toHaveLength(1);
      await checkCapsule(readFileSync((JSON.parse(run.stdout) as { capsule: string }).capsule));
    } finally {
      await refusing.close();
    }
  });
});

describe("a salted capsule's host calls in a trace", () => {
  it("carry the calls' salted commitments: the same before and after redaction, never a plain hash of a value", () => {
    const hostCalls = (folder: string): unknown[] => otelTrace(readRunCapsule(readFileSync(capsuleOf(folder))).entries, { scope: SCOPE }).spans
      .flatMap((sp) => sp.events.filter((e) => e.name === "reach.host_call").map((e) => e.attributes.filter(([k]) => k.startsWith("reach.host."))));
    const salted = hostCalls("notes-salted");
    expect(salted.length).toBeGreaterThan(0);
    expect(hostCalls("notes-redacted")).toEqual(salted);
    const entries = readRunCapsule(readFileSync(capsuleOf("notes-salted"))).entries;
    const plain = new Set<string>();
    for (const [path, bytes] of entries) {
      if (!path.startsWith("tape/")) continue;
      const v = JSON.parse(new TextDecoder().decode(bytes)) as { request: unknown; response?: unknown; error?: unknown };
      plain.add(createHash("sha256").update(canonicalize(v.request)).digest("hex"));
      plain.add(createHash("sha256").update(canonicalize(v.response ?? v.error)).digest("hex"));
    }
    expect(plain.size).toBeGreaterThan(0);
    expect(JSON.stringify(salted).match(/[0-9a-f]{64}/g)!.filter((h) => plain.has(h))).toEqual([]);
  });
});

describe("--otlp-endpoint of mcp (the SDK client over stdio)", () => {
  it("each session run's trace reaches the receiver once its capsule is written: MCP tools/call spans with the capsule's ids", async () => {
    const r = await receiver();
    try {
      const out = join(scratch, "mcp-live");
      const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, "dist/cli/main.js"), "mcp", join(ROOT, "packs/hello"), "--out", out, "--otlp-endpoint", r.url], cwd: ROOT, stderr: "pipe" });
      let stderr = "";
      transport.stderr!.on("data", (d: Buffer) => (stderr += d));
      const client = new Client({ name: "otel-test", version: "1" });
      await client.connect(transport);
      const result = await client.callTool({ name: "wordcount", arguments: { text: "traced over mcp" } });
      expect(result.structuredContent, stderr).toMatchObject({ words: 3 });
      await client.close();
      const capsule = /capsule (\S+\.capsule\.tar\.gz)/.exec(stderr)?.[1];
      expect(capsule, stderr).toBeDefined();
      await checkCapsule(readFileSync(capsule!));
      expect(r.got, stderr).toHaveLength(1);
      expect(r.got[0]).toMatchObject({ path: "/v1/traces", type: "application/json" });
      const live = decodeOtlpTraces(r.got[0]!.body)[0]!.spans;
      const file = decodeOtlpTraces((await cli(["export", "otel", capsule!])).stdout)[0]!.spans;
      expect(live.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name])).toEqual(file.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name]));
      expect(live.some((s) => s.name.startsWith("tools/call") && attr(s, "mcp.method.name") === "tools/call")).toBe(true);
    } finally {
      await r.close();
    }
  }, 120_000);
});

describe("--otlp-endpoint of serve (a worker's run)", () => {
  it("a submitted run's trace reaches the receiver when the worker ends it, with the capsule's ids", async () => {
    const r = await receiver();
    const home = join(scratch, "serve-home");
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "config"), NO_COLOR: "1" };
    const child = spawn(process.execPath, [join(ROOT, "dist/cli/main.js"), "serve", "--listen", "127.0.0.1:0", "--data", join(scratch, "serve-data"), "--workers", "1", "--json", "--otlp-endpoint", r.url], { cwd: scratch, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    try {
      const url = await servedUrl(child, () => stderr);
      const out = join(scratch, "serve-out");
      const submitted = spawnSync(process.execPath, [join(ROOT, "dist/cli/main.js"), "submit", join(ROOT, "packs/hello"), "--server", url, "--wait", "--out", out, "--json"], { cwd: scratch, env, encoding: "utf8", timeout: 120_000 });
      expect(submitted.status, submitted.stderr + stderr).toBe(0);
      const { runHash } = JSON.parse(submitted.stdout) as { runHash: string };
      const capsule = join(out, `${runHash}.capsule.tar.gz`);
      await checkCapsule(readFileSync(capsule));
      for (let i = 0; i < 600 && r.got.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50)); // the export is in the background
      expect(r.got, stderr).toHaveLength(1);
      const live = decodeOtlpTraces(r.got[0]!.body)[0]!.spans;
      const file = decodeOtlpTraces((await cli(["export", "otel", capsule])).stdout)[0]!.spans;
      expect(live.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name])).toEqual(file.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name]));
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      await r.close();
    }
  }, 120_000);
});

describe("start-up", () => {
  it("nothing loads the OpenTelemetry SDK without --otlp-endpoint: only the platform's exporter imports it, on first use", () => {
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") && !d.name.endsWith(".test.ts") ? [join(dir, d.name)] : []));
    const src = join(ROOT, "src");
    const users = files(src).filter((f) => /(from\s+|import\(\s*)"@opentelemetry\//.test(readFileSync(f, "utf8")));
    expect(users.map((f) => f.slice(src.length + 1))).toEqual(["platform/otlp-exporter.ts"]);
    const exporter = readFileSync(join(src, "platform/otlp-exporter.ts"), "utf8");
    expect(exporter.match(/^import\s[^;]*from\s+"@opentelemetry\/[^"]*";/gm)?.every((m) => m.startsWith("import type "))).toBe(true); // types only; the SDK by `await import(…)`
    // the command modules reach the live export (and through it the exporter) by dynamic import only
    for (const f of files(join(src, "cli"))) expect(readFileSync(f, "utf8"), f).not.toMatch(/^import\s+\{[^}]*\}\s+from\s+"\.\/_otel-live\.ts"/m);
    expect(readFileSync(join(ROOT, "scripts/bundle/bundle.mjs"), "utf8")).toContain('"@opentelemetry/*"'); // not in main.cjs
  });
});
