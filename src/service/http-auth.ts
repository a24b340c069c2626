/**
 * Who is asking: the tenant of a bearer token (`Authorization: Bearer rwt_…`), or the one local tenant when the
 * service allows requests without a token (a loopback listen on the embedded store without `--auth`).
 * @module
 */
import type { SqlExecutor } from "./ports.ts";
import { refuse } from "./http-errors.ts";
import { LOCAL_TENANT, tenantOfToken } from "./tokens.ts";

const HOW = "create a token with `reach-wasm tokens create --tenant NAME` and send it as `Authorization: Bearer <token>` (submit: --token or $REACH_WASM_TOKEN)";

/** Resolves tenants from requests, caching known tokens for a few seconds. */
export class Authenticator {
  readonly #db: SqlExecutor;
  readonly #requireToken: boolean;
  readonly #cache = new Map<string, { tenant: string; at: number }>();
  readonly #ttlMs: number;

  /**
   * @param db where token hashes are
   * @param requireToken false: requests without a token act as the local tenant
   * @param ttlMs how long a resolved token is cached (default 5 s)
   */
  constructor(db: SqlExecutor, requireToken: boolean, ttlMs = 5000) {
    this.#db = db;
    this.#requireToken = requireToken;
    this.#ttlMs = ttlMs;
  }

  /** Whether requests must carry a token. */
  get requireToken(): boolean {
    return this.#requireToken;
  }

  /**
   * The tenant of a request.
   * @param authorization the `Authorization` header, if any
   * @returns the tenant name
   * @throws HttpRefusal 401 `POLICY_PERMISSION_DENIED` for a missing, malformed or unknown token
   * @example const tenant = await auth.tenantOf(req.headers.get("authorization"));
   */
  async tenantOf(authorization: string | null | undefined): Promise<string> {
    if (authorization === null || authorization === undefined || authorization === "") {
      if (!this.#requireToken) return LOCAL_TENANT;
      throw refuse(401, "POLICY_PERMISSION_DENIED", `this service needs a bearer token; ${HOW}`);
    }
    const m = /^Bearer ([^\s]{1,200})$/i.exec(authorization);
    if (m === null) throw refuse(401, "POLICY_PERMISSION_DENIED", `the Authorization header must be "Bearer <token>"; ${HOW}`);
    const token = m[1]!;
    const now = performance.now();
    const hit = this.#cache.get(token);
    if (hit !== undefined && now - hit.at < this.#ttlMs) return hit.tenant;
    const tenant = await tenantOfToken(this.#db, token);
    if (tenant === null) {
      this.#cache.delete(token);
      throw refuse(401, "POLICY_PERMISSION_DENIED", `the bearer token is not valid for this service; ${HOW}`);
    }
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(token, { tenant, at: now });
    return tenant;
  }
}
