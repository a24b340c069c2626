/**
 * Test helpers for the MCP face (not part of the build): a pack on disk made from `packs/hello` with room for many
 * calls, a tool that never stops, and seeded workspace files (text and binary); and checks of a capsule's verdicts.
 * @module
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("../../", import.meta.url).pathname;

/** A PNG signature and a few bytes that are not UTF-8 (a blob resource). */
export const PIXEL = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x01]);

/**
 * Write the test pack into `dir`: `packs/hello`'s wordcount with `maxToolCalls` raised to `calls`, a JS tool `spin`
 * (`for (;;) {}`), `workspace/data/{readme.md,pixel.png}` declared read-only and `memory://notes/` read-write.
 * @param dir an empty directory
 * @param calls the pack's `maxToolCalls`
 * @returns `dir`
 */
export function writeMcpPack(dir: string, calls = 64): string {
  cpSync(join(root, "packs/hello"), dir, { recursive: true });
  type Pack = { id: string; manifest: { policies: Record<string, unknown>; capabilities: { tools: unknown[]; resources?: unknown[]; permissions?: string[] } }; tools: Record<string, unknown> };
  const manifest = JSON.parse(readFileSync(join(dir, "reach.json"), "utf8")) as Pack;
  manifest.id = "hello-mcp";
  manifest.manifest.policies["maxToolCalls"] = calls;
  manifest.manifest.policies["maxExecutionTime"] = 600_000;
  manifest.manifest.capabilities.tools.push({ name: "spin" });
  manifest.manifest.capabilities.resources = [{ uri: "workspace:///data/", access: "read" }, { uri: "memory://notes/", access: "readwrite" }];
  manifest.manifest.capabilities.permissions = ["filesystem"];
  manifest.tools["spin"] = { kind: "js", module: "tools/spin.js", description: "never returns (a busy loop)", inputSchema: { type: "object", additionalProperties: false }, outputSchema: { type: "object" } };
  writeFileSync(join(dir, "reach.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, "tools/spin.js"), "export default () => { for (;;) {} }\n");
  mkdirSync(join(dir, "workspace/data"), { recursive: true });
  writeFileSync(join(dir, "workspace/data/readme.md"), "# data\n\nseeded\n");
  writeFileSync(join(dir, "workspace/data/pixel.png"), PIXEL);
  return dir;
}

/** The infra tools' calls a test makes, with what each answers. */
export const INFRA_CALLS: readonly { name: string; args: Record<string, unknown>; expect: Record<string, unknown> }[] = [
  { name: "write_memory", args: { key: "notes/k", value: { n: [1, 2] } }, expect: { ok: true } },
  { name: "read_memory", args: { key: "notes/k" }, expect: { value: { n: [1, 2] } } },
  { name: "write_temp", args: { name: "notes.txt", content: "alpha\nbeta\ngamma\n" }, expect: { path: "temp/notes.txt" } },
  { name: "read_lines", args: { path: "temp/notes.txt", start: 1, end: 3 }, expect: { lines: ["beta", "gamma"] } },
  { name: "exec_python", args: { code: "result = input * 7", input: 6 }, expect: { result: 42 } },
];
