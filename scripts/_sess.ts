import { openSession } from "../src/engine/engine.ts";
import { defaultEnvironment } from "../src/platform/environment.ts";
import { readPackFiles } from "../src/platform/pack-files.ts";
const env = defaultEnvironment();
const files = await readPackFiles("/work/main/packs/hello");
const pack = JSON.parse(new TextDecoder().decode(files.get("reach.json")!));
pack.manifest.policies.maxToolCalls = 100000; pack.manifest.policies.maxExecutionTime = 1e9;
files.set("reach.json", new TextEncoder().encode(JSON.stringify(pack)));
const s = await openSession(env, { pack: { files }, maxSteps: 100000 } as never);
let t = performance.now();
for (let i = 1; i <= 300; i++) {
  const r = await s.call("wordcount", { text: "a b c" });
  if (!r.ok) { console.log("fail at", i, r); break; }
  if (i % 50 === 0) { console.log(i, ((performance.now() - t) / 50).toFixed(2), "ms/call"); t = performance.now(); }
}
const t0 = performance.now(); const run = await s.close(); console.log("close", (performance.now() - t0).toFixed(0), "ms", run.status);
