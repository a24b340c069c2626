/**
 * `reach-wasm keygen [--out FILE] [--force] [--json]`: write an Ed25519 key pair. The private key goes to FILE
 * (default `reach-wasm.key`, mode 0600), the public key to FILE.pub (0644); formats in `src/trust/keys.ts`:
 * `{"type":"reach-wasm/ed25519-private-key","version":1,"publicKey":"<hex>","privateKey":"<hex seed>"}` and
 * `{"type":"reach-wasm/ed25519-public-key","version":1,"publicKey":"<hex>"}`. Existing files are never overwritten
 * without `--force`.
 * @module
 */
import { stat } from "node:fs/promises";
import { writeFileAtomic } from "../platform/write.ts";
import { ReachError } from "../protocol/mod.ts";
import { formatKeyFiles, generateKeyPair } from "../engine/mod.ts";
import { bytesToHex } from "../engine/mod.ts";
import type { CliIO } from "./io.ts";
import { parseCommand } from "./options.ts";
import { KEYGEN } from "./specs-pack.ts";

/**
 * The `keygen` command.
 * @param argv arguments after `keygen`
 * @param io output streams
 * @returns the exit code
 */
export async function runKeygenCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommand(KEYGEN, argv);
  const { force, json } = values;
  const out = values.out ?? "reach-wasm.key";
  const pub = `${out}.pub`;
  if (!force) {
    for (const f of [out, pub]) {
      if (await stat(f).then(() => true, () => false)) {
        throw new ReachError("PROTO_INVALID_ARGUMENT", `keygen: ${JSON.stringify(f)} exists; choose another --out or pass --force to replace it`);
      }
    }
  }
  const pair = generateKeyPair();
  const files = formatKeyFiles(pair);
  const enc = new TextEncoder();
  await writeFileAtomic(out, enc.encode(files.privateKeyFile), 0o600);
  await writeFileAtomic(pub, enc.encode(files.publicKeyFile), 0o644); // a key file that is a link is refused
  const publicKey = bytesToHex(pair.publicKey);
  io.stderr(`reach-wasm: wrote the private key to ${out} (mode 0600; keep it secret) and the public key ${publicKey} to ${pub}\n`);
  if (json) io.stdout(JSON.stringify({ publicKey, privateKeyFile: out, publicKeyFile: pub }) + "\n");
  return 0;
}
