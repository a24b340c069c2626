/**
 * Federation cases (seed 003 §10.5 "Delegation chains validate correctly"; §6) through the implementation's node
 * verbs only: four nodes A, B, C, D on loopback (`node init`, `node trust`); C serves (`node serve
 * --insecure-loopback --json`); A delegates to B, B re-delegates a subset to C, and C runs `packs/hello` for A with
 * the run hash of a local run; a widened scope, a forged signature, an expired link, an unregistered node, a pack
 * outside the scope and a revoked link are each refused with their code and write nothing.
 * @module
 */
import type { CliOutcome, SuiteContext } from "./context.ts";
import { HELLO_INPUT, helloRun, SEED, tail } from "./fixtures.ts";
import type { ConformanceCase } from "./case.ts";

type Node = "A" | "B" | "C" | "D";
/** The nodes, C serving, and the A→B→C chain. */
type Federation = { ids: Record<Node, string>; dirs: Record<Node, string>; aToB: string; bToC: string };

async function ok(ctx: SuiteContext, args: string[], what: string): Promise<CliOutcome> {
  const o = await ctx.cli(args);
  if (o.code !== 0) throw new Error(`setup: ${what}: exit ${o.code}${o.timedOut ? " (timed out)" : ""}${tail(o.stderr)}`);
  return o;
}

/** Make the four nodes, register them, serve C, and delegate A→B→C (once per suite run). */
function federation(ctx: SuiteContext): Promise<Federation> {
  return ctx.once("federation", async () => {
    const names: Node[] = ["A", "B", "C", "D"];
    const dirs = Object.fromEntries(names.map((n) => [n, ctx.at("nodes", n.toLowerCase())])) as Record<Node, string>;
    const ids = {} as Record<Node, string>;
    for (const n of names) {
      const o = await ok(ctx, ["node", "init", "--dir", dirs[n], "--endpoint", `http://127.0.0.1:${await ctx.host.freePort()}`, "--json"], `node init ${n}`);
      const id = o.json?.["nodeId"];
      if (typeof id !== "string") throw new Error(`setup: node init ${n} --json printed no nodeId`);
      ids[n] = id;
    }
    for (const [x, y] of [["A", "B"], ["A", "C"], ["B", "A"], ["B", "C"], ["C", "A"], ["C", "B"], ["D", "C"]] as const) {
      await ok(ctx, ["node", "trust", "--dir", dirs[x], `${dirs[y]}/node.json`], `node trust ${x} ← ${y}`);
    }
    const served = await ctx.serve(["node", "serve", "--dir", dirs.C, "--insecure-loopback", "--json"]);
    if (!served.line.includes(ids.C)) throw new Error(`setup: node serve --json printed ${served.line.slice(0, 200)}, not C's nodeId`);
    const aToB = ctx.at("delegations", "a-to-b.json");
    const bToC = ctx.at("delegations", "b-to-c.json");
    await ok(ctx, ["delegate", "--dir", dirs.A, "--to", ids.B, "--scope", "tool:wordcount,tool:stats", "--expires", "1h", "--out", aToB], "delegate A→B");
    await ok(ctx, ["delegate", "--dir", dirs.B, "--to", ids.C, "--scope", "tool:wordcount", "--expires", "30m", "--parent", aToB, "--out", bToC], "delegate B→C");
    return { ids, dirs, aToB, bToC };
  });
}

/** A delegated run of packs/hello at C from `from` (A unless said), into a fresh --out folder. */
async function runAtC(ctx: SuiteContext, f: Federation, delegation: string, name: string, from: Node = "A"): Promise<CliOutcome & { outRoot: string }> {
  const outRoot = ctx.at("out", `fed-${name}`);
  const o = await ctx.cli(["run", await ctx.pack("packs/hello"), "--on", f.ids.C, "--delegation", delegation, "--dir", f.dirs[from], "--seed", SEED, "--input", await ctx.jsonFile("hello.json", HELLO_INPUT), "--out", outRoot, "--json"]);
  return { ...o, outRoot };
}

/** A delegated run refused with `code` (exit 2, the code in the error document) that wrote nothing. */
async function refused(ctx: SuiteContext, r: CliOutcome & { outRoot: string }, code: string, what: string): Promise<void> {
  const got = (r.json?.["error"] as { code?: unknown } | undefined)?.code;
  if (r.code !== 2 || got !== code) throw new Error(`${what}: exit ${r.code}, error ${String(got)}; expected exit 2, ${code}${tail(r.stderr)}`);
  const left = await ctx.host.listFiles(r.outRoot);
  if (left.length > 0) throw new Error(`${what}: refused, but ${left[0]} was written`);
}

async function delegationFile(ctx: SuiteContext, path: string): Promise<Record<string, unknown>> {
  const bytes = await ctx.host.readFile(path);
  if (bytes === null) throw new Error(`setup: ${path} was not written`);
  return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
}

const base = { category: "federation" as const };

/**
 * The federation cases, in the order they must run (the last one revokes A→B).
 * @returns the cases
 */
export function federationCases(): ConformanceCase[] {
  return [...chainCases(), ...limitCases()];
}

