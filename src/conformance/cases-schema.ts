/**
 * Schema cases (seed 003 §10.1 "All structures validate against JSON Schema"): what the implementation writes and
 * prints — the capsule index, every event, the run document, its error documents — against the upstream schemas.
 * @module
 */
import { capsuleEvents, entryText } from "./context.ts";
import type { SuiteContext } from "./context.ts";
import { helloRun, mustValidate, notesRun, runPack, tail, upstreamSchema } from "./fixtures.ts";
import type { ConformanceCase } from "./case.ts";

/** A run that fails in a step (a policy violation): its capsule has `policy.violation`, `tool.failed`, `run.failed`. */
export function failedRun(ctx: SuiteContext, name: string): ReturnType<typeof runPack> {
  return runPack(ctx, `fail-${name}`, `packs/${name}`, { unrestricted: true });
}

async function eventsValidate(ctx: SuiteContext, capsule: string | null, what: string): Promise<number> {
  if (capsule === null) throw new Error(`setup: ${what} wrote no capsule`);
  const validate = await upstreamSchema(ctx, "event");
  const events = capsuleEvents(await ctx.capsule(capsule));
  for (const [i, e] of events.entries()) mustValidate(validate, e, `${what}: event ${i} (${String(e.type)})`);
  return events.length;
}

/** Bad invocations every implementation refuses with exit 2 and one error document on stdout. */
function refusals(ctx: SuiteContext): Promise<{ what: string; args: string[] }[]> {
  return ctx.once("refusals", async () => {
    const garbage = ctx.at("inputs", "garbage.capsule.tar.gz");
    await ctx.host.writeFile(garbage, new TextEncoder().encode("this is not a capsule\n"));
    const missing = ctx.at("inputs", "no-such-pack");
    return [
      { what: "run of a missing pack", args: ["run", missing, "--out", ctx.at("out", "refused-run"), "--json"] },
      { what: "run of a pack with specVersion 2.0.0", args: ["run", await ctx.pack("packs/spec_version_fail"), "--out", ctx.at("out", "refused-spec"), "--json"] },
      { what: "replay of a file that is not a capsule", args: ["replay", garbage, "--json"] },
      { what: "verify of a missing file", args: ["verify", ctx.at("inputs", "no-such.capsule.tar.gz"), "--json"] },
    ];
  });
}

/**
 * The schema cases.
 * @returns the cases, in order
 */
export function schemaCases(): ConformanceCase[] {
  return [
    {
      id: "schema.capsule-index",
      category: "schema",
      clause: "§8.1 capsule index",
      title: "capsule.json of a completed run validates against capsule.schema.json",
      run: async (ctx) => {
        const r = await helloRun(ctx);
        const index = JSON.parse(entryText(await ctx.capsule(r.capsule), "capsule.json")) as unknown;
        mustValidate(await upstreamSchema(ctx, "capsule"), index, "capsule.json");
      },
    },
    {
      id: "schema.events-completed",
      category: "schema",
      clause: "§3.2 run events",
      title: "every event of completed runs (one step; five steps and a planner) validates against event.schema.json",
      run: async (ctx) => {
        await eventsValidate(ctx, (await helloRun(ctx)).capsule, "packs/hello");
        await eventsValidate(ctx, (await notesRun(ctx)).capsule, "packs/notes");
      },
    },
    {
      id: "schema.events-failed",
      category: "schema",
      clause: "§3.2 run events, §4.3 audit trail",
      title: "every event of a run halted by a policy violation validates against event.schema.json",
      run: async (ctx) => {
        await eventsValidate(ctx, (await failedRun(ctx, "path_escape_fail")).capsule, "packs/path_escape_fail");
      },
    },
    {
      id: "schema.run-error",
      category: "schema",
      clause: "§7.2 error response structure",
      title: "the error of a failed run (`run --json`) is an ErrorDetails of error.schema.json",
      run: async (ctx) => {
        const r = await failedRun(ctx, "path_escape_fail");
        const error = r.outcome.json?.["error"];
        if (error === undefined) throw new Error(`run --json of packs/path_escape_fail has no "error" (exit ${r.outcome.code})${tail(r.outcome.stderr)}`);
        mustValidate(await upstreamSchema(ctx, "error"), { specVersion: "1.0.0", error }, "the run's error");
      },
    },
    {
      id: "schema.error-documents",
      category: "schema",
      clause: "§7.2 error response structure",
      title: "refused commands exit 2 and print one error document (error.schema.json) with --json",
      run: async (ctx) => {
        const validate = await upstreamSchema(ctx, "error");
        for (const { what, args } of await refusals(ctx)) {
          const o = await ctx.cli(args);
          if (o.code !== 2) throw new Error(`${what}: exit ${o.code}, expected 2${tail(o.stderr)}`);
          if (o.json === null) throw new Error(`${what}: stdout is not exactly one JSON object`);
          mustValidate(validate, o.json, `${what}: the error document`);
        }
      },
    },
  ];
}
