/**
 * Replay cases (seed 003 §10.3 "Replayed runs match original hashes"; §3.4, §8.3): the reference capsules committed
 * with reach-wasm (`conformance/capsules/`, made by earlier versions) and the implementation's own capsules replay to
 * their run hash and verify; a capsule whose recorded outputs or tape were changed neither verifies nor replays.
 * @module
 */
import { writeArchive } from "../capsule/mod.ts";
import { entryText } from "./context.ts";
import type { SuiteContext } from "./context.ts";
import { helloRun, notesRun, tail } from "./fixtures.ts";
import type { ConformanceCase } from "./case.ts";

/** The committed reference capsules, one folder each: `conformance/capsules/<name>/<runHash>.capsule.tar.gz`. */
export const REFERENCE_CAPSULES = ["chart", "hello", "http", "mcp_memory", "notes", "notes-aborted", "notes-fork", "notes-redacted", "notes-resumed", "notes-salted", "notes-signed", "parallel", "path_escape_fail", "return_spec_fail", "secret-api", "secret-api-v2"] as const;

/** The path and run hash of a reference capsule. */
async function reference(ctx: SuiteContext, name: string): Promise<{ path: string; runHash: string }> {
  const dir = ctx.resource(`conformance/capsules/${name}`);
  const file = (await ctx.host.list(dir)).find((f) => f.endsWith(".capsule.tar.gz"));
  if (file === undefined) throw new Error(`setup: conformance/capsules/${name} holds no capsule; reinstall reach-wasm`);
  return { path: `${dir}/${file}`, runHash: file.slice(0, -".capsule.tar.gz".length) };
}

async function replayMatches(ctx: SuiteContext, path: string, runHash: string, what: string): Promise<void> {
  const o = await ctx.cli(["replay", path, "--json"]);
  if (o.code !== 0 || o.json?.["matches"] !== true || o.json["runHash"] !== runHash) {
    throw new Error(`replay of ${what}: exit ${o.code}${o.timedOut ? " (timed out)" : ""}, matches ${String(o.json?.["matches"])}, runHash ${String(o.json?.["runHash"])} (expected exit 0, matches true, ${runHash})${tail(o.stderr)}`);
  }
}

async function verifies(ctx: SuiteContext, path: string, what: string): Promise<void> {
  const o = await ctx.cli(["verify", path, "--json"]);
  if (o.code !== 0 || o.json?.["valid"] !== true) throw new Error(`verify of ${what}: exit ${o.code}, valid ${String(o.json?.["valid"])} (expected exit 0, valid true)${tail(o.stderr)}`);
}

/** Write a copy of a capsule with one entry changed. */
async function tampered(ctx: SuiteContext, source: string, name: string, entry: string, change: (text: string) => string): Promise<string> {
  const entries = await ctx.capsule(source);
  const before = entryText(entries, entry);
  const after = change(before);
  if (after === before) throw new Error(`setup: the change to ${entry} changed nothing`);
  entries.set(entry, new TextEncoder().encode(after));
  const path = ctx.at("tampered", name, source.split("/").at(-1)!);
  await ctx.host.writeFile(path, writeArchive([...entries].map(([p, bytes]) => ({ path: p, bytes }))));
  return path;
}

async function refusedEverywhere(ctx: SuiteContext, path: string, what: string): Promise<void> {
  const v = await ctx.cli(["verify", path, "--json"]);
  if (v.code === 0 || v.json?.["valid"] === true) throw new Error(`verify accepted ${what} (exit ${v.code})`);
  if (v.code !== 1 && v.code !== 2) throw new Error(`verify of ${what}: exit ${v.code}, expected 1 or 2${tail(v.stderr)}`);
  const r = await ctx.cli(["replay", path, "--json"]);
  if (r.code === 0 || r.json?.["matches"] === true) throw new Error(`replay accepted ${what} (exit ${r.code})`);
  if (r.code !== 1 && r.code !== 2) throw new Error(`replay of ${what}: exit ${r.code}, expected 1 or 2${tail(r.stderr)}`);
}

