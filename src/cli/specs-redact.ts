/**
 * The declaration of `reach-wasm redact` (parsed by `options.ts`, help by `help.ts`).
 * @module
 */
import { defineArgs } from "./options.ts";

/** `reach-wasm redact`. */
export const REDACT = defineArgs({
  name: "redact",
  summary: "write a copy of a capsule without some of its contents; it keeps its run hash and still verifies",
  positionals: ["<capsule>"],
  options: {
    step: { type: "string", value: "ID", multiple: true, help: "remove the step's arguments and output (and TASK_<ID>.json); repeatable" },
    entry: { type: "string", value: "PATH", multiple: true, help: "remove the entry (e.g. request.json, workspace/after/out/x.txt, artifacts/…); repeatable" },
    blob: { type: "string", value: "SHA256", multiple: true, help: "remove blobs/<SHA256> (a large host-call body); repeatable" },
    out: { type: "string", value: "FILE", required: true, help: "where to write the redacted capsule, atomically (a file there is replaced;\nnever the capsule it reads)" },
    json: { type: "boolean", help: "print one JSON object on stdout: {runHash, out, redacted: {steps, entries, rewritten}}" },
  },
});

/** The notes of `reach-wasm redact --help`. */
export const REDACT_NOTES = [
    "Each removed value stays committed: a step's arguments and output by salted commitments in its events, an entry",
    "by its digest in capsule.json. run.json (derived) goes with any redaction. `verify` lists what is redacted;",
    "`replay` replays a capsule whose steps or results are redacted, and exits 3 (REPLAY_REDACTED) naming what it",
    "lacks when request.json, plan.json, tape.jsonl or a blob is redacted. Capsules recorded before salted",
    "commitments (no `commitments` in request.json) can have entries redacted, not steps.",
    "Example: reach-wasm redact run.capsule.tar.gz --step fetch --out shared.capsule.tar.gz",
].join("\n");
