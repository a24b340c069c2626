// The authoring guide (docs/authoring.md) is executable: its examples are the templates' files, the numbers it quotes
// are the code's, and its one documented sequence of commands (init → build → validate → keygen → sign → trust →
// pack test) runs for every template whose toolchain `reach-wasm doctor` finds — all of them in CI.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FUEL_PER_MS, STEP_MEMORY_BYTES, WATCHDOG_GRACE_MS } from "../src/engine/executor.ts";
import { probeToolchains } from "../src/platform/toolchains.ts";
import type { Toolchain } from "../src/platform/toolchains.ts";
import { TEMPLATES } from "../src/platform/templates.ts";
import { FUEL_SLICE } from "../src/sandbox/fuel/fuel-meter.ts";
import { DEFAULT_MAX_CALLS, HOST_CALL_FUEL } from "../src/sandbox/host/host.ts";
import { HOST_OPS } from "../src/sandbox/types.ts";
import { WASI_CALL_FUEL } from "../src/sandbox/wasi/runner.ts";

const root = new URL("../", import.meta.url).pathname;
const guide = readFileSync(join(root, "docs/authoring.md"), "utf8");
/** Fenced blocks: info string → body. */
const blocks = [...guide.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ info: m[1]!.trim(), body: m[2]! }));
const attr = (info: string, name: string): string | undefined => new RegExp(`(?:^|\\s)${name}=(\\S+)`).exec(info)?.[1];
const fmt = (n: number | bigint): string => n.toLocaleString("en-US");

/** Run a bash script (asynchronously: a blocked worker would miss vitest's heartbeats). */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("docs/authoring.md", () => {
  it("shows the templates' files exactly as pack init writes them (pack id hello)", () => {
    const shown = blocks.filter((b) => attr(b.info, "template") !== undefined);
    expect(shown.length).toBeGreaterThan(10);
    for (const b of shown) {
      const file = join(root, "templates", attr(b.info, "template")!, attr(b.info, "file")!);
      expect(b.body, `${attr(b.info, "template")}/${attr(b.info, "file")}`).toBe(readFileSync(file, "utf8").split("__PACK_ID__").join("hello"));
    }
  });

  it("has an example tool for every kind, and names every template", () => {
    const tools = blocks.map((b) => attr(b.info, "file")).filter((f) => f?.startsWith("tools/") || f?.startsWith("src/"));
    for (const f of ["src/count.c", "tools/count.js", "tools/count.py"]) expect(tools).toContain(f);
    expect(blocks.some((b) => attr(b.info, "template") === "component" && attr(b.info, "file") === "src/count.c")).toBe(true);
    for (const t of TEMPLATES) expect(guide).toContain(`| \`${t}\` |`);
  });

  it("quotes the limits the code enforces and documents every host operation", () => {
    expect(guide).toContain(`\`FUEL_PER_MS\` = ${fmt(FUEL_PER_MS)}`);
    expect(guide).toContain(`\`FUEL_SLICE\` = ${fmt(FUEL_SLICE)}`);
    expect(guide).toContain(`\`HOST_CALL_FUEL\` = ${fmt(HOST_CALL_FUEL)}`);
    expect(guide).toContain(`\`WASI_CALL_FUEL\` = ${fmt(WASI_CALL_FUEL)}`);
    expect(guide).toContain(`\`DEFAULT_MAX_CALLS\` = ${fmt(DEFAULT_MAX_CALLS)}`);
    expect(guide).toContain(`\`STEP_MEMORY_BYTES\` = ${fmt(STEP_MEMORY_BYTES)}`);
    expect(guide).toContain(`the step timeout + ${WATCHDOG_GRACE_MS} ms`);
    for (const op of HOST_OPS) expect(guide, op).toMatch(new RegExp(`^\\| \`${op.replace(".", "\\.")}\` \\|`, "m"));
  });
});

describe("the documented sequence, for every template", () => {
  const sequence = blocks.find((b) => b.info === "sh sequence")?.body ?? "";
  const deno = join(root, "node_modules/.bin/deno");
  // The AssemblyScript compiler CI installs for the example tools (scripts/build-tools.sh), when no other is set.
  const localAsc = join(root, "wasm-tools/node_modules/.bin/asc");
  const env: NodeJS.ProcessEnv = { ...process.env, ...(process.env["ASC"] === undefined && existsSync(localAsc) ? { ASC: localAsc } : {}) };
  delete env["REACH_WASM_TRUST_STORE"];
  let toolchains: Toolchain[] = [];
  let scratch = "";
  beforeAll(async () => {
    const saved = process.env["ASC"];
    if (env["ASC"] !== undefined) process.env["ASC"] = env["ASC"];
    try {
      toolchains = await probeToolchains();
    } finally {
      if (saved === undefined) delete process.env["ASC"];
      else process.env["ASC"] = saved;
    }
    scratch = mkdtempSync(join(tmpdir(), "reach-authoring-"));
  }, 120_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("is in the guide, starts with TEMPLATE= and ends with pack test", () => {
    expect(sequence).toMatch(/^TEMPLATE=c\b/);
    expect(sequence).toMatch(/reach-wasm pack test hello --trust trust.json/);
  });

  it("finds every toolchain in CI (a template is skipped only where doctor says its toolchain is missing)", () => {
    const missing = toolchains.filter((t) => !t.present).map((t) => `${t.name}: ${t.problem}`);
    if (process.env["CI"] === "true") expect(missing).toEqual([]);
    else if (missing.length > 0) console.warn(`authoring: toolchains missing here, their templates are skipped: ${missing.join("; ")}`);
  });

  for (const template of TEMPLATES) {
    it(`${template}: init → build → validate → keygen → sign → trust → pack test passes, signed by a trusted key`, async (ctx) => {
      const toolchain = toolchains.find((t) => t.templates.includes(template));
      if (toolchain === undefined || !toolchain.present) ctx.skip();
      const dir = join(scratch, template);
      // The guide's block, with the template chosen and the prebuilt tool removed after init (so build.sh must make
      // it); `reach-wasm` is the CLI from src/ under Deno.
      const script = [
        "set -euo pipefail",
        `reach-wasm() { ${JSON.stringify(deno)} run -A ${JSON.stringify(join(root, "src/cli/main.ts"))} "$@"; }`,
        ...sequence.replace(/^TEMPLATE=\w+/m, `TEMPLATE=${template}`).split("\n").flatMap((line) =>
          line.startsWith("reach-wasm pack init") ? [line, "rm -f hello/tools/*.wasm"] : [line]),
      ].join("\n");
      mkdirSync(dir, { recursive: true });
      const r = await bash(script, dir, env);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stderr).toMatch(/testing hello@0\.1\.0 \(signed by trusted key me\)/);
      expect(r.stderr).toMatch(/2 passed, 0 failed/);
      const tool = template === "component" ? "tools/count.component.wasm" : template === "js" ? "tools/count.js" : template === "python" ? "tools/count.py" : "tools/count.wasm";
      expect(existsSync(join(dir, "hello", tool))).toBe(true);
      // The build is reproducible: on CI's pinned toolchains it gives the template's prebuilt bytes.
      if (process.env["CI"] === "true") {
        expect(readFileSync(join(dir, "hello", tool)).equals(readFileSync(join(root, "templates", template, tool))), `${template}/${tool} is stale; run its build.sh`).toBe(true);
      }
    }, 600_000);
  }
});
