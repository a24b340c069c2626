/**
 * The committed capsules (`conformance/capsules/<name>/<runHash>.capsule.tar.gz`, written by `npm run capsules`) are
 * replayed by both runtimes (seed 003 §9.1 "Backward Compatibility"): each must verify, replay to its recorded run
 * hash, and rebuild into the same capsule entries — for unsigned capsules, into the very same bytes, which is how the
 * Node and Deno runners prove that their capsules are byte-identical. A redacted capsule whose redacted step made host
 * calls replays up to that step and reports `REPLAY_REDACTED` naming it (conformance/HASHING.md "Redaction").
 * @module
 */
import { sha256Hex } from "../../src/canonical/sha256.ts";
import { readRunCapsule } from "../../src/capsule/run-capsule.ts";
import { verifyRunCapsule } from "../../src/engine/verify.ts";
import { replayCapsule } from "../../src/engine/replay.ts";
import { redactCapsule } from "../../src/engine/redact.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

/**
 * One case per committed capsule.
 * @param io file access rooted at conformance/
 * @returns the cases
 */
export function capsuleCases(io: ConformanceIO): ConformanceCase[] {
  const engine = io.readBytes("../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm");
  const cases: ConformanceCase[] = [];
  for (const folder of io.list("capsules")) {
    for (const file of io.list(`capsules/${folder}`).filter((f) => f.endsWith(".capsule.tar.gz"))) {
      cases.push({
        name: `capsule ${folder}/${file.slice(0, 16)}…: verifies, replays to its run hash, rebuilds the same capsule`,
        run: async () => {
          const bytes = io.readBytes(`capsules/${folder}/${file}`);
          const capsule = readRunCapsule(bytes);
          check(`${capsule.index.runHash}.capsule.tar.gz` === file, `${file}: capsule.json says run ${capsule.index.runHash}`);
          const v = verifyRunCapsule(capsule);
          check(v.valid, `verify failed: ${v.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.message}`).join("; ")}`);
          const report = await replayCapsule(capsule, { quickjsEngine: engine, pythonEngine: async () => io.readBytes("../node_modules/@micropython/micropython-webassembly-pyscript/micropython.wasm") });
          // a capsule whose redacted step made host calls replays up to that step and names it (never a verdict)
          const stop = report.redacted;
          if (stop !== undefined) {
            check(capsule.index.redacted !== undefined && report.divergence === null && !report.matches, "a capsule that is not redacted stopped as redacted");
            check(stop.step !== undefined && capsule.index.redacted!.steps.includes(stop.step) && (stop.replayedEvents ?? 0) > 0, `the replay stopped at ${stop.step ?? "(no step)"}, not a redacted step: ${stop.message}`);
            return `redacted:${capsule.index.runHash}:${stop.step}:${stop.replayedEvents}:${stop.entries.join(",")}`;
          }
          check(report.matches, `replay diverged: ${report.divergence?.message ?? `run hash ${report.runHash}`}`);
          check(report.rebuilt !== null && report.rebuilt.indexMatches, "the rebuilt capsule's entries differ from the recorded ones");
          // a redacted capsule (HASHING.md "Redaction") rebuilds into the whole run: redacted alike, the same bytes
          const r = capsule.index.redacted;
          const whole = r === undefined ? report.rebuilt.bytes : redactCapsule(readRunCapsule(report.rebuilt.bytes), {
            steps: r.steps, entries: r.entries.filter((e) => e.by === "entry").map((e) => e.path),
            blobs: r.entries.filter((e) => e.by === "blob").map((e) => e.path.slice("blobs/".length)) }).bytes;
          const rebuilt = sha256Hex(whole);
          if (capsule.index.proof === undefined) check(rebuilt === sha256Hex(bytes), `the rebuilt capsule is ${rebuilt}, the committed one ${sha256Hex(bytes)}`);
          return `${report.runHash}:${rebuilt}`;
        },
      });
    }
  }
  return cases;
}
