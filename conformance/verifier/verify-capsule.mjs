#!/usr/bin/env node
// A standalone verifier of reach-wasm capsules, for third parties: no reach-wasm code, only @noble/hashes and
// @noble/ed25519 (plus Node's built-in gunzip). About 150 lines, following conformance/HASHING.md:
//   payloadHash = hex(SHA-256(JCS(payload)))                        JCS = RFC 8785
//   eventHash   = hex(SHA-256(type + timestamp + payloadHash + prevEventHash)), prev of the first = 64 zeros
//   runHash     = hex(SHA-256(eventHash_1 + … + eventHash_n))
// and, when the capsule holds proof.json, the Ed25519 run proof over JCS({type:"reach-wasm/run-proof", runHash,
// capsuleIndexDigest}) and each step proof over JCS({type:"reach-wasm/step-proof", runHash, stepId, firstEventIndex,
// lastEventIndex, firstEventHash, lastEventHash}); capsuleIndexDigest = SHA-256(JCS(capsule.json without "proof",
// without the proof.json entry and without "proof" in manifest.contents)).
// The run hash commits to every other entry: the terminal event's payload.contents is
//   contents = hex(SHA-256(⨁ over body entries in byte order of path: path + "\0" + hex(SHA-256(bytes)) + "\0" + size + "\n"))
// where the body is every entry but capsule.json, events.jsonl, proof.json, federation.jsonl and run.json; each
// tool.completed / tool.failed commits hostCalls = {count, hash}: the hash of that invocation's tape.jsonl lines; and
// run.json (the run document, which names the run hash) is derived again from the events and committed entries.
// It reads the archive as GNU tar (ustar, pax, gnu), bsdtar or Python's tarfile write it, not only reach-wasm's own form.

// Value commitments: a tool.invoked with argumentsSalt and a tool.completed with resultSalt are hashed without the
// value and its salt; argumentsCommit / outputHash = hex(SHA-256("reach-wasm/value/v1\0" + salt + "\0" + JCS(value))).
// A salted run's tape.jsonl lines hold only {invocationId, op, requestCommit, responseCommit, seq}; each call's values
// are tape/<seq>.json = {request, requestSalt, response | error, responseSalt}, checked against those commitments.
// A redacted capsule (capsule.json "redacted") lacks the values of redacted.steps and the entries of redacted.entries
// (their digests stay in capsule.json files and so in contents); redacted.rewritten gives events.jsonl's new digest.
// Usage: node conformance/verifier/verify-capsule.mjs X.capsule.tar.gz   → exit 0 valid, 1 invalid, 2 unreadable.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import * as ed from "@noble/ed25519";

ed.hashes.sha512 = sha512;
const enc = new TextEncoder();
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const unhex = (s) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));
const sha = (data) => hex(sha256(typeof data === "string" ? enc.encode(data) : data));

/** RFC 8785: sorted keys (UTF-16 code units), ES6 number form, JSON string escaping. */
export function jcs(v) {
  if (v === null || typeof v === "boolean") return JSON.stringify(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error("JCS: not a finite number");
    return JSON.stringify(v);
  }
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(",")}]`;
  const keys = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(",")}}`;
}

/**
 * Entries of a tar archive as GNU tar (ustar, pax, gnu), bsdtar or Python's tarfile write it: regular files, with
 * pax `path`/`size` (type x; global g headers ignored), GNU long names (type L), a leading "./" and directory entries
 * (dropped). Links, devices, FIFOs, other types, unsafe paths and a file given twice are refused.
 */
