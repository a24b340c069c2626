/**
 * `npm run bench` (fork part; `npx vite-node scripts/bench-fork.ts`): forking a run at the last of its 10 steps
 * against running all 10, and against replaying all 10, measured interleaved in the same process (medians; the
 * machines are shared and noisy, nothing here is asserted by tests). Each step's tool fetches a document from a local
 * server that answers after 20 ms (a network call's latency) and computes a little. A live run waits for the server
 * 10 times; a replay answers every fetch from the tape; a fork plays its 9 steps before the branch point against the
 * parent's tape, as a replay does, and runs the last one live. So the fork should cost about a replay plus one live
 * step, well under a run: the lines print fork/run, and fork/(replay + one live step's share of the run).
 * @module
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { runEngine } from "../src/engine/engine.ts";
import { forkCapsule } from "../src/engine/fork.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { defaultEnvironment } from "../src/host/environment.ts";
import { n, SMOKE } from "./bench/smoke.ts";
import { interleaved } from "./bench/tools.ts";

const STEPS = 10;
const LATENCY_MS = SMOKE ? 1 : 20;
const enc = new TextEncoder();

const server = createServer((_req, res) => setTimeout(() => res.end(JSON.stringify({ title: "a document", body: "x".repeat(2000) })), LATENCY_MS));
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/doc`;

const TOOL = `export default async (input, reach) => {
  const doc = (await reach.http.fetch(input.url)).json();
  let h = 0; for (let i = 0; i < 20000; i++) h = (h * 31 + i + doc.body.length) % 1000003;
  return { step: input.step, tag: input.tag ?? null, h };
}`;
const steps = Array.from({ length: STEPS }, (_, i) => ({ id: `s${i + 1}`, tool: "t", arguments: { url, step: i + 1 }, return_spec: { type: "object" } }));
const files = new Map<string, Uint8Array>([
  ["reach.json", enc.encode(JSON.stringify({
    specVersion: "1.0.0", id: "bench-fork", version: "1.0.0", entrypoint: "plan.json",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "t" }], permissions: ["network"] }, policies: { maxToolCalls: 20, allowedHosts: ["127.0.0.1"], sandbox: { network: "restricted" } } },
    tools: { t: { kind: "js", module: "tools/t.js" } },
  }))],
  ["plan.json", enc.encode(JSON.stringify({ contract_version: "S2-B-05.v1", plan_id: "p", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "bench", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["t"] }, steps, success_criteria: [] }))],
  ["tools/t.js", enc.encode(TOOL)],
]);

const env = defaultEnvironment();
const fetchLive = (u: string | URL | Request, i?: RequestInit) => fetch(u, i);
const run = () => runEngine(env, { pack: { files }, trust: { unrestricted: true }, fetch: fetchLive, parallel: 1 });
try {
  const parent = await run();
  if (parent.status !== "COMPLETED") throw new Error(`the parent run ended ${parent.status}: ${parent.error?.message}`);
  const capsule = readRunCapsule(parent.capsule.bytes);
  const fork = () => forkCapsule(capsule, env, `s${STEPS}`, { arguments: { url, step: STEPS, tag: "forked" } }, { fetch: fetchLive });
  const first = await fork();
  if (first.status !== "COMPLETED" || first.before.length !== STEPS - 1) throw new Error(`the fork ended ${first.status}`);
  const replay = async () => {
    const r = await replayCapsule(capsule, env);
    if (!r.matches) throw new Error(`the replay diverged: ${r.divergence?.message}`);
  };
  const [runUs, replayUs, forkUs] = await interleaved([run, replay, fork], n(1, 0), n(7, 1));
  const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;
  const expected = replayUs! + runUs! / STEPS;
  console.log(`fork at step ${STEPS} of ${STEPS} (each step one fetch answered after ${LATENCY_MS} ms): run ${ms(runUs!)}, replay ${ms(replayUs!)}, fork ${ms(forkUs!)}`);
  console.log(`  fork/run ${(forkUs! / runUs!).toFixed(2)}x; fork/(replay + one live step) ${(forkUs! / expected).toFixed(2)}x (1.00x: the prefix costs what a replay costs)`);
} finally {
  server.close();
}
