// A tool's output that cannot be recorded as canonical JSON (RFC 8785) — a lone surrogate from a JS tool, a number past
// the double range from Python's JSON text, nesting past the canonical limit — is an output the contract refuses
// (EXEC_OUTPUT_INVALID, soft): not kept, and the run goes on. It used to end the run with "TypeError: canonicalize".
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { busyPack } from "../../tests/support/pack.ts";
import { openSession } from "./engine.ts";
import { replayCapsule } from "./replay.ts";
import { verifyRunCapsule } from "./verify.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };

/** `busyPack`'s tool `t` replaced: it answers what `mode` asks for. */
function oddOutputPack(): Map<string, Uint8Array> {
  const files = busyPack(1);
  const tool = 'export default (i) => i.mode === "surrogate" ? { s: "a\\ud800" } : i.mode === "deep" ? { d: JSON.parse("[".repeat(1500) + "]".repeat(1500)) } : { ok: true };\n';
  files.set("tools/t.js", new TextEncoder().encode(tool));
  return files;
}

describe("a tool output that is not JSON data", () => {
  it("is EXEC_OUTPUT_INVALID, not kept, and the run goes on (JS and Python tools); the capsule verifies and replays", async () => {
    const session = await openSession(env, { pack: { files: oddOutputPack() } });
    for (const [tool, args, why] of [
      ["t", { mode: "surrogate" }, /lone UTF-16 surrogate at \$\.s/],
      ["t", { mode: "deep" }, /nesting deeper than/],
      ["exec_python", { code: "result = [10 ** 400]" }, /Infinity at \$\.result\[0\]/],
    ] as const) {
      const answer = await session.call(tool, args);
      expect(answer, JSON.stringify(args)).toMatchObject({ ok: false, ended: false });
      expect(!answer.ok && `${answer.error.code}: ${answer.error.message}`).toMatch(new RegExp(`^EXEC_OUTPUT_INVALID: tool "${tool}" returned an output that is not JSON data: .*${why.source}`));
    }
    expect(await session.call("t", {})).toMatchObject({ ok: true, output: { ok: true } });
    const run = await session.close();
    expect(run.status).toBe("COMPLETED");
    const capsule = readRunCapsule(run.capsule.bytes);
    expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches, replay.divergence?.message).toBe(true);
  }, 60_000);
});
