// The example packs through the `reach-wasm run` command (README "Example packs"): every pack under
// packs/ runs as its README line says, each `*_fail` pack exits with the code in its expected.json and leaves no
// partial effect in --out, the same run gives the same runHash on Node and on Deno, and SIGINT ends a run ABORTED.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";

const root = new URL("../", import.meta.url).pathname;
const packs = readdirSync(join(root, "packs")).filter((n) => existsSync(join(root, "packs", n, "reach.json"))).sort();
const failing = packs.filter((n) => n.endsWith("_fail"));
const scratch = mkdtempSync(join(tmpdir(), "reach-packs-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Regular files below `dir`, relative, sorted ([] when it does not exist). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1))
    .sort();
}

type RunJson = { runId: string; status: string; runHash: string; out: string; error?: { code: string; details?: Record<string, unknown> } };

async function cli(args: string[]): Promise<{ code: number; json: RunJson | null; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, json: stdout.trim() === "" ? null : (JSON.parse(stdout) as RunJson), stderr };
}

function deno(args: string[], onStderr?: (text: string, child: ReturnType<typeof spawn>) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, "node_modules/.bin/deno"), ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-net", join(root, "src/cli/main.ts"), ...args], { cwd: root });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => {
      stderr += d;
      onStderr?.(stderr, child);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("every pack's reach.json validates against the upstream pack.schema.json", () => {
  it.each(packs)("%s", async (name) => {
    const Ajv2020 = Ajv2020Module.default;
    const addFormats = addFormatsModule.default;
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    const upstream = ajv.compile(JSON.parse(readFileSync(join(root, "conformance/upstream-schemas/pack.schema.json"), "utf8")));
    const doc = JSON.parse(readFileSync(join(root, "packs", name, "reach.json"), "utf8"));
    expect(upstream(doc), JSON.stringify(upstream.errors)).toBe(true);
  });
});

