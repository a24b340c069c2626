// conformance/HASHING.md's numbers and lists are the code's: the worked run-hash vector ("Joining the event hashes":
// hex text, not bytes) recomputes from vectors/hash-chain/failure.* with the engine's own functions and with
// node:crypto, and the table "Fields required beyond the upstream schemas" lists exactly the members our generated
// schemas (conformance/schemas/) require that the upstream ones (conformance/upstream-schemas/) do not.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventHash, payloadHash, runHash } from "../src/ledger/hash-chain.ts";

const root = new URL("../conformance/", import.meta.url).pathname;
const doc = readFileSync(join(root, "HASHING.md"), "utf8");
const json = (path: string): Record<string, unknown> => JSON.parse(readFileSync(join(root, path), "utf8")) as Record<string, unknown>;
const sha = (b: Uint8Array | string): string => createHash("sha256").update(b).digest("hex");

/** The text of the section under `heading` (up to the next heading of the same or a higher level). */
function section(heading: string): string {
  const at = doc.indexOf(`${heading}\n`);
  expect(at, `HASHING.md has no "${heading}"`).toBeGreaterThanOrEqual(0);
  const level = heading.indexOf(" ");
  const rest = doc.slice(at + heading.length);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  return next === -1 ? rest : rest.slice(0, next);
}

