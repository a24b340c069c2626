/**
 * `show`, the HTML report and `diff` on the committed capsules and on a hostile run (`report-build.ts`), the same on
 * Node and Deno: each case's fingerprint is the SHA-256 of what it rendered, so both runtimes must render the very
 * same bytes. The checks: every step is shown; the page is inert (one inline script, a strict CSP, nothing loaded
 * from anywhere); everything from a capsule is escaped (markup and terminal escapes); a damaged capsule is shown
 * with its damage; the state after each step, where the record cannot say, comes from a replay alike; diff finds identical runs, a first divergence, and what else differs.
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { writeArchive } from "../../src/capsule/archive.ts";
import { readRunCapsule } from "../../src/capsule/run-capsule.ts";
import type { RunCapsule } from "../../src/capsule/run-capsule.ts";
import { ReachError } from "../../src/protocol/errors.ts";
import { replayedStates } from "../../src/engine/replay-states.ts";
import { buildRunView, diffLines, diffRuns, layers, renderDiff, renderReport, renderShow, reportCsp, showJson, statesJson, verifyForReport, workspaceDigest } from "../../src/report/mod.ts";
import type { RunSource } from "../../src/report/mod.ts";
import { hostileEntries, HOSTILE } from "./report-build.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

function source(c: RunCapsule): RunSource {
  return { origin: "capsule", entries: c.entries, index: c.index, damaged: c.damaged };
}

function capsuleAt(io: ConformanceIO, folder: string): RunCapsule {
  const file = io.list(`capsules/${folder}`).find((f) => f.endsWith(".capsule.tar.gz"))!;
  return readRunCapsule(io.readBytes(`capsules/${folder}/${file}`));
}

/** The page loads nothing and runs only its own script. */
function checkInert(html: string, label: string): void {
  check(html.includes(`<meta http-equiv="Content-Security-Policy" content="${reportCsp()}">`), `${label}: the CSP meta tag is missing`);
  check((html.match(/<script/g) ?? []).length === 1 && html.includes("<script>\n(function ()"), `${label}: expected exactly one inline script (ours)`);
  check(!/<(script|img|link|iframe|object|embed)[^>]*\s(src|href)="(?!data:|#)/i.test(html), `${label}: an element loads something that is not a data: URL or an anchor`);
  check(!/url\((?!#)/i.test(html) && !/@import/i.test(html), `${label}: a style or SVG attribute refers to something outside the page`);
}

function capsuleRenderCases(io: ConformanceIO): ConformanceCase[] {
  return io.list("capsules").map((folder) => ({
    name: `report/render ${folder}: show, show --json, the HTML page`,
    run: () => {
      const capsule = capsuleAt(io, folder);
      const view = buildRunView(source(capsule));
      const text = renderShow(view, { color: false });
      const full = renderShow(view, { color: false, full: true });
      const json = JSON.stringify(showJson(view, { full: true }));
      const html = renderReport(view, verifyForReport(capsule));
      check(!text.includes("\u001b"), `${folder}: show without colour printed an escape`);
      for (const s of view.steps) {
        check(text.includes(` ${s.stepId} `), `${folder}: show lacks step ${s.stepId}`);
        check(html.includes(`data-step-id="${s.stepId}"`), `${folder}: the report lacks step ${s.stepId}`);
      }
      check(view.runHash === capsule.index.runHash && JSON.parse(json).runHash === view.runHash, `${folder}: wrong run hash`);
      check(html.includes(`<span class="badge ok">verified</span>`), `${folder}: the report does not show the capsule as verified`);
      checkInert(html, folder);
      return sha256Hex(`${text}\0${full}\0${json}\0${html}`);
    },
  }));
}

/** The step-through where the record cannot say (WASI steps' writes): from a replay, the same bytes on both runtimes. */
function replayedStateCases(io: ConformanceIO): ConformanceCase[] {
  const env = { quickjsEngine: io.readBytes("../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm") };
  return [{
    name: "report/step-through from a replay: notes and notes-fork show every step's workspace and memory",
    run: async () => {
      const out: string[] = [];
      for (const folder of ["notes", "notes-fork"]) {
        const capsule = capsuleAt(io, folder);
        const replayed = await replayedStates(capsule, env);
        check(replayed.matches, `${folder}: the replay did not reproduce the run: ${replayed.matches ? "" : replayed.reason}`);
        const view = buildRunView({ ...source(capsule), replayed });
        const unknown = view.states.steps.filter((s) => !s.workspace.known || !s.memory.known).map((s) => s.stepId);
        check(unknown.length === 0, `${folder}: no state after ${unknown.join(", ")}`);
        const last = view.states.steps[view.states.steps.length - 1]!.workspace;
        check(last.known && last.digest === workspaceDigest(view.workspace.after), `${folder}: the last state is not the workspace after`);
        const html = renderReport(view, verifyForReport(capsule));
        check(html.includes("as replaying the capsule left it after this step"), `${folder}: no state is shown as replayed`);
        checkInert(html, folder);
        out.push(html, JSON.stringify(statesJson(view)));
      }
      return sha256Hex(out.join("\0"));
    },
  }];
}

function hostileCases(): ConformanceCase[] {
  return [{
    name: "report/hostile run: markup and terminal escapes from a capsule are shown as text, never obeyed",
    run: () => {
      const view = buildRunView({ origin: "capsule", entries: hostileEntries() });
      const html = renderReport(view, null);
      checkInert(html, "hostile");
      for (const bad of [HOSTILE.script, HOSTILE.img, "window.__pwned = 3</script>", `<b>evil</b>`]) check(!html.includes(bad), `the page holds ${JSON.stringify(bad)} unescaped`);
      check(html.includes("&lt;/script&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;"), "the output's </script> is not shown as text");
      check(html.includes(`src="data:image/png;base64,`), "the PNG artifact is not shown inline");
      const names = [...html.matchAll(/download="([^"]*)"/g)].map((m) => m[1]!);
      check(names.length === 2 && names.every((n) => !/[/\\<>&]/.test(n) && !n.startsWith(".")), `download names are not plain file names: ${JSON.stringify(names)}`);
      const text = renderShow(view, { color: false, full: true });
      const coloured = renderShow(view, { color: true, full: true });
      check(!text.includes("\u001b") && !text.includes("\u202e") && !text.includes("\u0007"), "show printed a raw control character from the capsule");
      check(!coloured.includes("\u001b[2J") && !coloured.includes("\u001b]0;"), "show with colour let a capsule's escape through");
      check(text.includes("\\u{1b}[2J"), "the escape is not shown as \\u{1b}");
      check(view.stops.length === 1 && view.steps[0]!.stop?.fuel === "41", "the watchdog stop is not on the step");
      return sha256Hex(`${html}\0${text}\0${coloured}`);
    },
  }];
}

function damageCases(io: ConformanceIO): ConformanceCase[] {
  return [
    {
      name: "report/damaged capsule: shown with its damage and a failed verification",
      run: () => {
        const capsule = capsuleAt(io, "notes");
        const changed = capsule.entries.get("plan.json")!.slice();
        changed[10] = changed[10]! ^ 1;
        capsule.entries.set("plan.json", changed);
        capsule.entries.set("capsule.json", utf8(canonicalize(capsule.index) + "\n"));
        const damaged = readRunCapsule(writeArchive([...capsule.entries].map(([path, bytes]) => ({ path, bytes }))));
        check(damaged.damaged.length === 1 && damaged.damaged[0]!.path === "plan.json", "the archive reader did not find the changed entry");
        const view = buildRunView(source(damaged));
        const html = renderReport(view, verifyForReport(damaged));
        check(view.warnings.some((w) => w.startsWith("plan.json")), "the damage is not among the warnings");
        check(html.includes(`<span class="badge bad">verification failed</span>`), "the report does not show the failed verification");
        return sha256Hex(html);
      },
    },
    {
      name: "report/no events: REPLAY_CAPSULE_INVALID, never a crash",
      run: () => {
        for (const events of [undefined, new Uint8Array([0x7b, 0x0a]), new TextEncoder().encode("[1]\n")]) {
          const entries = new Map<string, Uint8Array>(events === undefined ? [] : [["events.jsonl", events]]);
          let code = "";
          try {
            buildRunView({ origin: "run-dir", entries });
          } catch (err) {
            code = err instanceof ReachError ? err.code : String(err);
          }
          check(code === "REPLAY_CAPSULE_INVALID", `expected REPLAY_CAPSULE_INVALID, got ${code || "no error"}`);
        }
      },
    },
  ];
}

function diffCases(io: ConformanceIO): ConformanceCase[] {
  return [
    {
      name: "report/diff notes vs notes-signed: identical runs, only the proofs differ",
      run: () => {
        const d = diffRuns(source(capsuleAt(io, "notes")), source(capsuleAt(io, "notes-signed")));
        check(d.identical && d.proofDiffers && d.firstDivergence === null, `expected identical runs with different proofs: ${JSON.stringify(d)}`);
        return sha256Hex(JSON.stringify(d) + renderDiff(d));
      },
    },
    {
      name: "report/diff notes vs hello: the first divergence, and what else differs",
      run: () => {
        const d = diffRuns(source(capsuleAt(io, "notes")), source(capsuleAt(io, "hello")));
        check(!d.identical && d.firstDivergence?.eventIndex === 0 && d.firstDivergence.field.startsWith("payload."), `unexpected first divergence ${JSON.stringify(d.firstDivergence)}`);
        check(d.packFiles.removed.includes("planner.js") && d.packFiles.added.includes("plan.json"), "pack file differences missing");
        check(d.modules.some((m) => m.tool === "checksum" && m.b === null) && d.outputs.length === 6, "module or output differences missing");
        check(d.workspaceAfter.removed.includes("out/index.json"), "workspace differences missing");
        return sha256Hex(JSON.stringify(d) + renderDiff(d));
      },
    },
  ];
}

function unitCases(): ConformanceCase[] {
  return [
    {
      name: "report/line diff and graph layers (a dependency cycle ends)",
      run: () => {
        const d = diffLines("a\nb\nc\n", "a\nc\nd\n")!;
        check(d.map((l) => l.op + l.text).join(",") === " a,-b, c,+d", `unexpected diff ${JSON.stringify(d)}`);
        const l = layers([{ id: "a", dependsOn: ["c"] }, { id: "b", dependsOn: ["a"] }, { id: "c", dependsOn: ["b"] }, { id: "d", dependsOn: [] }]);
        check([...l.values()].every((n) => n >= 0 && n < 4), "a cycle escaped the layer bound");
        const chain = layers([{ id: "x", dependsOn: [] }, { id: "y", dependsOn: ["x", "nope"] }, { id: "z", dependsOn: ["y"] }]);
        check(chain.get("x") === 0 && chain.get("y") === 1 && chain.get("z") === 2, "layers of a chain");
        return `${JSON.stringify(d)}${JSON.stringify([...l])}`;
      },
    },
  ];
}

/**
 * The report cases.
 * @param io file access rooted at conformance/
 * @returns the cases
 */
export function reportCases(io: ConformanceIO): ConformanceCase[] {
  return [...capsuleRenderCases(io), ...replayedStateCases(io), ...hostileCases(), ...damageCases(io), ...diffCases(io), ...unitCases()];
}
