/**
 * Policy cases (seed 003 §10.4 "Undeclared access is blocked"; §4): every `packs/*_fail` pack ends with the exit
 * code, error code and violation type of its `expected.json`, leaves the files it names absent from the capsule's
 * workspace, and records its policy violation as an event; a tool whose code ships in the pack but which the
 * manifest does not declare never runs (`conformance/packs/undeclared_tool_code_fail`).
 * @module
 */
import { capsuleEvents, entryText } from "./context.ts";
import type { CliOutcome, SuiteContext } from "./context.ts";
import { helloRun, runPack, tail } from "./fixtures.ts";
import type { PackRun } from "./fixtures.ts";
import type { ConformanceCase } from "./case.ts";

/** What a failing pack's `expected.json` says. */
type Expected = { exitCode: number; code: string; violationType?: string; absent?: string[] };

/** The failing packs of `packs/` and the clause each checks. */
export const FAILING_PACKS: readonly (readonly [string, string])[] = [
  ["undeclared_tool_fail", "§4.2 tool allowlist, §4.3 denial behavior"],
  ["path_escape_fail", "§4.2 resource boundaries, §4.3 no partial effects"],
  ["disallowed_host_fail", "§4.1 allowedHosts, §4.2 resource boundaries"],
  ["hanging_tool_fail", "§4.1 maxExecutionTime, §7.2 EXEC_TOOL_TIMEOUT"],
  ["return_spec_fail", "seed 002 return_spec, §7.1 EXEC_ codes"],
  ["spec_version_fail", "§5.2 unsupported major versions are rejected"],
  ["risk4_fail", "seed 001 §4 plan risk"],
  ["risk3_unapproved_fail", "seed 001 §4 explicit approval"],
  ["too_many_steps_fail", "§4.1 policies (execution constraints), seed 002 Planner: max 10 steps"],
];

/** The pack whose undeclared tool has code. */
const LEAK_PACK = "conformance/packs/undeclared_tool_code_fail";
/** What its undeclared tool returns (written nowhere in the pack, so finding it means the tool ran). */
const LEAK_MARKER = ["UNDECLARED", "TOOL", "RAN"].join("-");

async function expectedOf(ctx: SuiteContext, rel: string): Promise<Expected> {
  const bytes = await ctx.host.readFile(ctx.resource(`${rel}/expected.json`));
  if (bytes === null) throw new Error(`setup: ${rel}/expected.json is not installed`);
  return JSON.parse(new TextDecoder().decode(bytes)) as Expected;
}

function errorOf(o: CliOutcome): Record<string, unknown> | null {
  const e = o.json?.["error"];
  return e !== null && typeof e === "object" ? (e as Record<string, unknown>) : null;
}

/** Exit code, error code and violation type as expected. */
function checkRefusal(rel: string, r: PackRun, want: Expected): void {
  const o = r.outcome;
  const error = errorOf(o);
  const details = (error?.["details"] ?? {}) as Record<string, unknown>;
  const got = `exit ${o.code}${o.timedOut ? " (timed out)" : ""}, error ${String(error?.["code"])}${want.violationType === undefined ? "" : `/${String(details["violationType"])}`}`;
  const wanted = `exit ${want.exitCode}, error ${want.code}${want.violationType === undefined ? "" : `/${want.violationType}`}`;
  if (got !== wanted) throw new Error(`${rel}: ${got}; expected ${wanted}${tail(o.stderr)}`);
}

