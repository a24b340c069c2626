/**
 * `reach-wasm run PACK --on NODE_ID|URL --delegation FILE --dir DIR [--ca FILE] [run options]` (seed 003 §6.2): run a
 * pack on a peer under a delegation chain. The pack (as a deterministic `.tar.gz`) and the request go to the delegate
 * signed by this node; the capsule that comes back is verified (`src/federation/capsule-check.ts`) and only then
 * written exactly as a local `run` writes it: `OUT/<runHash>.capsule.tar.gz` and `OUT/runs/<runHash>/`. The run hash
 * is the one a local run of the same pack, input, seed and flags gets. A refusal (`FED_*`, `POLICY_*`, `PACK_*`)
 * writes nothing and exits 2.
 * @module
 */
import { join, resolve } from "node:path";
import { writeArchive } from "../engine/mod.ts";
import { requestDelegatedRun } from "../federation/mod.ts";
import { normalizeEndpoint } from "../federation/mod.ts";
import { readPackFiles } from "../host/mod.ts";
import { writeDirAtomic, writeFileAtomic } from "../platform/write.ts";
import type { NodeIdentity } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { PACK_SIGNATURE_PATH, verifyPackSignature } from "../engine/mod.ts";
import type { CliIO } from "./io.ts";
import { chainOf, nodeState, peerFetch, readDelegationFile, wallClock } from "./federation-host.ts";
import { parseRunArgs, readInput } from "./run-args.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { usageError } from "./options.ts";
import { RUN } from "./specs-run.ts";

function target(peers: readonly NodeIdentity[], on: string): NodeIdentity {
  const byId = peers.find((p) => p.nodeId === on);
  if (byId !== undefined) return byId;
  let url: string | undefined;
  try {
    url = normalizeEndpoint(on);
  } catch {
    url = undefined;
  }
  const byUrl = url === undefined ? undefined : peers.find((p) => p.endpoint === url);
  if (byUrl !== undefined) return byUrl;
  throw new ReachError("FED_NODE_UNAUTHORIZED", `--on ${on} is not a registered peer (by node id or endpoint); register it with \`reach-wasm node trust --dir DIR PEER_NODE_JSON\``);
}

async function packArchive(path: string, store: Awaited<ReturnType<typeof loadTrustStore>>): Promise<{ archive: Uint8Array; trusted: boolean }> {
  const files = await readPackFiles(path);
  const sig = files.get(PACK_SIGNATURE_PATH);
  const trusted = sig === undefined ? false : verifyPackSignature(files, sig, store ?? undefined).trusted;
  return { archive: writeArchive([...files].map(([p, bytes]) => ({ path: p, bytes }))), trusted };
}

/**
 * The delegated form of `run`.
 * @param argv the arguments after `run` (with `--on`, `--delegation` and `--dir`)
 * @param io output streams
 * @returns 0 COMPLETED, 1 FAILED or ABORTED
 * @throws ReachError for a bad invocation or a refusal (nothing is written)
 * @example await runDelegatedRunCommand(["packs/hello", "--on", id, "--delegation", "b-c.json", "--dir", "a"], io)
 */
export async function runDelegatedRunCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseRunArgs(argv);
  const own = args.delegated;
  if (own === null) throw usageError(RUN, "a delegated run needs --on NODE_ID|URL, --delegation FILE and --dir NODE_DIR together");
  if (args.key !== undefined) throw usageError(RUN, "--key does not apply to a delegated run; the delegate signs the run with its node key");
  const state = nodeState(own.dir);
  const self = await state.self();
  const delegate = target(await state.peers(), own.on);
  const file = own.delegation;
  const chain = await chainOf(state, await readDelegationFile(file), file);
  const store = await loadTrustStore(args.trust);
  const { archive, trusted } = await packArchive(args.pack, store);
  const restricted = !trusted && !args.unrestricted;
  const input = await readInput(args.input);
  io.stderr(`reach-wasm: asking node ${delegate.nodeId} (${delegate.endpoint}) to run ${args.pack} under a ${chain.length}-link delegation chain${restricted ? " (restricted executor)" : ""}\n`);
  const run = await requestDelegatedRun({ self, now: wallClock, fetch: await peerFetch(own.ca) }, delegate, {
    archive,
    input,
    ...(args.seed === undefined ? {} : { seed: args.seed }),
    approve: args.approve,
    restricted,
    ...(args.maxSteps === undefined ? {} : { maxSteps: args.maxSteps }),
    ...(args.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: args.stepTimeoutMs }),
    chain,
  });
  const outRoot = resolve(args.out);
  const outDir = join(outRoot, "runs", run.runHash);
  const capsulePath = join(outRoot, run.capsule.name);
  // The run hash, the capsule's name and the run files' names come from the delegate: written only inside --out
  // (the primitives check every name; a link there is refused, never followed).
  await writeFileAtomic(capsulePath, run.capsule.bytes, 0o600, { within: outRoot });
  await writeDirAtomic(outDir, run.files, { within: outRoot, mode: 0o600 });
  io.stderr(`reach-wasm: ${run.status} ${run.runHash} on node ${delegate.nodeId}; capsule verified (signed by the delegate)\nreach-wasm: capsule ${capsulePath}; run files in ${outDir}\n`);
  if (args.json) {
    const line: Record<string, unknown> = { runId: run.runId, status: run.status, runHash: run.runHash, capsule: capsulePath, out: outDir, node: delegate.nodeId };
    const result = run.files.get("result.json");
    const error = result === undefined ? undefined : (JSON.parse(new TextDecoder().decode(result)) as { error?: unknown }).error;
    if (error !== undefined) line["error"] = error;
    io.stdout(JSON.stringify(line) + "\n");
  }
  return run.status === "COMPLETED" ? 0 : 1;
}
