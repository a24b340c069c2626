/**
 * `reach-wasm keygen [--out FILE] [--force] [--json]`: write an Ed25519 key pair. The private key goes to FILE
 * (default `reach-wasm.key`, mode 0600), the public key to FILE.pub (0644); formats in `src/trust/keys.ts`:
 * `{"type":"reach-wasm/ed25519-private-key","version":1,"publicKey":"<hex>","privateKey":"<hex seed>"}` and
 * `{"type":"reach-wasm/ed25519-public-key","version":1,"publicKey":"<hex>"}`. Existing files are never overwritten
 * without `--force`.
 * @module
 */
import { lstat } from "node:fs/promises";
import { stageFile } from "../platform/write.ts";
import type { StagedWrite } from "../platform/write.ts";
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
  for (const f of [out, pub]) {
    const st = await lstat(f).catch(() => null);
    if (st?.isDirectory() === true) throw new ReachError("PROTO_INVALID_ARGUMENT", `keygen: ${JSON.stringify(f)} is a directory; give --out a file name, e.g. --out ${JSON.stringify(`${f}/reach-wasm.key`)}`);
    // a link is refused by the writer, which says so (--force would not help)
    if (!force && st !== null && !st.isSymbolicLink()) {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `keygen: ${JSON.stringify(f)} exists; choose another --out or pass --force to replace it`);
    }
  }
  const pair = generateKeyPair();
  const files = formatKeyFiles(pair);
  const enc = new TextEncoder();
  // both staged before either is put in place: a public key that cannot be written (a link there is refused) leaves
  // the old pair as it was, not a new private key beside the old public key
  const priv = stageFile(out, enc.encode(files.privateKeyFile), 0o600);
  let stagedPub: StagedWrite;
  try {
    stagedPub = stageFile(pub, enc.encode(files.publicKeyFile), 0o644);
  } catch (err) {
    priv.discard();
    throw err;
  }
  priv.commit();
  stagedPub.commit();
  const publicKey = bytesToHex(pair.publicKey);
  io.stderr(`reach-wasm: wrote the private key to ${out} (mode 0600; keep it secret) and the public key ${publicKey} to ${pub}\n`);
  if (json) io.stdout(JSON.stringify({ publicKey, privateKeyFile: out, publicKeyFile: pub }) + "\n");
  return 0;
}
