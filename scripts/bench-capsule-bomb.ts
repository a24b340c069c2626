/**
 * `vite-node scripts/bench-capsule-bomb.ts [--keep DIR] [--cli MAIN_JS] [--only honest:verify,…]`: what a small hostile
 * capsule costs the capsule commands.
 * Writes ~1 MiB capsules of canonical ustar headers over zeros (level 9 gzip): `honest` (two entries of ~512 MiB)
 * inflates to just under the default 1 GiB bound and says so in its gzip trailer; `lying` is the same with a trailer
 * that claims 1 MiB; `many` is 1,000 entries of 1 MiB, each within any per-entry bound, the worst a capsule of its
 * size can do under the inflation ratio (it is read up to 100 × its size).
 * Then runs `verify`, `show`, `replay`, `report` and `diff` of the built CLI (`dist/cli/main.js`) on each under
 * `/usr/bin/time -v` and prints wall time, peak RSS and the refusal. Run `npm run build` first.
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGzip } from "node:zlib";
import { encodeHeader } from "../src/capsule/_ustar.ts";

const MiB = 1024 * 1024;
const root = new URL("../", import.meta.url).pathname;
const keep = process.argv.indexOf("--keep");
const dir = keep > 0 ? process.argv[keep + 1]! : mkdtempSync(join(tmpdir(), "reach-bomb-"));
mkdirSync(dir, { recursive: true });

/** A gzip of canonical tar headers over zeros: entries `names` of `size` bytes each, then the end blocks. */
async function bomb(size: number, names: string[]): Promise<Uint8Array> {
  const gz = createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gz.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise((resolve) => gz.on("end", resolve));
  const zeros = new Uint8Array(MiB);
  const write = (b: Uint8Array): Promise<void> => new Promise((resolve) => (gz.write(b) ? resolve() : gz.once("drain", () => resolve())));
  for (const name of names) {
    const header = new Uint8Array(512);
    encodeHeader(header, 0, "", name, size);
    await write(header);
    for (let left = Math.ceil(size / 512) * 512; left > 0; left -= Math.min(left, MiB)) await write(zeros.subarray(0, Math.min(left, MiB)));
  }
  await write(new Uint8Array(1024));
  gz.end();
  await done;
  return new Uint8Array(Buffer.concat(parts));
}

const honest = await bomb(512 * MiB - 2048, ["a", "b"]);
const lying = honest.slice();
new DataView(lying.buffer).setUint32(lying.length - 4, MiB, true);
const many = await bomb(MiB, Array.from({ length: 1000 }, (_, i) => `f/${String(i).padStart(4, "0")}`));
const files = { honest: join(dir, "honest.capsule.tar.gz"), lying: join(dir, "lying.capsule.tar.gz"), many: join(dir, "many.capsule.tar.gz") };
writeFileSync(files.honest, honest);
writeFileSync(files.lying, lying);
writeFileSync(files.many, many);

const cliAt = process.argv.indexOf("--cli"); // another build to compare with, e.g. an earlier checkout's dist/cli/main.js
const cli = cliAt > 0 ? process.argv[cliAt + 1]! : join(root, "dist/cli/main.js");
const only = process.argv.indexOf("--only"); // e.g. --only honest:verify,honest:show
const wanted = only > 0 ? new Set(process.argv[only + 1]!.split(",")) : null;
console.log(`capsules in ${dir}: ${Object.entries(files).map(([k, f]) => `${k} ${statSync(f).size} bytes`).join(", ")}`);
const base = spawnSync("/usr/bin/time", ["-v", "node", cli, "--version"], { encoding: "utf8" });
console.log(`baseline (reach-wasm --version): ${/Elapsed[^\n]*: ([\d:.]+)/.exec(base.stderr)?.[1]} wall, ${Math.round(Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(base.stderr)?.[1]) / 1024)} MB`);
console.log("| capsule | command | wall s | peak RSS MB | exit | refusal |");
console.log("|---|---|---|---|---|---|");
for (const [label, file] of Object.entries(files)) {
  const commands: Record<string, string[]> = {
    verify: ["verify", file],
    show: ["show", file],
    replay: ["replay", file],
    report: ["report", file, "--out", join(dir, `${label}.html`)],
    diff: ["diff", file, file],
  };
  for (const [name, args] of Object.entries(commands)) {
    if (wanted !== null && !wanted.has(`${label}:${name}`)) continue;
    const r = spawnSync("/usr/bin/time", ["-v", "node", cli, ...args], { encoding: "utf8", env: { ...process.env, REACH_WASM_CACHE: "off" } });
    const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr);
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
    const seconds = wall === null ? NaN : Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]);
    const refusal = /REPLAY_CAPSULE_[A-Z_]+/.exec(r.stderr)?.[0] ?? "-";
    console.log(`| ${label} | ${name} | ${seconds.toFixed(2)} | ${rss === null ? "?" : (Number(rss[1]) / 1024).toFixed(0)} | ${r.status} | ${refusal} |`);
  }
}
