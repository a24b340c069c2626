/**
 * The session index of `reach-wasm mcp`: `<out>/sessions/<first run hash>.json` lists one MCP session's runs in order
 * (segment, run hash, the run it continues, status, capsule), rewritten atomically after each of its runs ends. Two
 * sessions whose first runs are the same run (the same first call, or none, under the one seed) have the same first
 * run hash: the second to end a run takes `<first run hash>-2.json` (then `-3`, …), so neither overwrites the other.
 * @module
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import type { McpSegment } from "../mcp/mod.ts";
import { writeFileAtomic } from "../platform/write.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The writer of the session indexes under `outRoot` (one per `mcp` process: it remembers which session holds which
 * name, and takes no name a file already has).
 * @param outRoot the `--out` folder (prepared)
 * @returns the `onSegment` callback of every session
 * @example const onSegment = sessionIndex(".reach"); // new McpSessionRun(first, sink, { engine, onSegment })
 */
export function sessionIndex(outRoot: string): (segments: readonly McpSegment[]) => Promise<void> {
  const names = new WeakMap<readonly McpSegment[], string>();
  const taken = new Set<string>();
  const claim = async (first: string): Promise<string> => {
    for (let n = 1; ; n++) {
      const name = n === 1 ? `${first}.json` : `${first}-${n}.json`;
      if (taken.has(name) || (await exists(join(outRoot, "sessions", name))) || taken.has(name)) continue;
      taken.add(name);
      return name;
    }
  };
  return async (segments) => {
    const first = segments[0]?.runHash;
    if (first === undefined || first === null) return;
    let name = names.get(segments);
    if (name === undefined) names.set(segments, (name = await claim(first)));
    const runs = segments.map((s) => ({ segment: s.segment, runHash: s.runHash, previousRunHash: s.previousRunHash, status: s.status, capsule: s.capsule, ...(s.error === null ? {} : { error: { code: s.error.code, message: s.error.message } }) }));
    await writeFileAtomic(join(outRoot, "sessions", name), new TextEncoder().encode(JSON.stringify({ session: first, runs }, null, 2) + "\n"), 0o600, { within: outRoot });
  };
}