function untar(tar) {
  const files = new Map();
  const text = (b) => new TextDecoder().decode(b).replace(/\0.*$/s, "");
  let next = {};
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((x) => x === 0)) break;
    const prefix = text(h.subarray(345, 500));
    const name = next.path ?? (prefix === "" || text(h.subarray(257, 263)) !== "ustar" ? text(h.subarray(0, 100)) : `${prefix}/${text(h.subarray(0, 100))}`);
    const size = next.size ?? parseInt(text(h.subarray(124, 136)).trim() || "0", 8);
    const type = String.fromCharCode(h[156]);
    const data = tar.subarray(at + 512, at + 512 + size);
    if (!Number.isSafeInteger(size) || size < 0 || data.length !== size) throw new Error(`a truncated or malformed header at byte ${at}`);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === "x" || type === "g" || type === "L") {
      if (type === "L") next = { ...next, path: text(data) };
      if (type === "x") next = { ...next, ...paxRecords(data) };
      continue;
    }
    next = {};
    const path = name.replace(/^(\.\/)+/, "").replace(/\/$/, "");
    if (type === "5" || path === "" || path === ".") continue;
    if ((type !== "0" && type !== "\0") || path.startsWith("/") || path.split("/").some((p) => p === ".." || p === "." || p === "")) throw new Error(`refusing entry ${JSON.stringify(path)} (type ${JSON.stringify(type)})`);
    if (files.has(path)) throw new Error(`refusing entry ${JSON.stringify(path)}: given twice`);
    files.set(path, data);
  }
  return files;
}

/** The `path` and `size` records of a pax extended header ("LEN key=value\n" records). */
function paxRecords(data) {
  const out = {};
  const bytes = new TextDecoder().decode(data);
  for (let at = 0; at < bytes.length; ) {
    const space = bytes.indexOf(" ", at);
    const len = parseInt(bytes.slice(at, space), 10);
    if (space < 0 || !(len > 0)) throw new Error("a malformed pax header");
    const record = new TextDecoder().decode(data.subarray(at, at + len)).slice(space - at + 1, -1);
    const eq = record.indexOf("=");
    const key = record.slice(0, eq);
    if (key === "path") out.path = record.slice(eq + 1);
    if (key === "size") out.size = parseInt(record.slice(eq + 1), 10);
    if (key === "linkpath") throw new Error("refusing a pax linkpath (a link)");
    at += len;
  }
  return out;
}

