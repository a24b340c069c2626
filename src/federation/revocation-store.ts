/**
 * The revocations a node keeps (seed 003 §6.3), indexed by who revoked what: one file per (revoker, delegation),
 * `revocations/<revoker>/<delegationId>.json`, where the revoker is the revocation's `delegator` (its signer). So a
 * revocation signed by a node that is not entitled to revoke a delegation is kept apart from the entitled one and can
 * never stand in its way, and a lookup is one file, whatever else is kept.
 *
 * Costs (n = revocations kept): a lookup ({@link RevocationStore.has}) reads at most one file; a chain of L links asks
 * at most L·(L+1)/2 of them; adding one reads one file and writes one. The names of one revoker's revocations are
 * listed once per process (to count them against {@link MAX_REVOCATIONS_PER_NODE}) and then kept in memory, as are the
 * documents once read (a kept revocation never changes). A pull reply lists the node's own folder again (the CLI's
 * `revoke` writes there while the node serves), relays at most {@link MAX_RELAYED_PER_NODE} of each other signer's,
 * and reads nothing it has read before. Nothing re-reads every revocation per message.
 *
 * Earlier versions kept `revocations/<delegationId>.json`, first one wins. Such files are moved into the new layout on
 * first use (under their signer, where a wrong one is harmless); a damaged one is left alone and ignored, as before.
 * @module
 */
import { utf8 } from "../canonical/mod.ts";
import { UUID_RE } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { MAX_CHAIN_LENGTH } from "./chain.ts";
import { parseRevocation } from "./revocation.ts";
import type { Revocation } from "./revocation.ts";
import type { NodeFiles } from "./node-files.ts";

export { MAX_RELAYED_PER_NODE, MAX_REVOCATIONS_PER_NODE } from "./revocation.ts";

/** The folder of revocations inside a node directory. */
export const REVOCATIONS_DIR = "revocations";

const MAX_FILE_BYTES = 64 * 1024;
const dec = new TextDecoder("utf-8", { fatal: true });
const FLAT_RE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/;

function keyPath(revoker: string, delegationId: string): string {
  if (!UUID_RE.test(revoker) || !UUID_RE.test(delegationId)) throw new TypeError(`"revoker" and "delegationId" expected lowercase UUIDs, got ${JSON.stringify(revoker)}, ${JSON.stringify(delegationId)}`);
  return `${REVOCATIONS_DIR}/${revoker}/${delegationId}.json`;
}

function idsIn(names: readonly string[]): string[] {
  return names.flatMap((n) => FLAT_RE.exec(n)?.[1] ?? []);
}

/**
 * The refusal of a revocation whose signer has its limit of revocations kept here.
 * @param revoker the signer
 * @param kept how many of its revocations are kept
 * @param limit the limit
 * @returns the error (`POLICY_RATE_LIMIT_EXCEEDED`)
 * @throws never
 * @example throw limitError(peer, 10_000, 10_000);
 */
export function limitError(revoker: string, kept: number, limit: number): ReachError {
  return new ReachError("POLICY_RATE_LIMIT_EXCEEDED", `node ${revoker} has ${kept} revocations kept on this node and may have at most ${limit}; its revocations are refused from now on (other nodes' are not) until this node's operator removes some from ${REVOCATIONS_DIR}/${revoker}/`, { details: { nodeId: revoker, kept, limit } });
}

/** A well-formed `{delegationId, delegator}` of an untrusted chain link, or undefined. */
function linkIds(link: unknown): { id: string; by: string } | undefined {
  if (link === null || typeof link !== "object") return undefined;
  const { delegationId: id, delegator: by } = link as Record<string, unknown>;
  return typeof id === "string" && typeof by === "string" && UUID_RE.test(id) && UUID_RE.test(by) ? { id, by } : undefined;
}

/** The revocations of a node directory (see the module notes). */
export class RevocationStore {
  readonly #files: NodeFiles;
  readonly #docs = new Map<string, Revocation>();
  readonly #names = new Map<string, Promise<Set<string>>>();
  readonly #cursors = new Map<string, number>();
  #migrated: Promise<void> | undefined;
  #serial: Promise<unknown> = Promise.resolve();

