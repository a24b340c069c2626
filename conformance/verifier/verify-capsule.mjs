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
// where the body is every entry but capsule.json, events.jsonl, proof.json and federation.jsonl; and each
// tool.completed / tool.failed commits hostCalls = {count, hash}: the hash of that invocation's tape.jsonl lines.
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

/** Entries of a ustar archive (regular files only; anything else is refused). */
function untar(tar) {
  const files = new Map();
  const text = (b) => new TextDecoder().decode(b).replace(/\0.*$/s, "");
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((x) => x === 0)) break;
    const name = text(h.subarray(0, 100));
    const prefix = text(h.subarray(345, 500));
    const size = parseInt(text(h.subarray(124, 136)).trim(), 8);
    const type = String.fromCharCode(h[156]);
    const path = prefix === "" ? name : `${prefix}/${name}`;
    if ((type !== "0" && type !== "\0") || path.startsWith("/") || path.split("/").includes("..")) throw new Error(`refusing entry ${JSON.stringify(path)}`);
    files.set(path, tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

export function verifyCapsule(bytes) {
  const files = untar(gunzipSync(bytes, { maxOutputLength: 1 << 30 }));
  const checks = [];
  const check = (name, ok, message) => checks.push({ name, ok, message });
  const index = JSON.parse(new TextDecoder().decode(files.get("capsule.json")));
  for (const f of index.files) check(`file ${f.path}`, files.has(f.path) && sha(files.get(f.path)) === f.sha256, "matches capsule.json");

  const lines = new TextDecoder().decode(files.get("events.jsonl")).split("\n").filter((l) => l !== "");
  let prev = "0".repeat(64);
  const hashes = [];
  let broken = -1;
  lines.forEach((line, i) => {
    const e = JSON.parse(line);
    const payloadHash = sha(jcs(e.payload));
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
  const body = [...files.keys()].filter((p) => !["capsule.json", "events.jsonl", "proof.json", "federation.jsonl"].includes(p)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const contents = sha(body.map((p) => `${p}\0${sha(files.get(p))}\0${files.get(p).length}\n`).join(""));
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

  const proofBytes = files.get("proof.json");
  if (proofBytes !== undefined) {
    const proof = JSON.parse(new TextDecoder().decode(proofBytes));
    const { proof: _omit, ...rest } = index;
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
  return { valid: checks.every((c) => c.ok), runHash, checks };
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
