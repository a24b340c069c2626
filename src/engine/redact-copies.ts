/**
 * Where a redacted step's values still appear (conformance/HASHING.md "Redaction", "Copies"): a step's output is often
 * passed on — a later step's arguments, a file it wrote, a host call of another step. `redact` removes what it was
 * asked to and reports every other place of the new archive that still holds one of the removed values, with the
 * selector that would remove it too (`--step T`, `--entry PATH`), or says that it cannot be removed (an event the run
 * hash covers whole, the pack). It never removes more than it was asked to: what leaves a capsule is the caller's call.
 *
 * A value is looked for by each of its strings of at least {@link MIN_TRACED} characters (and a host call's base64
 * `data` decoded), as raw UTF-8, JSON-escaped and base64 text (at the three byte alignments). Shorter strings, numbers
 * and booleans are not traced: they cannot be told apart from coincidence (their salted commitments still hide them).
 * @module
 */
import { base64ToBytes, bytesToBase64, utf8 } from "../canonical/mod.ts";
import { CAPSULE_INDEX, EVENTS_ENTRY, PACK_PREFIX, TAPE_ENTRY } from "../capsule/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import { TAPE_VALUE_PREFIX } from "../record/mod.ts";

/** Shortest string traced, in characters. */
export const MIN_TRACED = 8;

/** A place of the redacted archive that still holds a removed value. */
export type StillHeld = { step: string; entry: string; event?: number; fix: string };

type Ev = { type: string; payload: Record<string, unknown> };

function strings(v: unknown, out: Set<string>, data = false): void {
  if (typeof v === "string") {
    if (v.length >= MIN_TRACED) out.add(v);
    if (data) {
      try {
        const text = new TextDecoder("utf-8", { fatal: true }).decode(base64ToBytes(v));
        if (text.length >= MIN_TRACED) out.add(text);
      } catch {
        // not base64 of UTF-8 text: the base64 string itself is traced
      }
    }
  } else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) strings(x, out, k === "data");
}

/** The forms a string takes in an archive: raw, JSON-escaped, base64 at each byte alignment. */
function forms(s: string): string[] {
  const out = new Set([s, JSON.stringify(s).slice(1, -1)]);
  const bytes = utf8(s);
  for (let k = 0; k < 3; k++) {
    const padded = new Uint8Array(k + bytes.length);
    padded.set(bytes, k);
    const b64 = bytesToBase64(padded).replace(/=+$/, "");
    const skip = k === 0 ? 0 : Math.ceil((k * 4) / 3);
    const core = b64.slice(skip, b64.length - 3);
    if (core.length >= MIN_TRACED) out.add(core);
  }
  return [...out];
}

/**
 * The values a step held (arguments, output, host call requests and responses), from the capsule before redaction.
 * @param events the original events
 * @param entries the original entries
 * @param stepId the step
 * @returns the traced strings
 */
export function stepValues(events: readonly Ev[], entries: ReadonlyMap<string, Uint8Array>, stepId: string): Set<string> {
  const out = new Set<string>();
  const invocations = new Set<string>();
  for (const e of events) {
    if (e.type === "tool.invoked" && e.payload["stepId"] === stepId) {
      invocations.add(String(e.payload["invocationId"]));
      strings(e.payload["arguments"], out);
    } else if (e.type === "tool.completed" && invocations.has(String(e.payload["invocationId"]))) strings(e.payload["result"], out);
  }
  for (const line of new TextDecoder().decode(entries.get(TAPE_ENTRY) ?? new Uint8Array()).split("\n").slice(0, -1)) {
    const r = JSON.parse(line) as { seq: number; invocationId: string };
    const raw = invocations.has(r.invocationId) ? entries.get(`${TAPE_VALUE_PREFIX}${r.seq}.json`) : undefined;
    if (raw !== undefined) strings(JSON.parse(new TextDecoder().decode(raw)), out);
  }
  return out;
}

/**
 * The places of a redacted archive that still hold a value of a redacted step.
 * @param values each redacted step's traced strings
 * @param entries the new archive's entries
 * @returns the places, in entry order
 */
export function stillHeld(values: ReadonlyMap<string, ReadonlySet<string>>, entries: ReadonlyMap<string, Uint8Array>): StillHeld[] {
  const found: StillHeld[] = [];
  const needles = [...values].map(([step, set]) => ({ step, forms: [...set].flatMap(forms) }));
  const hit = (text: string): string | undefined => needles.find((n) => n.forms.some((f) => text.includes(f)))?.step;
  const events = readJsonl(entries.get(EVENTS_ENTRY) ?? new Uint8Array()).events as Ev[];
  const stepOf = new Map<string, string>();
  for (const e of events) if (e.type === "tool.invoked") stepOf.set(String(e.payload["invocationId"]), String(e.payload["stepId"]));
  events.forEach((e, i) => {
    const step = hit(JSON.stringify(e.payload));
    if (step === undefined) return;
    const other = e.type === "tool.invoked" || e.type === "tool.completed" ? stepOf.get(String(e.payload["invocationId"])) : undefined;
    found.push({ step, entry: EVENTS_ENTRY, event: i, fix: other !== undefined ? `--step ${other}` : `cannot be redacted: event ${i} (${e.type}) is hashed whole` });
  });
  const tapeSteps = new Map<string, string>();
  for (const line of new TextDecoder().decode(entries.get(TAPE_ENTRY) ?? new Uint8Array()).split("\n").slice(0, -1)) {
    const r = JSON.parse(line) as { seq: number; invocationId: string };
    tapeSteps.set(`${TAPE_VALUE_PREFIX}${r.seq}.json`, stepOf.get(r.invocationId) ?? "");
  }
  for (const [path, bytes] of entries) {
    if (path === EVENTS_ENTRY || path === CAPSULE_INDEX) continue;
    const step = hit(new TextDecoder().decode(bytes));
    if (step === undefined) continue;
    const other = tapeSteps.get(path);
    const fix = path.startsWith(PACK_PREFIX) ? "cannot be redacted: the pack is the code that ran" : other !== undefined && other !== "" ? `--step ${other}` : `--entry ${path}`;
    found.push({ step, entry: path, fix });
  }
  return found;
}
