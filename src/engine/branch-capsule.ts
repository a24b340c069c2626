/**
 * A branched run's capsule read back (`branch.ts`): its `request.json` lineage (`forkedFrom`, `resumedFrom`) and its
 * change files (`fork/<sha256>`) as the {@link Branch} a replay of it asks for, every part checked (a capsule is
 * hostile input).
 * @module
 */
import { isSha256Hex } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { isErrorCode, ReachError } from "../protocol/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";
import type { TapeOutcome } from "../record/mod.ts";
import { BRANCH_FILE_PREFIX } from "./branch.ts";
import type { Branch, BranchChanges, BranchFileRef, BranchLayer, ForkedFrom, ResumedFrom } from "./branch.ts";
import type { CapsuleRequest } from "./capsule.ts";
import { toolBuild } from "./pack.ts";
import type { LoadedPack, LoadPackOptions } from "./pack.ts";
import { parseSeed } from "../determinism/mod.ts";

type Ev = { type: string; payload: Record<string, unknown> };

function invalid(message: string): ReachError {
  return new ReachError("REPLAY_CAPSULE_INVALID", `request.json: ${message}; the capsule is damaged`);
}

/** Whether a value is a seed as `request.json` writes one (decimal, 0..2^64-1). */
function isSeed(v: unknown): v is string {
  try {
    return typeof v === "string" && parseSeed(v) === v;
  } catch {
    return false;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A host call's response as a fork gives it (`--response K=FILE`): the file is the response's JSON object, as the
 * tape records it (`{"response": …}` or `{"error": {code, message}}` outcomes are taken as they are).
 * @param bytes the file
 * @param what how to name it in an error
 * @returns the outcome
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it is not a JSON object
 */
export function answerOf(bytes: Uint8Array, what: string): TapeOutcome {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `${what} is not JSON; give the host call's response as a JSON object`);
  }
  if (!isObject(v)) throw new ReachError("PROTO_INVALID_ARGUMENT", `${what} is not a JSON object; give the host call's response as a JSON object`);
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === "error") {
    const e = v["error"];
    if (!isObject(e) || !isErrorCode(e["code"]) || typeof e["message"] !== "string" || e["message"] === "") throw new ReachError("PROTO_INVALID_ARGUMENT", `${what}: an {"error": …} response needs a known error code and a message`);
    return { error: e as TapeOutcome extends { error: infer E } ? E : never };
  }
  if (keys.length === 1 && keys[0] === "response" && isObject(v["response"])) return { response: v["response"] as JsonObject };
  return { response: v as JsonObject };
}

function fileOf(capsule: RunCapsule, ref: unknown): { ref: BranchFileRef; bytes: Uint8Array } {
  if (!isObject(ref) || typeof ref["sha256"] !== "string" || !isSha256Hex(ref["sha256"]) || !Number.isSafeInteger(ref["size"])) throw invalid("a change file is not {sha256, size}");
  const bytes = capsule.entries.get(`${BRANCH_FILE_PREFIX}${ref["sha256"]}`);
  if (bytes === undefined || sha256Hex(bytes) !== ref["sha256"] || bytes.length !== ref["size"]) throw invalid(`the change file ${BRANCH_FILE_PREFIX}${ref["sha256"]} is missing or does not hash to its name`);
  return { ref: { sha256: ref["sha256"], size: bytes.length }, bytes };
}

/** The steps of a run before `at` (every step whose `run.step.started` precedes `at`'s). */
export function stepsBefore(events: readonly Ev[], at: string | null): Set<string> {
  const before = new Set<string>();
  for (const e of events) {
    if (e.type !== "run.step.started") continue;
    const id = String(e.payload["stepId"]);
    if (id === at) break;
    before.add(id);
  }
  return before;
}