  /** @param files the node directory */
  constructor(files: NodeFiles) {
    this.#files = files;
  }

  /**
   * Whether `revoker` has revoked `delegationId` here.
   * @param revoker the signer of the revocation
   * @param delegationId the delegation
   * @returns true when such a revocation is kept
   * @throws ReachError when the directory cannot be read
   * @example await store.has(a, d.delegationId)
   */
  async has(revoker: string, delegationId: string): Promise<boolean> {
    await this.#migrate();
    return (await this.#load(revoker, delegationId)) !== undefined;
  }

  /**
   * The revocations that concern an (untrusted) chain: for each link, by its delegator and by the delegator of each
   * link above it — the only ones entitled to revoke it. Links that are not well formed are skipped (the chain's own
   * check refuses them).
   * @param links the chain as received, root first
   * @returns a synchronous lookup for `ChainContext.isRevoked`
   * @throws ReachError when the directory cannot be read
   * @example const isRevoked = await store.revokedIn(body.chain);
   */
  async revokedIn(links: unknown): Promise<(delegationId: string, by: string) => boolean> {
    const found = new Set<string>();
    const ids = Array.isArray(links) ? links.slice(0, MAX_CHAIN_LENGTH).map(linkIds) : [];
    for (const [i, link] of ids.entries()) {
      if (link === undefined) continue;
      const revokers = new Set(ids.slice(0, i + 1).flatMap((l) => (l === undefined ? [] : [l.by])));
      for (const by of revokers) if (await this.has(by, link.id)) found.add(`${by}/${link.id}`);
    }
    return (delegationId, by) => found.has(`${by}/${delegationId}`);
  }

  /**
   * How many more revocations signed by `revoker` may be kept under `limit`.
   * @param revoker the signer
   * @param limit the most kept for one signer
   * @returns the room left (0 when full)
   * @throws ReachError when the directory cannot be read
   * @example if ((await store.room(peer, MAX_REVOCATIONS_PER_NODE)) === 0) refuse();
   */
  async room(revoker: string, limit: number): Promise<number> {
    await this.#migrate();
    return Math.max(0, limit - (await this.#namesOf(revoker)).size);
  }

  /**
   * Keep a (checked) revocation under its signer; adds are serialised, so a limit holds under concurrent pushes.
   * @param r the revocation
   * @param limit the most revocations kept for its signer, or null for none (this node's own)
   * @returns true when it was new, false when the same (signer, delegation) was kept already
   * @throws ReachError `POLICY_RATE_LIMIT_EXCEEDED` when the signer has `limit` revocations kept here;
   *   `PROTO_INVALID_ARGUMENT` when it cannot be written
   * @example if (await store.add(r, null)) log("revoked");
   */
  add(r: Revocation, limit: number | null): Promise<boolean> {
    const next = this.#serial.then(() => this.#add(r, limit));
    this.#serial = next.catch(() => undefined);
    return next;
  }

  async #add(r: Revocation, limit: number | null): Promise<boolean> {
    if (await this.has(r.delegator, r.delegationId)) return false;
    const names = await this.#namesOf(r.delegator);
    if (limit !== null && names.size >= limit) throw limitError(r.delegator, names.size, limit);
    const path = keyPath(r.delegator, r.delegationId);
    await this.#files.write(path, utf8(JSON.stringify(r, null, 2) + "\n"));
    this.#docs.set(path, r);
    names.add(r.delegationId);
    return true;
  }

  /**
   * The revocations to hand a peer that pulls: this node's own first (listed afresh), then the others taking turns by
   * signer, at most `relayPerNode` of each signer per call — a window that moves on at every call, so that over
   * successive pulls every kept revocation is relayed while one signer's many never fill a reply.
   * @param self this node's id (null: no folder is listed first)
   * @param max the most to return
   * @param relayPerNode the most of any other signer's to return (default: no limit)
   * @returns the revocations
   * @throws ReachError when the directory cannot be read
   * @example await store.list(self.identity.nodeId, MAX_REVOCATIONS_PER_MESSAGE, MAX_RELAYED_PER_NODE)
   */
  async list(self: string | null, max: number, relayPerNode = Number.MAX_SAFE_INTEGER): Promise<Revocation[]> {
    await this.#migrate();
    const revokers = (await this.#files.list(REVOCATIONS_DIR)).filter((n) => UUID_RE.test(n));
    const own = self !== null && revokers.includes(self) ? idsIn(await this.#files.list(`${REVOCATIONS_DIR}/${self}`)) : [];
    const queues: string[][] = [];
    for (const r of revokers) if (r !== self) queues.push(this.#window(r, [...(await this.#namesOf(r))].sort(), relayPerNode).map((id) => `${r}/${id}`));
    const keys = own.slice(0, max).map((id) => `${self}/${id}`);
    for (let turn = 0; keys.length < max && queues.some((q) => turn < q.length); turn++) {
      for (const q of queues) if (turn < q.length && keys.length < max) keys.push(q[turn]!);
    }
    const out: Revocation[] = [];
    for (const key of keys) {
      const [revoker, id] = key.split("/") as [string, string];
      const r = await this.#load(revoker, id);
      if (r !== undefined) out.push(r);
    }
    return out;
  }

  /** The next `size` of a signer's sorted ids, from where its last window ended (all of them when they fit). */
  #window(revoker: string, ids: readonly string[], size: number): string[] {
    if (ids.length <= size) return [...ids];
    const start = (this.#cursors.get(revoker) ?? 0) % ids.length;
    this.#cursors.set(revoker, (start + size) % ids.length);
    return start + size <= ids.length ? ids.slice(start, start + size) : [...ids.slice(start), ...ids.slice(0, start + size - ids.length)];
  }

  async #load(revoker: string, delegationId: string): Promise<Revocation | undefined> {
    const path = keyPath(revoker, delegationId);
    const known = this.#docs.get(path);
    if (known !== undefined) return known;
    const r = await this.#readRevocation(path);
    if (r === undefined || r.delegator !== revoker || r.delegationId !== delegationId) return undefined;
    this.#docs.set(path, r);
    return r;
  }

  async #readRevocation(path: string): Promise<Revocation | undefined> {
    const bytes = await this.#files.read(path, MAX_FILE_BYTES).catch(() => null);
    if (bytes === null) return undefined;
    try {
      return parseRevocation(JSON.parse(dec.decode(bytes)), path);
    } catch {
      return undefined; // a half-copied or foreign file: ignored
    }
  }

  #namesOf(revoker: string): Promise<Set<string>> {
    let names = this.#names.get(revoker);
    if (names === undefined) {
      if (!UUID_RE.test(revoker)) throw new TypeError(`"revoker" expected a lowercase UUID, got ${JSON.stringify(revoker)}`);
      names = this.#files.list(`${REVOCATIONS_DIR}/${revoker}`).then((n) => new Set(idsIn(n)));
      this.#names.set(revoker, names);
    }
    return names;
  }

  #migrate(): Promise<void> {
    this.#migrated ??= this.#moveFlatFiles().catch((err: unknown) => {
      this.#migrated = undefined; // try again next time
      throw err;
    });
    return this.#migrated;
  }

  /** Move `revocations/<delegationId>.json` (earlier versions) to `revocations/<delegator>/<delegationId>.json`. */
  async #moveFlatFiles(): Promise<void> {
    for (const name of await this.#files.list(REVOCATIONS_DIR)) {
      if (!FLAT_RE.test(name)) continue;
      const old = `${REVOCATIONS_DIR}/${name}`;
      const r = await this.#readRevocation(old);
      if (r === undefined) continue;
      const path = keyPath(r.delegator, r.delegationId);
      if ((await this.#readRevocation(path)) === undefined) await this.#files.write(path, utf8(JSON.stringify(r, null, 2) + "\n"));
      await this.#files.remove(old);
    }
  }
}