describe("HASHING.md: joining the event hashes (worked vector)", () => {
  const text = section("### Joining the event hashes: hex text, not bytes");
  const named = (label: string): string => {
    const m = new RegExp(`^${label}\\s+= ([0-9a-f]{64})\\b`, "m").exec(text);
    expect(m, `no "${label} = <64 hex>" line`).not.toBeNull();
    return m![1]!;
  };
  const expected = json("vectors/hash-chain/failure.expected.json") as { events: { eventHash: string }[]; runHash: string };
  const lines = readFileSync(join(root, "vectors/hash-chain/failure.events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, string>);

  it("lists every event hash of the vector, each recomputed from its line", () => {
    expect(lines.length).toBe(7);
    let prev = "0".repeat(64);
    lines.forEach((e, i) => {
      const h = eventHash(e["type"]!, e["timestamp"]!, payloadHash(e["payload"]), prev);
      expect(named(`eventHash_${i}`)).toBe(h);
      expect(h).toBe(e["eventHash"]);
      expect(h).toBe(expected.events[i]!.eventHash);
      prev = h;
    });
    expect(text).not.toMatch(/^eventHash_7 /m);
  });

  it("the run hash is SHA-256 of the hex text joined (448 ASCII bytes), as runHash() computes it; the bytes-join differs", () => {
    const hashes = lines.map((e) => e["eventHash"]!);
    const preimage = hashes.join("");
    expect(Buffer.byteLength(preimage, "utf8")).toBe(448);
    expect(text).toContain("7 × 64 = 448 ASCII bytes");
    expect(named("runHash")).toBe(sha(preimage));
    expect(named("runHash")).toBe(runHash(hashes));
    expect(named("runHash")).toBe(expected.runHash);
    const bytes = Buffer.concat(hashes.map((h) => Buffer.from(h, "hex")));
    expect(bytes.length).toBe(7 * 32);
    expect(named("bytes-join")).toBe(sha(bytes));
    expect(named("bytes-join")).not.toBe(named("runHash"));
    // the elided preimage shown starts and ends with the first and last hash
    expect(text).toContain(`"${hashes[0]!.slice(0, 8)}…${hashes[0]!.slice(-8)}${hashes[1]!.slice(0, 8)}…`);
    expect(text).toContain(`…${hashes[6]!.slice(0, 8)}…${hashes[6]!.slice(-8)}"`);
  });
});

type Schema = Record<string, unknown> & { $ref?: string; required?: string[]; properties?: Record<string, Schema>; items?: Schema; oneOf?: Schema[]; $defs?: Record<string, Schema> };

function deref(s: Schema | undefined, root: Schema): Schema | undefined {
  let out = s;
  while (out?.$ref !== undefined) {
    let t: unknown = root;
    for (const k of out.$ref.replace(/^#\//, "").split("/")) t = (t as Record<string, unknown>)[k];
    out = t as Schema;
  }
  return out;
}

/** Members `ours` requires that `up` does not, as paths under `at` (not descending into members upstream lacks). */
function beyond(up: Schema | undefined, ours: Schema | undefined, upRoot: Schema, ourRoot: Schema, at: string, out: Set<string>): void {
  const u = deref(up, upRoot);
  const o = deref(ours, ourRoot);
  if (o === undefined) return;
  const upRequired = new Set(u?.required ?? []);
  for (const r of o.required ?? []) if (!upRequired.has(r)) out.add(`${at}.${r}`);
  for (const [k, member] of Object.entries(o.properties ?? {})) {
    const upMember = u?.properties?.[k];
    if (upMember === undefined) continue;
    beyond(upMember, member, upRoot, ourRoot, `${at}.${k}`, out);
    const [ui, oi] = [deref(upMember, upRoot)?.items, deref(member, ourRoot)?.items];
    if (ui !== undefined && oi !== undefined) beyond(ui, oi, upRoot, ourRoot, `${at}.${k}[]`, out);
  }
}

/** Upstream's payload definition for each event type (event.schema.json `$defs`); the other types have none. */
const UPSTREAM_PAYLOAD: Readonly<Record<string, string>> = {
  "run.started": "RunStartedPayload", "run.step.started": "StepStartedPayload", "tool.invoked": "ToolInvokedPayload",
  "tool.completed": "ToolCompletedPayload", "tool.failed": "ToolFailedPayload", "run.step.completed": "StepCompletedPayload",
  "run.completed": "RunCompletedPayload", "run.failed": "RunFailedPayload", "policy.violation": "PolicyViolationPayload",
  "federation.delegation": "FederationDelegationPayload",
};

function requiredBeyondUpstream(): Set<string> {
  const out = new Set<string>();
  for (const name of ["capsule", "error", "pack", "event"]) {
    const up = json(`upstream-schemas/${name}.schema.json`) as Schema;
    const ours = json(`schemas/${name}.schema.json`) as Schema;
    if (ours.oneOf === undefined) {
      beyond(up, ours, up, ours, name, out);
      continue;
    }
    for (const branch of ours.oneOf) {
      const event = deref(branch, ours)!;
      const type = String((event.properties!["type"] as { const: string }).const);
      const { payload, ...envelope } = event.properties!;
      beyond(up, { ...event, properties: envelope }, up, ours, "event", out);
      const upPayload = UPSTREAM_PAYLOAD[type] === undefined ? {} : up.$defs![UPSTREAM_PAYLOAD[type]!];
      beyond(upPayload, payload, up, ours, `event[${type}].payload`, out);
    }
  }
  return out;
}

/** `a.{b,c}` → `a.b`, `a.c`. */
function expand(path: string): string[] {
  const m = /^(.*)\{([^}]*)\}(.*)$/.exec(path);
  return m === null ? [path] : m[2]!.split(",").flatMap((alt) => expand(`${m[1]}${alt}${m[3]}`));
}

describe("HASHING.md: fields required beyond the upstream schemas", () => {
  it("the table lists exactly what conformance/schemas requires and conformance/upstream-schemas does not", () => {
    const listed = new Set<string>();
    const rows = section("## Fields required beyond the upstream schemas").split("\n").filter((l) => l.startsWith("| `"));
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      const [where, fields, why] = row.split(" | ").map((c) => c.replace(/^\| |\|$/g, "").trim());
      expect(why!.length, row).toBeGreaterThan(20); // every row says why
      const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      for (const prefix of spans(where!)) for (const f of spans(fields!)) for (const p of expand(f)) listed.add(`${prefix}.${p}`);
    }
    const computed = requiredBeyondUpstream();
    expect(computed.size).toBeGreaterThan(20);
    expect([...listed].sort()).toEqual([...computed].sort());
  });
});