export function verifyCapsule(bytes) {
  const files = untar(gunzipSync(bytes, { maxOutputLength: 1 << 30 }));
  stepOfInvocation.clear();
  const checks = [];
  const check = (name, ok, message) => checks.push({ name, ok, message });
  const index = JSON.parse(new TextDecoder().decode(files.get("capsule.json")));
  const red = index.redacted ?? { steps: [], entries: [], rewritten: [] };
  const absent = new Set(red.entries.map((r) => r.path));
  const rewritten = new Map(red.rewritten.map((r) => [r.path, r.sha256]));
  for (const f of index.files) {
    if (absent.has(f.path)) check(`file ${f.path}`, !files.has(f.path), "redacted");
    else check(`file ${f.path}`, files.has(f.path) && sha(files.get(f.path)) === (rewritten.get(f.path) ?? f.sha256), "matches capsule.json");
  }

  const lines = new TextDecoder().decode(files.get("events.jsonl")).split("\n").filter((l) => l !== "");
  let prev = "0".repeat(64);
  const hashes = [];
  let broken = -1;
  lines.forEach((line, i) => {
    const e = JSON.parse(line);
    const payloadHash = sha(jcs(hashedPayload(e)));
    valueChecks(e, i, red.steps, check);
    const eventHash = sha(e.type + e.timestamp + payloadHash + prev);
    if (broken < 0 && (e.payloadHash !== payloadHash || e.prevEventHash !== prev || e.eventHash !== eventHash || e.sequence !== i)) broken = i;
    hashes.push(e.eventHash);
    prev = e.eventHash;
  });
  check("events.chain", broken < 0, broken < 0 ? `${lines.length} events chained` : `event ${broken} is broken`);
  const runHash = sha(hashes.join(""));
  check("events.runHash", runHash === index.runHash, `run hash ${runHash}`);

  // Every other entry is committed by the run hash: the body's digest in the terminal event's payload.contents.
  const events = lines.map((l) => JSON.parse(l));
  const body = [...files.keys()].filter((p) => !["capsule.json", "events.jsonl", "proof.json", "federation.jsonl", "run.json"].includes(p)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const gone = index.files.filter((f) => absent.has(f.path) && !["run.json"].includes(f.path));
  const lineOf = (p) => (files.has(p) ? `${p}\0${sha(files.get(p))}\0${files.get(p).length}\n` : `${p}\0${gone.find((f) => f.path === p).sha256}\0${gone.find((f) => f.path === p).size}\n`);
  body.push(...gone.map((f) => f.path));
  body.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const contents = sha(body.map(lineOf).join(""));
  const committed = events.at(-1)?.payload?.contents;
  check("contents", committed === contents, committed === contents ? `${body.length} entries committed by the run hash` : `the entries hash to ${contents}, the terminal event commits ${committed}`);
  // Each invocation's host calls: the hash of its tape lines.
  const tape = new TextDecoder().decode(files.get("tape.jsonl") ?? new Uint8Array()).split("\n").filter((l) => l !== "");
  for (const e of events) {
    const hc = e.payload?.hostCalls;
    if ((e.type !== "tool.completed" && e.type !== "tool.failed") || hc === undefined) continue;
    const mine = tape.filter((l) => JSON.parse(l).invocationId === e.payload.invocationId);
    const h = sha(mine.map((l) => `${l}\n`).join(""));
    check(`tape ${e.payload.invocationId}`, hc.count === mine.length && hc.hash === h, `${mine.length} host calls`);
  }
  // A committed tape (lines with requestCommit): each call's tape/<seq>.json against its commitments, or redacted.
  for (const line of tape.map((l) => JSON.parse(l)).filter((r) => "requestCommit" in r)) {
    const path = `tape/${line.seq}.json`;
    if (!files.has(path)) { check(path, absent.has(path), "redacted"); continue; }
    const v = JSON.parse(new TextDecoder().decode(files.get(path)));
    const commit = (salt, x) => sha(`reach-wasm/value/v1\0${salt}\0${jcs(x)}`);
    check(path, commit(v.requestSalt, v.request) === line.requestCommit && commit(v.responseSalt, v.response ?? v.error) === line.responseCommit, "matches its salted commitments");
  }
  if (absent.has("run.json")) check("run.json", true, "redacted (derived from the events and committed entries)");
  else if (files.has("run.json")) runDocChecks(files, events, runHash, check);
  else check("run.json", ![...files.keys()].some((p) => p.startsWith("TASK_")), "absent (a capsule made before run.json existed)");

  const proofBytes = files.get("proof.json");
  if (proofBytes !== undefined) {
    const proof = JSON.parse(new TextDecoder().decode(proofBytes));
    const { proof: _omit, redacted: _red, ...rest } = index;
    const digest = sha(jcs({ ...rest, files: rest.files.filter((f) => f.path !== "proof.json"), manifest: { ...rest.manifest, contents: rest.manifest.contents.filter((c) => c !== "proof") } }));
    const pk = unhex(proof.publicKey);
    const verify = (sig, msg) => ed.verify(unhex(sig), enc.encode(jcs(msg)), pk, { zip215: false });
    check("proof.run", proof.run.runHash === runHash && proof.run.capsuleIndexDigest === digest &&
      verify(proof.run.signature, { type: "reach-wasm/run-proof", runHash, capsuleIndexDigest: digest }), `signed by ${proof.publicKey}`);
    for (const s of proof.steps) {
      const { signature, ...statement } = s;
      const inRun = hashes[s.firstEventIndex] === s.firstEventHash && hashes[s.lastEventIndex] === s.lastEventHash;
      check(`proof.step ${s.stepId}`, inRun && verify(signature, { type: "reach-wasm/step-proof", runHash, ...statement }), `events ${s.firstEventIndex}..${s.lastEventIndex}`);
    }
  }
  if (index.redacted !== undefined) check("redaction", true, `redacted: steps [${red.steps.join(", ")}], entries [${[...absent].join(", ")}]`);
  return { valid: checks.every((c) => c.ok), runHash, checks, ...(index.redacted === undefined ? {} : { redacted: index.redacted }) };
}

/** The payload the chain hashes: a salted value (and its salt) is left out; its commitment stays in the payload. */
function hashedPayload(e) {
  const field = { "tool.invoked": ["arguments", "argumentsSalt"], "tool.completed": ["result", "resultSalt"] }[e.type];
  if (field === undefined || !(field[1] in e.payload)) return e.payload;
  const { [field[0]]: _v, [field[1]]: _s, ...rest } = e.payload;
  return rest;
}

/** A step's arguments and output against their salted commitments; absent only for a step listed as redacted. */
const stepOfInvocation = new Map();
function valueChecks(e, i, redactedSteps, check) {
  const p = e.payload;
  const commit = (salt, v) => sha(`reach-wasm/value/v1\0${salt}\0${jcs(v)}`);
  if (e.type === "tool.invoked") stepOfInvocation.set(p.invocationId, p.stepId);
  const [value, salt, committed] = e.type === "tool.invoked" && "argumentsCommit" in p ? [p.arguments, p.argumentsSalt, p.argumentsCommit]
    : e.type === "tool.completed" && ("resultSalt" in p || !("result" in p)) ? [p.result, p.resultSalt, p.outputHash] : [null, null, null];
  if (committed === null) return;
  const step = stepOfInvocation.get(p.invocationId);
  if (value === undefined && salt === undefined) check(`value ${i}`, redactedSteps.includes(step), `step ${step}: redacted`);
  else check(`value ${i}`, typeof salt === "string" && commit(salt, value) === committed, `step ${step}: matches its salted commitment`);
}

/** run.json: every field equals what the events and the committed entries imply (src/engine/run-document.ts). */
function runDocChecks(files, events, runHash, check) {
  const json = (p) => (files.has(p) ? JSON.parse(new TextDecoder().decode(files.get(p))) : undefined);
  const doc = json("run.json");
  const first = events[0], last = events.at(-1), started = first.payload;
  const state = { "run.completed": "COMPLETED", "run.aborted": "ABORTED" }[last.type] ?? "FAILED";
  const code = typeof last.payload.error?.code === "string" ? last.payload.error.code : null;
  const outcome = (st) => st === "COMPLETED" ? ["completed", null] : st === "ABORTED" ? ["cancelled", "CANCELLED"]
    : ["EXEC_TOOL_TIMEOUT", "POLICY_TIMEOUT_EXCEEDED", "PROTO_TIMEOUT"].includes(code) ? ["timeout", "TIMEOUT_ERROR"]
    : /^(PLAN|PACK_)/.test(code ?? "") ? ["failed", "PLANNING_ERROR"] : ["failed", "EXECUTION_ERROR"];
  const phases = json("EXECUTION_HEADER.json")?.phases ?? [];
  const live = { PENDING: "queued", PREPARING: "planning", EXECUTING: "running" };
  const plan = json("plan.json") ?? null, request = json("request.json") ?? {}, pack = json("pack/reach.json") ?? {};
  const stepStarts = events.filter((e) => e.type === "run.step.started");
  const ran = stepStarts.filter((e) => e.payload.stepType === "tool").map((e) => String(e.payload.stepId));
  // a plan's steps, or seed 001's tasks
  const planIds = Array.isArray(plan?.steps) ? plan.steps.map((s) => String(s?.id)) : Array.isArray(plan?.tasks) ? plan.tasks.map((t) => String(t?.task_id)) : [];
  const order = [...ran, ...planIds.filter((id) => !ran.includes(id))];
  // run.json's evidence is seed 004's: a TASK file's seed 001 fields left out, its status in seed 004's words
  const evidenceOf = (task) => {
    if (task === null || typeof task !== "object" || !Object.hasOwn(task, "task_id")) return task;
    const out = {};
    for (const [k, v] of Object.entries(task)) {
      if (["contract_version", "plan_id", "task_id", "started_at_utc", "ended_at_utc"].includes(k)) continue;
      out[k] = k === "status" ? ({ SUCCESS: "completed", FAILED: "failed", SKIPPED: "skipped" }[v] ?? v) : v;
    }
    return out;
  };
  const artifacts = events.filter((e) => e.type === "run.step.completed").flatMap((e) => e.payload.artifacts ?? []);
  const input = request.input ?? {};
  const ms = (t) => Date.parse(t);
  const epoch = String(started.epoch ?? first.timestamp);
  const uuid = (b) => { b[6] = (b[6] & 0x0f) | 0x80; b[8] = (b[8] & 0x3f) | 0x80; const h = hex(b.subarray(0, 16)); return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`; };
  const expected = {
    specVersion: "1.0.0", runId: String(started.runId ?? ""), state, createdAt: epoch, startedAt: first.timestamp, completedAt: last.timestamp,
    updatedAt: last.timestamp, runHash,
    packMetadata: { id: String(started.packId ?? ""), version: String(started.packVersion ?? ""), specVersion: String(started.specVersion ?? ""), hash: String(started.packDigest ?? "") },
    capabilities: { tools: (started.capabilities?.tools ?? []).map((name) => ({ name })), permissions: started.capabilities?.permissions ?? [] },
    result: { status: { COMPLETED: "success", ABORTED: "aborted" }[state] ?? "failure", artifacts: artifacts.map((a) => ({ name: a.name, hash: a.sha256, uri: a.path })) },
    phases, statusHistory: phases.flatMap((p) => live[p] ?? (p === "COMPLETED" ? ["verifying", "completed"] : [outcome(p)[0]])),
    requestId: typeof request.requestId === "string" ? request.requestId : uuid(sha256(enc.encode(jcs(["reach-wasm/request", String(started.runId ?? "")])))),
    status: outcome(state)[0], currentStepIndex: Number(stepStarts.at(-1)?.payload.stepIndex ?? 0), totalSteps: planIds.length,
    replansCount: stepStarts.filter((e) => e.payload.stepType === "replan").length,
    query: typeof input === "string" ? input : typeof input?.query === "string" ? input.query : pack.run?.query ?? "",
    intent: started.intent ?? null, plan, evidence: order.filter((id) => files.has(`TASK_${id}.json`)).map((id) => evidenceOf(json(`TASK_${id}.json`))), artifacts, clock: "virtual",
    virtualTime: { epoch, startedAtOffsetMs: ms(first.timestamp) - ms(epoch), updatedAtOffsetMs: ms(last.timestamp) - ms(epoch), completedAtOffsetMs: ms(last.timestamp) - ms(epoch) },
    ...(last.payload.error === undefined ? {} : { error: String(last.payload.error.message ?? ""), errorCode: code, errorType: outcome(state)[1] }),
  };
  const keys = [...new Set([...Object.keys(expected), ...Object.keys(doc)])].sort();
  const wrong = keys.filter((k) => !(k in doc) || !(k in expected) || jcs(doc[k]) !== jcs(expected[k]));
  check("run.json", wrong.length === 0, wrong.length === 0 ? `${keys.length} fields follow from the events` : `fields ${wrong.join(", ")} differ from what the events imply`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let result;
  try {
    result = verifyCapsule(readFileSync(process.argv[2]));
  } catch (err) {
    console.error(`unreadable capsule: ${err.message}`);
    process.exit(2);
  }
  for (const c of result.checks) console.log(`${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.message}`);
  console.log(result.valid ? `valid: run ${result.runHash}` : "INVALID");
  process.exit(result.valid ? 0 : 1);
}
