/**
 * What the HTTP API of the run service works with.
 * @module
 */
import type { EngineEnvironment } from "../engine/mod.ts";
import type { RunQueue, SqlDatabase } from "./ports.ts";
import type { TrustSource } from "./engine-adapter.ts";
import type { Authenticator } from "./http-auth.ts";
import type { ClientSlots, WatchLimits } from "./http-limits.ts";
import type { RunHub } from "./run-hub.ts";
import type { RunPack } from "./store-runs.ts";
import type { SecretVault } from "./secret-vault.ts";

/** The API's dependencies. */
export type ServiceContext = {
  db: SqlDatabase;
  queue: RunQueue;
  /** The engine environment (to check uploaded packs). */
  env: EngineEnvironment;
  /** Decides whether an uploaded pack counts as trusted (as it is now: `trustNow`). */
  trust: TrustSource;
  auth: Authenticator;
  hub: RunHub;
  /** The largest request body accepted (bytes). */
  maxBodyBytes: number;
  /** Lines for the server's log (stderr). */
  log: (line: string) => void;
  /** Registered packs looked up recently, by `tenant digest` (saves a query per submission). */
  packs: Map<string, { pack: RunPack; at: number }>;
  /** Per-client limits of event streams and long polls (default `http-limits.ts`'s). */
  limits?: Partial<WatchLimits>;
  /** The watch slots held, per client (made by the API when absent). */
  watchers?: ClientSlots;
  /** Submitted runs' secret values until this process's worker takes them (memory only). */
  secrets: SecretVault;
};