/** Nothing of a refused invalid pack is written; a failed run's capsule has the expected events and no named files. */
async function checkEffects(ctx: SuiteContext, rel: string, r: PackRun, want: Expected): Promise<void> {
  if (want.exitCode === 2) {
    const left = await ctx.host.listFiles(r.outRoot);
    if (left.length > 0) throw new Error(`${rel}: the refused run wrote ${left[0]} (a refusal before the run writes nothing)`);
    return;
  }
  if (r.outcome.json?.["status"] !== "FAILED") throw new Error(`${rel}: status ${String(r.outcome.json?.["status"])}, expected FAILED`);
  if (r.capsule === null) throw new Error(`${rel}: a failed run still writes its capsule (§3.1 partial state captured); run --json names none`);
  const entries = await ctx.capsule(r.capsule);
  for (const p of want.absent ?? []) {
    const inCapsule = `workspace/after/${p.replace(/^workspace\//, "")}`;
    if (entries.has(inCapsule)) throw new Error(`${rel}: ${inCapsule} is in the capsule; the failed step's effects must be rolled back`);
  }
  if (want.violationType !== undefined) {
    const violations = capsuleEvents(entries).filter((e) => e.type === "policy.violation");
    if (!violations.some((e) => e.payload["violationType"] === want.violationType)) {
      throw new Error(`${rel}: no policy.violation event with violationType ${want.violationType} (found ${violations.length} policy.violation events)`);
    }
  }
}

function failingPackCase(name: string, clause: string): ConformanceCase {
  const rel = `packs/${name}`;
  return {
    id: `policy.${name.replace(/_/g, "-")}`,
    category: "policy",
    clause,
    title: `${rel} ends as its expected.json says, with no partial effects`,
    run: async (ctx) => {
      const want = await expectedOf(ctx, rel);
      const r = await runPack(ctx, `fail-${name}`, rel, { unrestricted: true });
      checkRefusal(rel, r, want);
      await checkEffects(ctx, rel, r, want);
    },
  };
}

function leakRun(ctx: SuiteContext): Promise<PackRun> {
  return runPack(ctx, "undeclared-code", LEAK_PACK, { unrestricted: true });
}

/** The undeclared-tool cases: refused, recorded, never ran. */
function undeclaredCases(): ConformanceCase[] {
  const base = { category: "policy" as const };
  return [
    {
      ...base,
      id: "policy.undeclared-tool-refused",
      clause: "§4.2 tool allowlist, §4.3 structured error",
      title: "a plan step naming a tool the manifest does not declare (its code in the pack) is refused: POLICY_VIOLATION / UNDEFINED_TOOL",
      run: async (ctx) => {
        const r = await leakRun(ctx);
        checkRefusal(LEAK_PACK, r, await expectedOf(ctx, LEAK_PACK));
        const details = (errorOf(r.outcome)?.["details"] ?? {}) as Record<string, unknown>;
        if (!String(details["attemptedCapability"] ?? "").includes("leak")) throw new Error(`the error's details.attemptedCapability is ${JSON.stringify(details["attemptedCapability"])}; it must name the tool "leak" (§4.3 "specific capability attempted")`);
      },
    },
    {
      ...base,
      id: "policy.undeclared-tool-audited",
      clause: "§4.3 audit trail",
      title: "the refusal of the undeclared tool is a policy.violation event (UNDEFINED_TOOL) of the run",
      run: async (ctx) => {
        const r = await leakRun(ctx);
        if (r.capsule === null) throw new Error(`run --json names no capsule (exit ${r.outcome.code})`);
        const events = capsuleEvents(await ctx.capsule(r.capsule));
        if (!events.some((e) => e.type === "policy.violation" && e.payload["violationType"] === "UNDEFINED_TOOL" && String(e.payload["attemptedCapability"] ?? "").includes("leak"))) {
          throw new Error(`no policy.violation event with violationType UNDEFINED_TOOL naming "leak" among the run's ${events.length} events`);
        }
      },
    },
    {
      ...base,
      id: "policy.undeclared-tool-never-ran",
      clause: "§4.3 immediate halt, no partial effects",
      title: "the undeclared tool never ran: no tool.invoked for it, and its output appears nowhere in the run",
      run: async (ctx) => {
        const r = await leakRun(ctx);
        const marker = LEAK_MARKER;
        if (r.outcome.stdout.includes(marker)) throw new Error(`run --json printed the undeclared tool's output (${marker})`);
        if (r.capsule === null) throw new Error(`run --json names no capsule (exit ${r.outcome.code})`);
        const entries = await ctx.capsule(r.capsule);
        if (capsuleEvents(entries).some((e) => e.type === "tool.invoked" && e.payload["toolName"] === "leak")) throw new Error('the run has a tool.invoked event for the undeclared tool "leak"');
        const dec = new TextDecoder();
        for (const [path, bytes] of entries) if (dec.decode(bytes).includes(marker)) throw new Error(`the undeclared tool's output (${marker}) is in the capsule's ${path}`);
      },
    },
  ];
}

