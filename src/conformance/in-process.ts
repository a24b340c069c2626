/**
 * The runtime-neutral cases of `conformance/lib/` (vectors, the reference capsules, the federation vectors), run in
 * this process as part of the five categories when the suite tests this installation (no `--impl`). Each case's
 * fingerprint must equal the committed one (`conformance/fingerprints.json`), as under vitest and `deno test`.
 * The suites are handed in (the CLI loads them), so this module depends on nothing outside `src/`.
 * @module
 */
import type { Category } from "./types.ts";
import type { ConformanceCase } from "./case.ts";

/** A runtime-neutral case as `conformance/lib/` defines it. */
export type NeutralCase = { name: string; run(): string | void | Promise<string | void> };
/** A named group of runtime-neutral cases (`allSuites()` of `conformance/lib/all.ts`). */
export type NeutralSuite = { suite: string; cases: NeutralCase[] };

/** The suites that belong to a §10 category, with the clause they check. Others (tools, report, …) are not run here. */
export const NEUTRAL_SUITES: Readonly<Record<string, readonly [Category, string]>> = {
  schema: ["schema", "§10.1 example documents against the upstream schemas"],
  jcs: ["determinism", "§3.3 rule 2, §8.2 canonical JSON (RFC 8785)"],
  determinism: ["determinism", "§3.3 rule 4, §3.4 virtual time and seeded randomness"],
  "hash-chain": ["determinism", "§3.3 eventHash and runHash vectors"],
  "capsule-archive": ["replay", "§8.1, §8.2 the capsule container"],
  capsules: ["replay", "§3.4 the reference capsules replayed in process"],
  trust: ["federation", "§5.4, §6.2 rule 4 Ed25519 signatures"],
  federation: ["federation", "§6.2, §6.3 delegation chain vectors"],
};

/**
 * The in-process cases of the given categories.
 * @param suites the runtime-neutral suites
 * @param fingerprints the committed fingerprints (case name → fingerprint)
 * @param categories which categories to keep
 * @returns one conformance case per runtime-neutral case, ids `<category>.<suite>-<n>`
 * @example inProcessCases(allSuites(io), fingerprints, ["determinism"])
 */
export function inProcessCases(suites: readonly NeutralSuite[], fingerprints: Readonly<Record<string, string>>, categories: readonly Category[]): ConformanceCase[] {
  const out: ConformanceCase[] = [];
  for (const { suite, cases } of suites) {
    const meta = Object.hasOwn(NEUTRAL_SUITES, suite) ? NEUTRAL_SUITES[suite] : undefined;
    if (meta === undefined || !categories.includes(meta[0])) continue;
    const [category, clause] = meta;
    cases.forEach((c, i) => {
      out.push({
        id: `${category}.${suite}-${i + 1}`,
        category,
        clause,
        title: `in process: ${c.name}`,
        run: async () => {
          const fingerprint = String((await c.run()) ?? "ok");
          const want = Object.hasOwn(fingerprints, c.name) ? fingerprints[c.name] : undefined;
          if (want === undefined) throw new Error(`no committed fingerprint for "${c.name}" (conformance/fingerprints.json)`);
          if (fingerprint !== want) throw new Error(`fingerprint ${fingerprint}, committed ${want}`);
        },
      });
    });
  }
  return out;
}
