/**
 * The host side of a federation node for the CLI: the node directory on disk (`NodeFiles`, atomic writes through
 * `src/platform/write.ts`), the transport to peers (`PeerFetch`, trusting extra CA certificates from `--ca FILE` on
 * Node through `node:https` and on Deno through `Deno.createHttpClient`), the wall clock, and a small option parser
 * shared by the federation commands.
 * @module
 */
import { lstat, readdir, unlink } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { Readable } from "node:stream";
import { rootCertificates } from "node:tls";
import type { NodeFiles, PeerFetch } from "../federation/mod.ts";
import { NodeState } from "../federation/mod.ts";
import { resolveChain } from "../federation/mod.ts";
import { parseDelegation } from "../federation/mod.ts";
import type { Delegation } from "../protocol/mod.ts";
import { readHostFile } from "../platform/files.ts";
import { lstatOrNull, privateDir, safeSegments, writeFileAtomic } from "../platform/write.ts";
import { ReachError } from "../protocol/mod.ts";

/** Most `.json` files read beside a delegation file to find its parents. */
const MAX_BESIDE = 1000;

/**
 * The wall clock of a federation node (message timestamps, expiry; never a hashed path).
 * @returns ms since the epoch
 * @throws never
 * @example wallClock() // 1767225600000
 */
export function wallClock(): number {
  return Date.now();
}

/**
 * The node directory `dir` as `NodeFiles`. It holds the node's private key and what peers sent, so it is private:
 * created 0700, every file written 0600 (whatever mode the caller asks: nothing in it is for other users), and on
 * first use an existing directory must be a real one owned by this user (one open to others is narrowed to 0700,
 * with a warning). Paths are checked name by name; no access follows a link.
 * @param dir the host directory
 * @returns file access rooted at `dir`
 * @throws never (each access throws `PROTO_INVALID_ARGUMENT` when a file cannot be read or written)
 * @example const state = new NodeState(nodeFiles("./node-a"));
 */
export function nodeFiles(dir: string): NodeFiles {
  const at = (p: string): string => join(dir, ...safeSegments(p, "a node file"));
  let checked = false;
  const check = (create: boolean): void => {
    if (checked || (!create && lstatOrNull(dir) === null)) return;
    privateDir(dir, "the node directory", (m) => process.stderr.write(m));
    checked = true;
  };
  return {
    read: async (p, maxBytes) => {
      check(false);
      const st = await lstat(at(p)).catch(() => null);
      if (st === null) return null;
      return await readHostFile(at(p), maxBytes); // a link or special file is refused
    },
    write: async (p, bytes) => {
      check(true);
      await writeFileAtomic(at(p), bytes, 0o600, { within: dir });
    },
    list: async (p) => {
      check(false);
      return (await readdir(at(p)).catch(() => [] as string[])).sort();
    },
    remove: async (p) => {
      check(false);
      const st = await lstat(at(p)).catch(() => null);
      if (st === null) return false;
      if (st.isDirectory()) throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(at(p))} is a directory, not a node file; remove it by hand`);
      await unlink(at(p)); // a link itself, never its target
      return true;
    },
  };
}

/**
 * The node directory as `NodeState`.
 * @param dir the `--dir` value
 * @returns the state
 * @throws never
 * @example const state = nodeState(args.dir);
 */
export function nodeState(dir: string): NodeState {
  return new NodeState(nodeFiles(dir));
}

type DenoHttp = { createHttpClient(o: { caCerts: string[] }): unknown };

function nodeHttps(ca: string[]): PeerFetch {
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const u = new URL(url);
      if (u.protocol !== "https:") {
        fetch(url, init).then(resolve, reject);
        return;
      }
      const req = httpsRequest(u, { method: init.method, headers: { ...init.headers, "content-length": String(init.body.length) }, ca, agent: false, ...(init.signal === undefined ? {} : { signal: init.signal }) }, (res) => {
        resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: res.statusCode ?? 502 }));
      });
      req.on("error", reject);
      req.end(init.body);
    });
}

/**
 * The transport to peers: the runtime's `fetch`, trusting the extra CA certificates of `caFile` (PEM) when given.
 * @param caFile a PEM file of CA certificates to trust besides the system's (`--ca FILE`)
 * @returns the transport
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the file cannot be read or holds no certificate
 * @example const fetch = await peerFetch(args.ca);
 */
export async function peerFetch(caFile?: string): Promise<PeerFetch> {
  if (caFile === undefined) return (url, init) => fetch(url, init);
  const pem = new TextDecoder().decode(await readHostFile(caFile, 1024 * 1024));
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new ReachError("PROTO_INVALID_ARGUMENT", `--ca ${JSON.stringify(caFile)} holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`);
  const deno = (globalThis as { Deno?: DenoHttp }).Deno;
  if (deno !== undefined) {
    const client = deno.createHttpClient({ caCerts: [pem] });
    return (url, init) => fetch(url, { ...init, client } as RequestInit);
  }
  return nodeHttps([...rootCertificates, pem]);
}

/**
 * Read a JSON file given on the command line.
 * @param path the file
 * @param what how to name it
 * @returns the parsed JSON
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be read or is not JSON
 * @example const doc = await readJsonFile("peer.json", "PEER_NODE_JSON");
 */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  const bytes = await readHostFile(path, 4 * 1024 * 1024);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `${what} ${JSON.stringify(path)} is not UTF-8 JSON`);
  }
}

/**
 * Read a delegation file.
 * @param path the file
 * @returns the delegation
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when unreadable, `FED_DELEGATION_INVALID` when not a delegation
 * @example const d = await readDelegationFile("a-to-b.json");
 */
export async function readDelegationFile(path: string): Promise<Delegation> {
  return parseDelegation(await readJsonFile(path, "delegation file"), path);
}

async function besides(file: string): Promise<Map<string, Delegation>> {
  const dir = dirname(resolve(file));
  const out = new Map<string, Delegation>();
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".json")).sort().slice(0, MAX_BESIDE);
  for (const name of names) {
    try {
      const text = new TextDecoder("utf-8", { fatal: true }).decode(await readHostFile(join(dir, name), 64 * 1024));
      const d = parseDelegation(JSON.parse(text), name);
      out.set(d.delegationId, d);
    } catch {
      // not a delegation: ignore
    }
  }
  return out;
}

/**
 * The chain of a delegation file, root first: parents are looked up in the node directory's `delegations/`, then
 * among the `.json` files beside the file.
 * @param state the node directory
 * @param leaf the delegation
 * @param file the file it came from
 * @returns the chain
 * @throws ReachError `FED_DELEGATION_INVALID` when a parent cannot be found
 * @example const chain = await chainOf(state, leaf, "b-to-c.json");
 */
export async function chainOf(state: NodeState, leaf: Delegation, file: string): Promise<Delegation[]> {
  let beside: Map<string, Delegation> | undefined;
  return await resolveChain(leaf, async (id) => {
    const kept = await state.delegation(id);
    if (kept !== undefined) return kept;
    beside ??= await besides(file);
    return beside.get(id);
  });
}