/** The capability audit in a capsule's `result.json` (reach-wasm's run record; ADAPTER.md). */
async function auditOf(ctx: SuiteContext, r: PackRun, what: string): Promise<Record<string, { used?: unknown; unused?: unknown } | unknown[]>> {
  if (r.capsule === null) throw new Error(`${what}: run --json names no capsule (exit ${r.outcome.code})`);
  const result = JSON.parse(entryText(await ctx.capsule(r.capsule), "result.json")) as Record<string, unknown>;
  const audit = result["capabilityAudit"];
  if (audit === null || typeof audit !== "object") throw new Error(`${what}: the capsule's result.json has no capabilityAudit`);
  return audit as Record<string, { used?: unknown; unused?: unknown } | unknown[]>;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The post-execution audit: used and unused as the runs show, the undeclared attempt listed. */
function auditCase(): ConformanceCase {
  return {
    id: "policy.capability-audit",
    category: "policy",
    clause: "§4.2 post-execution audit of used vs declared capabilities",
    title: "result.json audits used, unused and attempted-undeclared capabilities (packs/hello, a policy violation, an undeclared tool)",
    run: async (ctx) => {
      const hello = await auditOf(ctx, await helloRun(ctx), "packs/hello");
      const tools = hello["tools"] as { used?: unknown; unused?: unknown };
      if (!same(tools.used, ["wordcount"]) || !same(tools.unused, [])) throw new Error(`packs/hello: tools used ${JSON.stringify(tools.used)}, unused ${JSON.stringify(tools.unused)}; expected ["wordcount"] and []`);
      const escape = await auditOf(ctx, await runPack(ctx, "fail-path_escape_fail", "packs/path_escape_fail", { unrestricted: true }), "packs/path_escape_fail");
      if (!JSON.stringify(escape["undeclared"] ?? []).includes('"RESOURCE_ACCESS"')) throw new Error(`packs/path_escape_fail: undeclared is ${JSON.stringify(escape["undeclared"])}; expected its RESOURCE_ACCESS attempt`);
      const leak = await auditOf(ctx, await leakRun(ctx), LEAK_PACK);
      const undeclared = JSON.stringify(leak["undeclared"] ?? []);
      if (!undeclared.includes('"UNDEFINED_TOOL"') || !undeclared.includes("leak")) throw new Error(`${LEAK_PACK}: undeclared is ${undeclared}; expected the UNDEFINED_TOOL attempt at "leak"`);
      if (JSON.stringify((leak["tools"] as { used?: unknown }).used).includes("leak")) throw new Error(`${LEAK_PACK}: the audit lists "leak" as used`);
    },
  };
}

/** §4.1 dependencies: a vendored one resolves; one that would have to be fetched is refused before the run. */
function dependencyCase(): ConformanceCase {
  return {
    id: "policy.dependencies",
    category: "policy",
    clause: "§4.1 dependencies declared and resolved",
    title: "a pack whose dependency is vendored runs; one whose dependency cannot be resolved is refused (PACK_DEPENDENCY_UNRESOLVED) and writes nothing",
    run: async (ctx) => {
      const ok = await runPack(ctx, "dependency-vendored", "conformance/packs/dependency_vendored");
      if (ok.outcome.code !== 0) throw new Error(`conformance/packs/dependency_vendored: exit ${ok.outcome.code}, expected 0${tail(ok.outcome.stderr)}`);
      const rel = "conformance/packs/dependency_unresolved_fail";
      const want = await expectedOf(ctx, rel);
      const r = await runPack(ctx, "dependency-unresolved", rel);
      checkRefusal(rel, r, want);
      await checkEffects(ctx, rel, r, want);
    },
  };
}

/**
 * The policy cases.
 * @returns the cases, in order
 */
export function policyCases(): ConformanceCase[] {
  return [...FAILING_PACKS.map(([name, clause]) => failingPackCase(name, clause)), ...undeclaredCases(), auditCase(), dependencyCase()];
}