async function forkChanges(capsule: RunCapsule, f: Record<string, unknown>, loaded: LoadedPack, options: LoadPackOptions): Promise<{ changes: BranchChanges; files: Map<string, Uint8Array> }> {
  const c = f["changes"];
  if (!isObject(c)) throw invalid("forkedFrom.changes is not an object");
  const changes: { -readonly [K in keyof BranchChanges]: BranchChanges[K] } = {};
  const files = new Map<string, Uint8Array>();
  if (c["arguments"] !== undefined) {
    if (!isObject(c["arguments"])) throw invalid("forkedFrom.changes.arguments is not an object");
    changes.arguments = c["arguments"] as JsonObject;
  }
  if (Object.hasOwn(c, "input")) changes.input = c["input"] as JsonObject;
  if (c["seed"] !== undefined) {
    if (!isSeed(c["seed"])) throw invalid("forkedFrom.changes.seed is not a decimal seed");
    changes.seed = c["seed"];
  }
  if (c["tools"] !== undefined) {
    if (!Array.isArray(c["tools"])) throw invalid("forkedFrom.changes.tools is not a list");
    const tools = new Map();
    for (const t of c["tools"]) {
      if (!isObject(t) || typeof t["name"] !== "string") throw invalid("a forkedFrom.changes.tools entry has no name");
      const { bytes } = fileOf(capsule, t);
      files.set(t["sha256"] as string, bytes);
      tools.set(t["name"], await toolBuild(loaded, t["name"], bytes, options));
    }
    changes.tools = tools;
  }
  if (c["responses"] !== undefined) {
    if (!Array.isArray(c["responses"])) throw invalid("forkedFrom.changes.responses is not a list");
    const answers = new Map<number, TapeOutcome>();
    for (const r of c["responses"]) {
      if (!isObject(r) || !Number.isSafeInteger(r["call"]) || (r["call"] as number) < 1) throw invalid("a forkedFrom.changes.responses entry has no call number");
      const { bytes } = fileOf(capsule, r);
      files.set(r["sha256"] as string, bytes);
      try {
        answers.set(r["call"] as number, answerOf(bytes, `the response for host call ${String(r["call"])}`));
      } catch (err) {
        throw invalid(`the change file ${BRANCH_FILE_PREFIX}${String(r["sha256"])}: ${(err as Error).message}`);
      }
    }
    changes.answers = answers;
  }
  return { changes, files };
}

/** Most forks of forks a capsule's lineage may nest. */
const MAX_FORK_DEPTH = 64;

/** The layers of a `forkedFrom` (nested: a fork of a fork), the oldest first, with their change files. */
async function forkLayers(capsule: RunCapsule, fork: unknown, recorded: readonly Ev[], loaded: LoadedPack, options: LoadPackOptions): Promise<{ layers: BranchLayer[]; files: Map<string, Uint8Array> }> {
  const layers: BranchLayer[] = [];
  const files = new Map<string, Uint8Array>();
  for (let f = fork, depth = 0; f !== undefined; f = (f as Record<string, unknown>)["forkedFrom"], depth++) {
    if (depth >= MAX_FORK_DEPTH) throw invalid(`forkedFrom nests more than ${MAX_FORK_DEPTH} forks`);
    if (!isObject(f) || typeof f["runHash"] !== "string" || !isSha256Hex(f["runHash"])) throw invalid("forkedFrom has no parent run hash");
    if (typeof f["step"] !== "string" || f["step"] === "") throw invalid("forkedFrom.step is not a step id");
    const layer = await forkChanges(capsule, f, loaded, options);
    for (const [sha, bytes] of layer.files) files.set(sha, bytes);
    layers.unshift({ at: f["step"], before: stepsBefore(recorded, f["step"]), changes: layer.changes });
  }
  return { layers, files };
}

/**
 * The branch a replay of a forked or resumed run asks for, from its capsule (null for any other run).
 * @param capsule the capsule
 * @param request its `request.json`
 * @param recorded its events
 * @param loaded its pack
 * @param options component preparation (a `--tool` build that is a component)
 * @returns the branch (without the parent's tape: the capsule's own tape answers a replay), or null
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when the lineage or a change file is malformed or missing
 */
export async function branchOfCapsule(capsule: RunCapsule, request: CapsuleRequest, recorded: readonly Ev[], loaded: LoadedPack, options: LoadPackOptions = {}): Promise<Branch | null> {
  const fork = request.forkedFrom as unknown;
  const resumed = request.resumedFrom as unknown;
  if (fork === undefined && resumed === undefined) return null;
  if (resumed !== undefined) {
    const r = resumed as ResumedFrom;
    if (!isObject(r) || typeof r.runHash !== "string" || !isSha256Hex(r.runHash) || (r.status !== "ABORTED" && r.status !== "FAILED") || !Array.isArray(r.completedSteps) || r.completedSteps.some((x) => typeof x !== "string")) throw invalid("resumedFrom is malformed");
  }
  const { layers, files } = fork === undefined ? { layers: [], files: new Map<string, Uint8Array>() } : await forkLayers(capsule, fork, recorded, loaded, options);
  const lineage = { ...(fork === undefined ? {} : { forkedFrom: fork as ForkedFrom }), ...(resumed === undefined ? {} : { resumedFrom: resumed as ResumedFrom }) };
  return { lineage, files, layers };
}
