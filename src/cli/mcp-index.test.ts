// Two MCP sessions whose first runs are the same run share a first run hash; each keeps its own index
// (`<first>.json`, `<first>-2.json`), rewritten in place as its runs end, and a later process takes no name a file
// already has.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { McpSegment } from "../mcp/mod.ts";
import { sessionIndex } from "./mcp-index.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-mcp-index-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const H = "a".repeat(64);
const seg = (segment: number, runHash: string, previousRunHash: string | null): McpSegment =>
  ({ segment, runHash, previousRunHash, status: "COMPLETED", capsule: `${runHash}.capsule.tar.gz`, error: null });
const index = (name: string): { session: string; runs: { runHash: string }[] } => JSON.parse(readFileSync(join(scratch, "sessions", name), "utf8"));

describe("mcp session indexes", () => {
  it("sessions with the same first run hash each keep their own index, in this process and the next", async () => {
    const onSegment = sessionIndex(scratch);
    const a: McpSegment[] = [seg(1, H, null)];
    const b: McpSegment[] = [seg(1, H, null)];
    await onSegment(a);
    await onSegment(b);
    a.push(seg(2, "b".repeat(64), H));
    b.push(seg(2, "c".repeat(64), H));
    await Promise.all([onSegment(b), onSegment(a)]);
    expect(readdirSync(join(scratch, "sessions")).sort()).toEqual([`${H}-2.json`, `${H}.json`]);
    expect(index(`${H}.json`).runs.map((r) => r.runHash)).toEqual([H, "b".repeat(64)]);
    expect(index(`${H}-2.json`).runs.map((r) => r.runHash)).toEqual([H, "c".repeat(64)]);
    expect(index(`${H}-2.json`).session).toBe(H);

    const later = sessionIndex(scratch); // another `mcp` process on the same --out
    await later([seg(1, H, null)]);
    expect(readdirSync(join(scratch, "sessions")).sort()).toEqual([`${H}-2.json`, `${H}-3.json`, `${H}.json`]);
    expect(index(`${H}.json`).runs).toHaveLength(2);
  });
});
