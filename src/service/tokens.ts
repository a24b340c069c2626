/**
 * Bearer tokens per tenant. A token is `rwt_` + 43 base64url characters (256 random bits); only its SHA-256 is
 * stored, so a leaked database does not leak tokens. Service ids (run ids) are random too: they are handles, never
 * hashed into a run.
 * @module
 */
import { bytesToHex } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import type { SqlExecutor } from "./ports.ts";
import { ReachError } from "../protocol/mod.ts";

/** What a tenant name may look like. */
export const TENANT_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** The tenant of requests without a token on a loopback, embedded-store service. */
export const LOCAL_TENANT = "local";
const TOKEN_RE = /^rwt_[A-Za-z0-9_-]{43}$/;

function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * A fresh random version 4 UUID (a run's service id).
 * @returns the UUID
 * @example randomRunId() // "3f6c…-4…"
 */
export function randomRunId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = bytesToHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Create a token for a tenant and store its hash.
 * @param db the database
 * @param tenant the tenant name (lowercase letters, digits, `.`, `_`, `-`; at most 64)
 * @returns the token (shown once; it cannot be recovered from the database)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad tenant name
 * @example const token = await createToken(db, "acme");
 */
export async function createToken(db: SqlExecutor, tenant: string): Promise<string> {
  if (!TENANT_RE.test(tenant)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `a tenant name is 1-64 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit; got ${JSON.stringify(tenant.length > 80 ? `${tenant.slice(0, 80)}…` : tenant)}`);
  }
  const token = `rwt_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
  await db.query("INSERT INTO reach_wasm.tokens (token_hash, tenant) VALUES ($1, $2)", [sha256Hex(token), tenant]);
  return token;
}

/**
 * The tenant a token belongs to.
 * @param db the database
 * @param token the bearer token as presented
 * @returns the tenant, or null for a malformed or unknown token
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const tenant = await tenantOfToken(db, token);
 */
export async function tenantOfToken(db: SqlExecutor, token: string): Promise<string | null> {
  if (!TOKEN_RE.test(token)) return null;
  const rows = await db.query<{ tenant: string }>("SELECT tenant FROM reach_wasm.tokens WHERE token_hash = $1", [sha256Hex(token)]);
  return rows[0]?.tenant ?? null;
}
