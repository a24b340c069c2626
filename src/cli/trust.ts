/**
 * `reach-wasm trust add <KEY.pub|HEX> [--name NAME] | list | remove <HEX|NAME> [--trust FILE] [--json]`: manage the
 * trust store (`--trust FILE`, else `$REACH_WASM_TRUST_STORE`, else `~/.config/reach-wasm/trust.json`). A pack signed
 * by a key in the store runs unrestricted; an approval signed by one approves a risk-3 plan. Writes are atomic.
 * @module
 */
import { bytesToHex, formatTrustStore, parsePublicKeyFile, parseTrustStore, TrustStore } from "../engine/mod.ts";
import type { TrustedKey } from "../engine/mod.ts";
import { defaultTrustStorePath } from "../platform/config.ts";
import { readHostFile } from "../platform/files.ts";
import { readTrustStoreText } from "../platform/trust-file.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { parseCommand, subcommandOf } from "./options.ts";
import { findCommand } from "./commands.ts";
import { TRUST_SUBCOMMANDS } from "./specs-pack.ts";
import type { CliIO } from "./io.ts";

const TRUST = findCommand("trust")!;

function parse(argv: readonly string[]): { sub: string; target: string | undefined; name: string | undefined; trust: string | undefined; json: boolean } {
  const { spec, argv: rest } = subcommandOf(TRUST, TRUST_SUBCOMMANDS, argv);
  const { values, positionals } = parseCommand(spec, rest);
  return { sub: spec.name.slice("trust ".length), target: positionals[0], name: "name" in values ? (values.name as string | undefined) : undefined, trust: values.trust, json: values.json };
}

/** A public key given as 64 hex digits or as a public key file. */
async function publicKeyOf(target: string): Promise<string> {
  if (/^[0-9a-fA-F]{64}$/.test(target)) return target.toLowerCase();
  const text = new TextDecoder().decode(await readHostFile(target, 64 * 1024));
  return bytesToHex(parsePublicKeyFile(text));
}

/**
 * The `trust` command.
 * @param argv arguments after `trust`
 * @param io output streams
 * @returns 0, or 1 when `remove` found no such key
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad invocation, an unreadable key or store
 * @example await runTrustCommand(["add", "me.key.pub", "--name", "me"], io)
 */
export async function runTrustCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parse(argv);
  const path = args.trust ?? defaultTrustStorePath();
  const text = await readTrustStoreText(args.trust, { creating: true }); // add makes the file; list shows it empty
  const store = text === null ? new TrustStore({ version: 1, keys: [] }) : parseTrustStore(text);
  const keys: TrustedKey[] = [...store.keys];
  if (args.sub === "list") {
    if (args.json) io.stdout(JSON.stringify({ store: path, keys }) + "\n");
    else io.stdout(keys.length === 0 ? `no trusted keys in ${path}\n` : keys.map((k) => `${k.publicKey}  ${k.name ?? ""}`.trimEnd()).join("\n") + "\n");
    return 0;
  }
  if (args.sub === "add") {
    const publicKey = await publicKeyOf(args.target!);
    const next = keys.filter((k) => k.publicKey !== publicKey);
    const fallback = /^[0-9a-fA-F]{64}$/.test(args.target!) ? `key ${publicKey.slice(0, 8)}` : args.target!.split(/[\\/]/).pop()!.replace(/\.pub$/, "").replace(/\.key$/, "");
    next.push({ publicKey, name: args.name ?? fallback });
    await writeFileAtomic(path, new TextEncoder().encode(formatTrustStore(new TrustStore({ version: 1, keys: next }))), 0o600);
    io.stderr(`reach-wasm: ${publicKey.slice(0, 16)}… is trusted (${path})\n`);
    if (args.json) io.stdout(JSON.stringify({ store: path, added: publicKey }) + "\n");
    return 0;
  }
  const target = args.target!;
  const next = keys.filter((k) => k.publicKey !== target.toLowerCase() && k.name !== target);
  if (next.length === keys.length) {
    io.stderr(`reach-wasm: no key ${JSON.stringify(target)} in ${path}\n`);
    if (args.json) io.stdout(JSON.stringify({ store: path, removed: 0 }) + "\n");
    return 1;
  }
  await writeFileAtomic(path, new TextEncoder().encode(formatTrustStore(new TrustStore({ version: 1, keys: next }))), 0o600);
  if (args.json) io.stdout(JSON.stringify({ store: path, removed: keys.length - next.length }) + "\n");
  else io.stderr(`reach-wasm: removed ${keys.length - next.length} key(s) from ${path}\n`);
  return 0;
}