function referenceCase(name: string): ConformanceCase {
  return {
    id: `replay.reference-${name}`,
    category: "replay",
    clause: "§3.4 replay requirements",
    title: REDACTED_CAPSULES.has(name) ? `the redacted reference capsule conformance/capsules/${name} replays what it can and names what it cannot (exit 3, REPLAY_REDACTED)` : `the reference capsule conformance/capsules/${name} replays to its run hash`,
    run: async (ctx) => {
      const ref = await reference(ctx, name);
      if (REDACTED_CAPSULES.has(name)) await replayRedacted(ctx, ref.path, `conformance/capsules/${name}`);
      else await replayMatches(ctx, ref.path, ref.runHash, `conformance/capsules/${name}`);
    },
  };
}

/** Reference capsules with contents redacted: their replay must name what it cannot replay, never give a verdict. */
const REDACTED_CAPSULES: ReadonlySet<string> = new Set(["notes-redacted"]);

async function replayRedacted(ctx: SuiteContext, path: string, what: string): Promise<void> {
  const o = await ctx.cli(["replay", path, "--json"]);
  const redacted = o.json?.["redacted"] as Record<string, unknown> | undefined;
  if (o.code !== 3 || o.json?.["matches"] !== false || redacted?.["code"] !== "REPLAY_REDACTED" || typeof redacted["step"] !== "string") {
    throw new Error(`replay of ${what}: exit ${o.code}, matches ${String(o.json?.["matches"])}, redacted ${JSON.stringify(redacted ?? null)} (expected exit 3, matches false, REPLAY_REDACTED naming the step it cannot replay)${tail(o.stderr)}`);
  }
}

/**
 * The replay cases.
 * @returns the cases, in order
 */
export function replayCases(): ConformanceCase[] {
  return [
    ...REFERENCE_CAPSULES.map(referenceCase),
    {
      id: "replay.reference-verify",
      category: "replay",
      clause: "§8.3 verification without re-execution",
      title: "every reference capsule verifies (chain, outputs, tape, pack, proofs) without execution",
      run: async (ctx) => {
        for (const name of REFERENCE_CAPSULES) await verifies(ctx, (await reference(ctx, name)).path, `conformance/capsules/${name}`);
      },
    },
    {
      id: "replay.own-capsules",
      category: "replay",
      clause: "§3.4 a replayed run produces the same run hash",
      title: "the implementation's own capsules of packs/hello and packs/notes replay to their run hashes",
      run: async (ctx) => {
        for (const [what, r] of [["packs/hello", await helloRun(ctx)], ["packs/notes", await notesRun(ctx)]] as const) await replayMatches(ctx, r.capsule, r.runHash, `its capsule of ${what}`);
      },
    },
    {
      id: "replay.own-verify",
      category: "replay",
      clause: "§8.3 verification without re-execution",
      title: "the implementation's own capsules of packs/hello and packs/notes verify",
      run: async (ctx) => {
        for (const [what, r] of [["packs/hello", await helloRun(ctx)], ["packs/notes", await notesRun(ctx)]] as const) await verifies(ctx, r.capsule, `its capsule of ${what}`);
      },
    },
    {
      id: "replay.tampered-output",
      category: "replay",
      clause: "§3.4 replay validates recorded outputs against their hashes",
      title: "a capsule whose recorded tool output was changed (hashes kept) neither verifies nor replays",
      run: async (ctx) => {
        const ref = await reference(ctx, "hello");
        const path = await tampered(ctx, ref.path, "output", "events.jsonl", (text) => text.replace(/"words":(\d+)/, (_m, n: string) => `"words":${Number(n) + 1}`));
        await refusedEverywhere(ctx, path, "a capsule with a changed tool output");
      },
    },
    {
      id: "replay.tampered-tape",
      category: "replay",
      clause: "§3.4 all external state access is captured",
      title: "a capsule whose tape answer was changed (hashes kept) neither verifies nor replays",
      run: async (ctx) => {
        const ref = await reference(ctx, "hello");
        const path = await tampered(ctx, ref.path, "tape", "tape.jsonl", (text) => text.replace(/"ms":(\d+)/, (_m, n: string) => `"ms":${Number(n) + 1000}`));
        await refusedEverywhere(ctx, path, "a capsule with a changed tape answer");
      },
    },
  ];
}
