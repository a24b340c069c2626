// Shared fixture for the host tests (a .test.ts file so that it stays out of the build; it holds one sanity test).
import { describe, expect, it } from "vitest";
import { deriveStream } from "../../determinism/prng.ts";
import { VirtualClock } from "../../determinism/clock.ts";
import { capabilityPolicy, workspaceResources } from "../../policy/capabilities.ts";
import type { CapabilityPolicy } from "../../policy/capabilities.ts";
import { ManifestSchema } from "../../protocol/pack.ts";
import type { ReachError } from "../../protocol/errors.ts";
import type { TapePlayer } from "../../record/player.ts";
import { TapeRecorder } from "../../record/tape.ts";
import { Workspace } from "../workspace/workspace.ts";
import type { StepTransaction } from "../workspace/workspace.ts";
import { ArtifactSink } from "./artifact-sink.ts";
import type { ArtifactStage } from "./artifact-sink.ts";
import { createHost } from "./host.ts";
import type { Host, HostContext, HostLimits } from "./host.ts";
import type { FetchLike } from "../../protocol/fetch.ts";
import { MemoryStore } from "./memory-store.ts";
import type { MemoryTransaction } from "./memory-store.ts";

export const INVOCATION = "00000000-0000-8000-8000-0000000000aa";
export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

export type Setup = {
  host: Host;
  policy: CapabilityPolicy;
  ws: Workspace;
  step: StepTransaction;
  store: MemoryStore;
  mem: MemoryTransaction;
  sink: ArtifactSink;
  stage: ArtifactStage;
  clock: VirtualClock;
  tape: TapeRecorder;
};

export type SetupOptions = {
  permissions?: string[];
  resources?: { uri: string; access: string }[];
  allowedHosts?: string[];
  sandbox?: Record<string, string>;
  restricted?: boolean;
  files?: Record<string, Record<string, Uint8Array>>;
  fetch?: FetchLike;
  player?: TapePlayer;
  limits?: Partial<HostLimits>;
  memory?: Record<string, unknown>;
  /** The tape (default: a new TapeRecorder). */
  tape?: TapeRecorder;
  /** The invocation's MCP tool. */
  mcp?: HostContext["mcp"];
};

/** A host over a fresh run: `data` (read) and `out` (readwrite) roots unless told otherwise. */
export function setup(o: SetupOptions = {}): Setup {
  const manifest = ManifestSchema().parse({
    manifestVersion: "1.0.0",
    capabilities: {
      permissions: o.permissions ?? ["filesystem", "network"],
      resources: o.resources ?? [
        { uri: "workspace:///data/", access: "read" },
        { uri: "workspace:///out/", access: "readwrite" },
      ],
    },
    policies: { allowedHosts: o.allowedHosts ?? [], ...(o.sandbox ? { sandbox: o.sandbox } : {}) },
  });
  const policy = capabilityPolicy(manifest, { restricted: o.restricted ?? false });
  const files = o.files ?? { data: { "in.txt": enc("one\r\ntwo\nthree\n") } };
  const ws = Workspace.fromResources(workspaceResources(policy, files));
  const store = new MemoryStore();
  if (o.memory) {
    const tx = store.beginStep();
    for (const [k, v] of Object.entries(o.memory)) tx.set(k, v);
    tx.commit();
  }
  const sink = new ArtifactSink();
  const step = ws.beginStep();
  const mem = store.beginStep();
  const stage = sink.beginStep();
  const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
  const tape = o.tape ?? new TapeRecorder();
  const host = createHost({
    invocationId: INVOCATION, policy, workspace: step, memory: mem, artifacts: stage, clock,
    random: deriveStream("42", `invocation:${INVOCATION}`), tape,
    ...(o.fetch ? { fetch: o.fetch } : {}), ...(o.player ? { player: o.player } : {}), ...(o.limits ? { limits: o.limits } : {}),
    ...(o.mcp ? { mcp: o.mcp } : {}),
  });
  return { host, policy, ws, step, store, mem, sink, stage, clock, tape };
}

/** Run `fn`, expect a ReachError, return it. */
export function caught(fn: () => unknown): ReachError {
  try {
    fn();
  } catch (err) {
    return err as ReachError;
  }
  throw new Error("expected an error");
}

/** Await `p`, expect a rejection with a ReachError, return it. */
export async function rejected(p: Promise<unknown>): Promise<ReachError> {
  try {
    await p;
  } catch (err) {
    return err as ReachError;
  }
  throw new Error("expected a rejection");
}

describe("fixture", () => {
  it("builds a host over data (read) and out (readwrite)", () => {
    const s = setup();
    expect(s.ws.snapshot().map((e) => e.path)).toEqual(["data/in.txt"]);
    expect(s.host.calls).toBe(0);
  });
});
