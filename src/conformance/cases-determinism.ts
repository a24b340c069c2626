/**
 * Determinism cases (seed 003 §10.2 "Same input produces same hash"; §3.3, §8.2): the same pack, input and seed run
 * twice give the same run hash and the same capsule bytes; a different input gives another run hash; and the hash
 * chain of the implementation's capsule is recomputed here, independently, from its events.
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import { chainProblem, runHashOf, timestampProblem } from "./_chain.ts";
import { capsuleEvents, entryText } from "./context.ts";
import type { SuiteContext } from "./context.ts";
import { completedRun, HELLO_INPUT, helloRun, notesRun } from "./fixtures.ts";
import type { ConformanceCase } from "./case.ts";

async function capsuleBytes(ctx: SuiteContext, path: string): Promise<Uint8Array> {
  const b = await ctx.host.readFile(path);
  if (b === null) throw new Error(`the capsule ${path} named by run --json does not exist`);
  return b;
}

async function sameTwice(ctx: SuiteContext, first: () => Promise<{ runHash: string; capsule: string }>, second: () => Promise<{ runHash: string; capsule: string }>, what: string): Promise<void> {
  const a = await first();
  const b = await second();
  if (a.runHash !== b.runHash) throw new Error(`${what} run twice: run hashes ${a.runHash} and ${b.runHash} differ`);
  const [ba, bb] = [await capsuleBytes(ctx, a.capsule), await capsuleBytes(ctx, b.capsule)];
  if (sha256Hex(ba) !== sha256Hex(bb)) throw new Error(`${what} run twice: the run hashes agree but the capsules differ (${ba.length} and ${bb.length} bytes)`);
}

/**
 * The determinism cases.
 * @returns the cases, in order
 */
export function determinismCases(): ConformanceCase[] {
  return [
    {
      id: "determinism.same-run-hash",
      category: "determinism",
      clause: "§3.3 replay guarantee, §8.2 deterministic export",
      title: "packs/hello run twice with the same input and seed: the same run hash and byte-identical capsules",
      run: (ctx) => sameTwice(ctx, () => helloRun(ctx, "hello-a"), () => helloRun(ctx, "hello-b"), "packs/hello"),
    },
    {
      id: "determinism.same-run-hash-planner",
      category: "determinism",
      clause: "§3.3 replay guarantee, §8.2 deterministic export",
      title: "packs/notes (a planner, five steps in three sandboxes) run twice: the same run hash and capsule bytes",
      run: (ctx) => sameTwice(ctx, () => notesRun(ctx, "notes-a"), () => notesRun(ctx, "notes-b"), "packs/notes"),
    },
    {
      id: "determinism.input-changes-hash",
      category: "determinism",
      clause: "§3.3 the run hash identifies the execution",
      title: "packs/hello with another input gives another run hash",
      run: async (ctx) => {
        const a = await helloRun(ctx);
        const b = await completedRun(ctx, "hello-other-input", "packs/hello", { input: { ...HELLO_INPUT, text: "another input" } });
        if (a.runHash === b.runHash) throw new Error(`two different inputs gave the same run hash ${a.runHash}`);
      },
    },
    {
      id: "determinism.capsule-name",
      category: "determinism",
      clause: "§8.1 naming {runHash}.capsule.tar.gz",
      title: "the capsule is named after the run hash that run --json and capsule.json report",
      run: async (ctx) => {
        const r = await helloRun(ctx);
        const name = r.capsule.split("/").at(-1);
        if (name !== `${r.runHash}.capsule.tar.gz`) throw new Error(`the capsule is named ${String(name)}, expected ${r.runHash}.capsule.tar.gz`);
        const index = JSON.parse(entryText(await ctx.capsule(r.capsule), "capsule.json")) as Record<string, unknown>;
        if (index["runHash"] !== r.runHash) throw new Error(`capsule.json says runHash ${String(index["runHash"])}, run --json says ${r.runHash}`);
      },
    },
    {
      id: "determinism.event-hash",
      category: "determinism",
      clause: "§3.3 payloadHash and eventHash",
      title: "every event's payloadHash, prevEventHash and eventHash recompute from its type, timestamp and payload",
      run: async (ctx) => {
        for (const r of [await helloRun(ctx), await notesRun(ctx)]) {
          const problem = chainProblem(capsuleEvents(await ctx.capsule(r.capsule)));
          if (problem !== null) throw new Error(problem);
        }
      },
    },
    {
      id: "determinism.run-hash",
      category: "determinism",
      clause: "§3.3 runHash",
      title: "the run hash is SHA-256 of the ordered event hashes",
      run: async (ctx) => {
        for (const r of [await helloRun(ctx), await notesRun(ctx)]) {
          const computed = runHashOf(capsuleEvents(await ctx.capsule(r.capsule)));
          if (computed !== r.runHash) throw new Error(`SHA256 of the recorded event hashes is ${computed}; the run reports ${r.runHash}`);
        }
      },
    },
    {
      id: "determinism.timestamps",
      category: "determinism",
      clause: "§3.3 rule 1 timestamp normalization",
      title: "every event timestamp is ISO 8601 UTC with millisecond precision",
      run: async (ctx) => {
        for (const r of [await helloRun(ctx), await notesRun(ctx)]) {
          const problem = timestampProblem(capsuleEvents(await ctx.capsule(r.capsule)));
          if (problem !== null) throw new Error(problem);
        }
      },
    },
  ];
}
