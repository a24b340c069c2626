/**
 * A hostile run for the report cases (`report-cases.ts`): a capsule's entries built in memory whose step ids,
 * descriptions, outputs, host calls, error messages and artifact names carry markup (`</script>`, `<img onerror>`),
 * terminal escapes (ESC [2J, a bidi override) and a path-like artifact name; one artifact is a real PNG, one is HTML.
 * Its events are properly chained (`EventLog`), its tape is a real tape; there is no pack, so verification fails —
 * which the report must show, not hide.
 * @module
 */
import { base64ToBytes } from "../../src/canonical/hex.ts";
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { VirtualClock } from "../../src/determinism/clock.ts";
import { EventLog } from "../../src/ledger/event-log.ts";
import { toJsonlBytes } from "../../src/ledger/jsonl.ts";
import { TapeRecorder } from "../../src/record/tape.ts";

/** The markup and escapes the hostile run carries. */
export const HOSTILE = {
  script: "</script><script>window.__pwned = 1</script>",
  img: `<img src=x onerror="window.__pwned = 2">`,
  esc: "\u001b[2J\u001b[31mred\u001b]0;title\u0007",
  bidi: "\u202eevil",
  artifactName: `../../<b>evil</b>".html`,
} as const;

/** A 1×1 PNG. */
export const PNG_1X1 = base64ToBytes("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==");

const RUN_ID = "00000000-0000-8000-8000-000000000001";
const INVOCATION = "00000000-0000-8000-8000-000000000002";

function artifact(name: string, bytes: Uint8Array, mimeType: string) {
  const path = `artifacts/${INVOCATION}/${name.replace(/[/\\]/g, "_")}`;
  return { info: { artifactId: "00000000-0000-8000-8000-000000000003", name, type: "document", mimeType, path, sizeBytes: bytes.length, sha256: sha256Hex(bytes), createdAt: "1970-01-01T00:00:00.004Z" }, bytes };
}

/**
 * Build the hostile run's entries.
 * @returns capsule entry name → bytes
 */
export function hostileEntries(): Map<string, Uint8Array> {
  const log = new EventLog({ runId: RUN_ID, clock: new VirtualClock() });
  const tape = new TapeRecorder();
  const stepId = `x${HOSTILE.script}`;
  const output = { text: HOSTILE.script, html: HOSTILE.img, terminal: HOSTILE.esc, bidi: HOSTILE.bidi };
  const seq = tape.reserve();
  tape.record(seq, INVOCATION, `log${HOSTILE.esc}`, { level: "info", message: HOSTILE.img }, { response: { echoed: HOSTILE.script } });
  const png = artifact("pixel.png", PNG_1X1, "image/png");
  const page = artifact(HOSTILE.artifactName, utf8(`<html><script>window.__pwned = 3</script></html>`), "text/html");
  log.append("run.started", { runId: RUN_ID, packId: `p${HOSTILE.img}`, packVersion: "1.0.0", specVersion: "1.0.0", seed: "1", epoch: "1970-01-01T00:00:00.000Z", planId: "plan", planHash: "0".repeat(64) });
  log.append("run.step.started", { stepId, stepType: "tool", stepIndex: 0, toolName: "t", description: `${HOSTILE.esc}${HOSTILE.bidi}${HOSTILE.img}` });
  log.append("tool.invoked", { toolName: "t", invocationId: INVOCATION, arguments: { q: HOSTILE.script }, timeoutMs: 1000, stepId });
  log.append("policy.violation", { violationType: "RESOURCE_ACCESS", details: HOSTILE.img, attemptedCapability: HOSTILE.esc, declaredCapabilities: ["t"], stepId });
  log.append("tool.completed", { invocationId: INVOCATION, result: output, outputHash: "1".repeat(64), fuel: 42, hostCalls: { count: 1, hash: "2".repeat(64) }, module: { sha256: "3".repeat(64), metered: "4".repeat(64) } });
  log.append("run.step.completed", { stepId, result: { outputHash: "1".repeat(64) }, artifacts: [png.info, page.info] });
  log.append("run.failed", { runId: RUN_ID, status: "failure", reason: "tool_failed", error: { code: "EXEC_TOOL_FAILED", message: HOSTILE.script, details: {}, recoverable: false }, stops: [{ invocationId: INVOCATION, reason: "watchdog", fuel: 41 }] });
  const entries = new Map<string, Uint8Array>();
  entries.set("events.jsonl", toJsonlBytes(log.events));
  entries.set("tape.jsonl", utf8(tape.toJsonl()));
  entries.set("plan.json", utf8(canonicalize({ plan_id: `plan${HOSTILE.script}`, steps: [{ id: stepId, tool: "t", depends_on: [stepId, "missing"] }] }) + "\n"));
  entries.set("request.json", utf8(canonicalize({ input: { q: HOSTILE.script }, seed: "1" }) + "\n"));
  entries.set("workspace/after/out/a.txt", utf8(`${HOSTILE.script}\n${HOSTILE.esc}\n`));
  entries.set(png.info.path, png.bytes);
  entries.set(page.info.path, page.bytes);
  return entries;
}
