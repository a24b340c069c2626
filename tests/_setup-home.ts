// Tests never read the user's home or settings: each test file gets its own HOME and XDG config and data folders
// (the trust store ~/.config/reach-wasm, the service's data ~/.local/share/reach-wasm, keys a README example wrote), the
// caches (pure speed-ups, integrity-checked) are the tests' own under node_modules/.cache, and the user's REACH_WASM_*
// settings (a trust store, a cache, a server, tokens) are dropped; processes a test starts inherit all of it.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** Settings the test environment gives (the PostgreSQL server for the service tests) or that only show more. */
const KEPT = /^REACH_WASM_(TEST_|DEBUG$)/;
for (const name of Object.keys(process.env)) if (name.startsWith("REACH_WASM_") && !KEPT.test(name)) delete process.env[name];
const home = mkdtempSync(join(tmpdir(), "reach-test-home-"));
const cache = new URL("../node_modules/.cache/reach-wasm-tests/cache", import.meta.url).pathname;
mkdirSync(cache, { recursive: true });
Object.assign(process.env, { HOME: home, USERPROFILE: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share"), XDG_CACHE_HOME: cache });
afterAll(() => rmSync(home, { recursive: true, force: true }));