/** A chain A→B→C runs at C; a widened or forged link in it is refused. */
function chainCases(): ConformanceCase[] {
  return [
    {
      ...base,
      id: "federation.chain-run",
      clause: "§6.2 delegation rules 1–4, §6.3 chains validated at each hop",
      title: "C runs packs/hello for A under B's re-delegated subset of A→B, with the run hash of the same run done locally",
      run: async (ctx) => {
        const f = await federation(ctx);
        const r = await runAtC(ctx, f, f.bToC, "chain");
        if (r.code !== 0) throw new Error(`the delegated run: exit ${r.code}${r.timedOut ? " (timed out)" : ""}${tail(r.stderr)}`);
        const local = await helloRun(ctx);
        if (r.json?.["runHash"] !== local.runHash) throw new Error(`the delegated run hash ${String(r.json?.["runHash"])} is not the local run's ${local.runHash}`);
        const capsule = r.json["capsule"];
        if (typeof capsule !== "string" || !(await ctx.host.exists(capsule))) throw new Error("the delegated run wrote no capsule");
      },
    },
    {
      ...base,
      id: "federation.widened-scope",
      clause: "§6.2 rule 2 scope is a subset of the delegator's",
      title: "re-delegating a scope wider than the parent's is refused (FED_DELEGATION_INVALID) and writes nothing",
      run: async (ctx) => {
        const f = await federation(ctx);
        const out = ctx.at("delegations", "widened.json");
        const o = await ctx.cli(["delegate", "--dir", f.dirs.B, "--to", f.ids.C, "--scope", "tool:wordcount,tool:slugify", "--expires", "30m", "--parent", f.aToB, "--out", out, "--json"]);
        const got = (o.json?.["error"] as { code?: unknown } | undefined)?.code;
        if (o.code !== 2 || got !== "FED_DELEGATION_INVALID") throw new Error(`exit ${o.code}, error ${String(got)}; expected exit 2, FED_DELEGATION_INVALID${tail(o.stderr)}`);
        if (await ctx.host.exists(out)) throw new Error("the refused delegation was written");
      },
    },
    {
      ...base,
      id: "federation.forged-signature",
      clause: "§6.2 rule 4 signature verifies against the delegator's key",
      title: "a delegation whose scope was edited after signing is refused at C (FED_SIGNATURE_INVALID) and writes nothing",
      run: async (ctx) => {
        const f = await federation(ctx);
        const doc = await delegationFile(ctx, f.bToC);
        const forged = await ctx.jsonFile("forged-b-to-c.json", { ...doc, scope: ["tool:wordcount", "tool:stats"] });
        await refused(ctx, await runAtC(ctx, f, forged, "forged"), "FED_SIGNATURE_INVALID", "a forged delegation");
      },
    },
  ];
}

/** The limits of a delegation: expiry, registered nodes, scope, revocation (the last case revokes A→B). */
function limitCases(): ConformanceCase[] {
  return [
    {
      ...base,
      id: "federation.expired",
      clause: "§6.2 rule 3 expiration is enforced",
      title: "a delegation past its expiresAt is refused at C (FED_DELEGATION_EXPIRED) and writes nothing",
      run: async (ctx) => {
        const f = await federation(ctx);
        const file = ctx.at("delegations", "a-to-c-short.json");
        await ok(ctx, ["delegate", "--dir", f.dirs.A, "--to", f.ids.C, "--scope", "tool:wordcount", "--expires", "2s", "--out", file], "delegate A→C for 2 s");
        const expiresAt = Date.parse(String((await delegationFile(ctx, file))["expiresAt"]));
        if (Number.isNaN(expiresAt)) throw new Error("the delegation has no expiresAt");
        while (ctx.host.now() < expiresAt + 1500) await ctx.host.sleep(250);
        await refused(ctx, await runAtC(ctx, f, file, "expired"), "FED_DELEGATION_EXPIRED", "an expired delegation");
      },
    },
    {
      ...base,
      id: "federation.unregistered-node",
      clause: "§6.1 public keys registered, §6.3 untrusted nodes",
      title: "a node C has not registered delegating to it is refused (FED_NODE_UNAUTHORIZED) and writes nothing",
      run: async (ctx) => {
        const f = await federation(ctx);
        const file = ctx.at("delegations", "d-to-c.json");
        await ok(ctx, ["delegate", "--dir", f.dirs.D, "--to", f.ids.C, "--scope", "tool:wordcount", "--expires", "1h", "--out", file], "delegate D→C");
        await refused(ctx, await runAtC(ctx, f, file, "unregistered", "D"), "FED_NODE_UNAUTHORIZED", "a run from an unregistered node");
      },
    },
    {
      ...base,
      id: "federation.scope-excludes-pack",
      clause: "§6.2 scope, §4.2 capability enforcement",
      title: "a pack declaring a tool outside the delegated scope is refused at C (POLICY_VIOLATION) and writes nothing",
      run: async (ctx) => {
        const f = await federation(ctx);
        const file = ctx.at("delegations", "a-to-c-stats.json");
        await ok(ctx, ["delegate", "--dir", f.dirs.A, "--to", f.ids.C, "--scope", "tool:stats", "--expires", "1h", "--out", file], "delegate A→C tool:stats");
        await refused(ctx, await runAtC(ctx, f, file, "outside-scope"), "POLICY_VIOLATION", "a pack outside the scope");
      },
    },
    {
      ...base,
      id: "federation.revoked",
      clause: "§6.3 revoked delegations are honoured",
      title: "after A revokes A→B, the chain A→B→C is refused at C (FED_DELEGATION_REVOKED) and writes nothing",
      run: async (ctx) => {
        const f = await federation(ctx);
        await ok(ctx, ["revoke", "--dir", f.dirs.A, f.aToB], "revoke A→B");
        // §6.3 allows 60 s: an implementation that only pulls is asked again until then (reach-wasm pushes at once)
        const until = ctx.host.now() + 60_000;
        for (let attempt = 0; ; attempt++) {
          const r = await runAtC(ctx, f, f.bToC, `revoked-${attempt}`);
          if (r.code !== 0 || ctx.host.now() > until) return await refused(ctx, r, "FED_DELEGATION_REVOKED", "a chain through a revoked link");
          await ctx.host.sleep(2000);
        }
      },
    },
  ];
}