describe("every tool of every pack is described for an agent (MCP tools/list)", () => {
  it.each(packs)("%s: a description, an input schema and an output schema, both objects that name their properties", (name) => {
    const doc = JSON.parse(readFileSync(join(root, "packs", name, "reach.json"), "utf8")) as { tools: Record<string, { description?: string; inputSchema?: Record<string, unknown>; outputSchema?: Record<string, unknown> }> };
    expect(Object.keys(doc.tools).length).toBeGreaterThan(0);
    for (const [tool, t] of Object.entries(doc.tools)) {
      expect(t.description?.length ?? 0, `${tool}: description`).toBeGreaterThan(20);
      for (const which of ["inputSchema", "outputSchema"] as const) {
        expect(t[which], `${tool}: ${which}`).toMatchObject({ type: "object", properties: expect.any(Object), required: expect.any(Array) });
      }
    }
  });

  it("packs/notes stats measures the text an agent passes (bytes, characters, lines, words), not its JSON", async () => {
    const text = "héllo wörld\nsecond line";
    const r = await cli(["run", "packs/notes", "--unrestricted", "--input", JSON.stringify({ title: "Stats", text }), "--json", "--out", join(scratch, "notes-stats")]);
    expect(r.code, r.stderr).toBe(0);
    const events = readFileSync(join(r.json!.out, "events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; payload: { result?: Record<string, unknown>; invocationId?: string; stepId?: string } });
    const invoked = events.find((e) => e.type === "tool.invoked" && e.payload.stepId === "stats")!.payload.invocationId;
    const stats = events.find((e) => e.type === "tool.completed" && e.payload.invocationId === invoked)!.payload.result;
    expect(stats).toEqual({ bytes: 25, chars: 23, lines: 2, words: 4, fnv1a: "140d640fb5258dfe" });
  });
});

describe("packs/hello", () => {
  it("completes with a runHash, and the same command again prints the same runHash", async () => {
    const out = join(scratch, "hello");
    const a = await cli(["run", "packs/hello", "--json", "--out", out]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.json?.status).toBe("COMPLETED");
    expect(a.json?.runHash).toMatch(/^[0-9a-f]{64}$/);
    const b = await cli(["run", "packs/hello", "--json", "--out", out]);
    expect(b.json?.runHash).toBe(a.json?.runHash);
    expect(readFileSync(join(a.json!.out, "events.jsonl"), "utf8").split("\n").filter(Boolean)).toHaveLength(6);
  });

  it("the same pack run through Deno (src/cli/main.ts) prints the same runHash", async () => {
    const node = await cli(["run", "packs/hello", "--json", "--out", join(scratch, "hello-node")]);
    const d = await deno(["run", "packs/hello", "--json", "--out", join(scratch, "hello-deno")]);
    expect(d.code, d.stderr).toBe(0);
    expect((JSON.parse(d.stdout) as RunJson).runHash).toBe(node.json?.runHash);
    // the deterministic run files are byte-identical between the runtimes
    for (const f of ["events.jsonl", "tape.jsonl", "plan.json", "EXECUTION_HEADER.json", "result.json"]) {
      expect(readFileSync(join((JSON.parse(d.stdout) as RunJson).out, f), "utf8"), f).toBe(readFileSync(join(node.json!.out, f), "utf8"));
    }
  }, 60_000);
});

describe("packs/notes", () => {
  it("restricted by default: the writing step is a policy violation; --unrestricted completes with a note, an index and an artifact", async () => {
    const restricted = await cli(["run", "packs/notes", "--json", "--out", join(scratch, "notes")]);
    expect(restricted.code).toBe(1);
    expect(restricted.json?.error?.code).toBe("POLICY_VIOLATION");
    expect(restricted.stderr).toMatch(/restricted executor/);
    const ok = await cli(["run", "packs/notes", "--unrestricted", "--json", "--out", join(scratch, "notes")]);
    expect(ok.code, ok.stderr).toBe(0);
    const files = readdirSync(join(ok.json!.out, "workspace/out/notes"));
    expect(files).toEqual(["what-reach-wasm-does.md"]);
    expect(JSON.parse(readFileSync(join(ok.json!.out, "workspace/out/index.json"), "utf8")).files).toEqual(files);
    expect(readdirSync(join(ok.json!.out, "artifacts"))).toHaveLength(1);
    const evidence = JSON.parse(readFileSync(join(ok.json!.out, "evidence.json"), "utf8")) as { status: string }[];
    expect(evidence.map((e) => e.status)).toEqual(["completed", "completed", "completed", "completed", "completed"]);
  });
});

describe("packs/http", () => {
  it("fetches from a local HTTP server on 127.0.0.1", async () => {
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ title: "local document", items: [1, 2, 3] }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as AddressInfo).port;
      const input = join(scratch, "http-input.json");
      writeFileSync(input, JSON.stringify({ url: `http://127.0.0.1:${port}/doc.json` }));
      const r = await cli(["run", "packs/http", "--unrestricted", "--input", input, "--json", "--out", join(scratch, "http")]);
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(readFileSync(join(r.json!.out, "result.json"), "utf8"));
      expect(result.outputs.fetch).toMatchObject({ status: 200, title: "local document", keys: ["items", "title"] });
      expect(readFileSync(join(r.json!.out, "tape.jsonl"), "utf8")).toContain("http.fetch");
      // restricted (unsigned, no opt-in): no network at all
      const denied = await cli(["run", "packs/http", "--input", input, "--json", "--out", join(scratch, "http")]);
      expect(denied.json?.error?.code).toBe("POLICY_VIOLATION");
    } finally {
      server.close();
    }
  });

  it("SIGINT ends a run ABORTED within 30 s, rolls the step back and still writes the run files", async () => {
    const server = createServer(() => {}); // accepts, never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const input = join(scratch, "hang-input.json");
      writeFileSync(input, JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow` }));
      let sent = 0;
      const started = performance.now();
      const r = await deno(["run", "packs/http", "--unrestricted", "--input", input, "--json", "--out", join(scratch, "abort")], (text, child) => {
        if (sent === 0 && text.includes("(fetch-json) …")) {
          sent = performance.now();
          setTimeout(() => child.kill("SIGINT"), 200);
        }
      });
      expect(sent).toBeGreaterThan(0);
      expect(performance.now() - sent).toBeLessThan(30_000);
      expect(r.code, r.stderr).toBe(1);
      const json = JSON.parse(r.stdout) as RunJson;
      expect(json.status).toBe("ABORTED");
      expect(json.error?.code).toBe("EXEC_ABORTED");
      const events = readFileSync(join(json.out, "events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).type);
      expect(events.slice(-3)).toEqual(["tool.failed", "run.step.failed", "run.aborted"]);
      expect(performance.now() - started).toBeLessThan(60_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 90_000);
});

describe("failing packs exit with their expected code and leave no partial effects", () => {
  it("there is a failing pack for every refusal case (the *_fail packs)", () => {
    expect(failing).toEqual([
      "disallowed_host_fail", "hanging_tool_fail", "intent_mismatch_fail", "path_escape_fail", "return_spec_fail", "risk3_unapproved_fail",
      "risk4_fail", "spec_version_fail", "too_many_steps_fail", "undeclared_tool_fail",
    ]);
  });
  for (const name of failing) {
    it(name, async () => {
      const expected = JSON.parse(readFileSync(join(root, "packs", name, "expected.json"), "utf8")) as { exitCode: number; code: string; violationType?: string; absent?: string[] };
      const out = join(scratch, name);
      const r = await cli(["run", `packs/${name}`, "--unrestricted", "--json", "--out", out]);
      expect(r.code, r.stderr).toBe(expected.exitCode);
      expect(r.json?.error?.code).toBe(expected.code);
      if (expected.violationType !== undefined) expect(r.json?.error?.details?.["violationType"]).toBe(expected.violationType);
      if (expected.exitCode === 2) {
        expect(existsSync(out)).toBe(false); // invalid input: nothing written at all
        return;
      }
      expect(r.json?.status).toBe("FAILED");
      if (expected.violationType !== undefined) {
        // seed 003 §4.3 "Audit Trail": the denial is a policy.violation event of the run
        const events = readFileSync(join(r.json!.out, "events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
        expect(events.filter((e) => e.type === "policy.violation").map((e) => e.payload["violationType"])).toEqual([expected.violationType]);
      }
      for (const p of expected.absent ?? []) expect(existsSync(join(r.json!.out, p)), p).toBe(false);
      // the failed step committed nothing: --out holds exactly the workspace files the pack shipped, and no artifact
      expect(filesUnder(join(r.json!.out, "workspace"))).toEqual(filesUnder(join(root, "packs", name, "workspace")));
      expect(existsSync(join(r.json!.out, "artifacts"))).toBe(false);
    }, 30_000);
  }
});
