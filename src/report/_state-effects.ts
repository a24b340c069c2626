/**
 * What each step did to the workspace and the memory store, read from the step's recorded host calls (the tape),
 * without running anything: the writes (`fs.write`, `temp.write`), removals (`fs.remove`) and memory writes
 * (`memory.set`) of a step that committed, in the order it made them, with the bytes each write wrote. A step's
 * effects reach the run only when it completes (seed 003 §4.3 "No Partial Effects"): a failed or unfinished step
 * changed nothing. Where the record cannot say what a step did, the effect is `unknown` with the reason. Internal
 * to `src/report/`; `step-states.ts` puts the effects together.
 * @module
 */
import { base64ToBytes, canonicalize, sha256Hex } from "../canonical/mod.ts";
import type { TapeRecord } from "../record/mod.ts";
import { normalizeWorkspacePath } from "../sandbox/mod.ts";
import { get, num, obj, str } from "./_json.ts";
import type { StepView } from "./_steps.ts";

/** One change to the workspace. */
export type FsChange = { op: "write"; path: string; bytes: Uint8Array } | { op: "remove"; path: string };

/** One recorded memory call of a step (reads are kept to check the reconstruction against what the tool saw). */
export type MemoryCall = { op: "set"; key: string; text: string } | { op: "get"; key: string; found: boolean; text: string | null };

/** What a step did to one part of the run's state. */
export type Effect<T> = { known: true; changes: T[] } | { known: false; reason: string };

/** A step's effects on the workspace and on the memory store. */
export type StepEffects = { workspace: Effect<FsChange>; memory: Effect<MemoryCall> };

/** What effects are read with. */
export type EffectContext = {
  /** Blobs by SHA-256 (`blobs/<sha256>`). */
  blobs: ReadonlyMap<string, Uint8Array>;
  /** Whether WASI tools had the workspace preopened (the run's `filesystem` permission; true when unknown). */
  wasiFilesystem: boolean;
};

const NONE: StepEffects = { workspace: { known: true, changes: [] }, memory: { known: true, changes: [] } };
const MUTATING = new Set(["fs.write", "fs.remove", "temp.write", "memory.set"]);

/**
 * Whether a tape record changed (or may have changed) the workspace or the memory store.
 * @param r the record
 * @returns true for a write, removal or memory write that succeeded
 */
export function isMutation(r: TapeRecord): boolean {
  return MUTATING.has(r.op) && r.response !== undefined;
}

/**
 * The effects of one step.
 * @param s the step (with its tape records)
 * @param ctx blobs, and whether WASI tools could write the workspace
 * @returns what the step did to the workspace and the memory store
 */
export function stepEffects(s: StepView, ctx: EffectContext): StepEffects {
  if (s.type !== "tool" || s.status !== "completed") return NONE;
  const count = s.hostCalls?.count ?? 0;
  if (count !== s.tape.length) {
    const reason = `the capsule holds ${s.tape.length} of the step's ${count} recorded host calls`;
    return { workspace: { known: false, reason }, memory: { known: false, reason } };
  }
  const memory = memoryCalls(s.tape);
  if (ctx.wasiFilesystem && (s.kind === "wasm" || s.kind === null)) {
    const reason = s.kind === "wasm"
      ? "a WASI tool writes workspace files through its preopened directories, not through recorded host calls, so the record does not say what this step wrote"
      : "the tool's kind is not known (the capsule holds no pack manifest naming it), so whether it wrote files without host calls cannot be told";
    return { workspace: { known: false, reason }, memory };
  }
  return { workspace: fsChanges(s.tape, ctx.blobs), memory };
}

function fsChanges(tape: readonly TapeRecord[], blobs: ReadonlyMap<string, Uint8Array>): Effect<FsChange> {
  const changes: FsChange[] = [];
  for (const r of tape) {
    if (r.response === undefined) continue; // a refused or failed call changed nothing
    try {
      if (r.op === "fs.write") {
        const path = normalizeWorkspacePath(String(r.request["path"]));
        const bytes = bodyBytes(r.request, blobs);
        if (typeof bytes === "string") return { known: false, reason: `host call ${r.seq} (fs.write ${JSON.stringify(path)}): ${bytes}` };
        if (num(r.response, "size") !== bytes.length) return { known: false, reason: `host call ${r.seq} (fs.write): the recorded size does not match the recorded bytes` };
        changes.push({ op: "write", path, bytes });
      } else if (r.op === "temp.write") {
        const path = `temp/${normalizeWorkspacePath(String(r.request["name"]))}`;
        const bytes = bodyBytes(r.request, blobs);
        if (typeof bytes === "string") return { known: false, reason: `host call ${r.seq} (temp.write): ${bytes}` };
        if (str(r.response, "path") !== path) return { known: false, reason: `host call ${r.seq} (temp.write): the recorded path does not match the request` };
        changes.push({ op: "write", path, bytes });
      } else if (r.op === "fs.remove") {
        changes.push({ op: "remove", path: normalizeWorkspacePath(String(r.request["path"]), { directory: true }) });
      }
    } catch {
      return { known: false, reason: `host call ${r.seq} (${r.op}) names a path the workspace would refuse; the record is not consistent` };
    }
  }
  return { known: true, changes };
}

/** The bytes of a write request (`data` base64 or a blob reference, or `text`), or why they are not known. */
function bodyBytes(request: Record<string, unknown>, blobs: ReadonlyMap<string, Uint8Array>): Uint8Array | string {
  const text = request["text"];
  if (typeof text === "string") return new TextEncoder().encode(text);
  const data = request["data"];
  if (typeof data === "string") {
    try {
      return base64ToBytes(data);
    } catch {
      return "the recorded data is not base64";
    }
  }
  const sha = str(obj(data), "blob");
  if (sha === null) return "the recorded request holds no bytes";
  const bytes = blobs.get(sha);
  if (bytes === undefined) return `blob ${sha.slice(0, 12)}… is not in the capsule (redacted or missing), so the bytes written are not known`;
  if (sha256Hex(bytes) !== sha) return `blob ${sha.slice(0, 12)}… does not hash to its name`;
  return bytes;
}

function memoryCalls(tape: readonly TapeRecord[]): Effect<MemoryCall> {
  const calls: MemoryCall[] = [];
  for (const r of tape) {
    if (r.response === undefined || (r.op !== "memory.set" && r.op !== "memory.get")) continue;
    const key = str(r.request, "key");
    if (key === null) return { known: false, reason: `host call ${r.seq} (${r.op}) has no key` };
    try {
      if (r.op === "memory.set") {
        if (!Object.hasOwn(r.request, "value")) return { known: false, reason: `host call ${r.seq} (memory.set) has no value` };
        calls.push({ op: "set", key, text: canonicalize(r.request["value"]) });
      } else {
        const found = get(r.response, "found") === true;
        calls.push({ op: "get", key, found, text: found ? canonicalize(get(r.response, "value")) : null });
      }
    } catch {
      return { known: false, reason: `host call ${r.seq} (${r.op}) holds a value that is not canonical JSON` };
    }
  }
  return { known: true, changes: calls };
}
