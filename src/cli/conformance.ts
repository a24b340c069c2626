/**
 * `reach-wasm conformance [--category schema,determinism,replay,policy,federation] [--impl CMD] [--json]
 * [--junit FILE]`: the seed 003 §10 suite (`src/conformance/`) against this installation (its own CLI spawned as a
 * black box, plus the runtime-neutral cases in this process) or against another implementation's CLI
 * (`conformance/ADAPTER.md`). Progress on stderr, one line per case; `--json` prints the report; `--junit` writes
 * JUnit XML. Exit 0 only when every case passed, 1 when one failed, 2 for a bad invocation.
 * @module
 */
import { inProcessCases, junitXml, runConformance } from "../conformance/mod.ts";
import { CATEGORIES } from "../conformance/mod.ts";
import type { Category, ConformanceReport } from "../conformance/mod.ts";
import { conformanceHost, neutralSuites, packageRoot, parseCommand, selfCommand } from "./conformance-host.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { parseCommand as parseArgsOf, usageError } from "./options.ts";
import { CONFORMANCE } from "./specs-federation.ts";
import type { CliIO } from "./io.ts";
import type { ConformanceCase } from "../conformance/mod.ts";

/** The implementation this installation reports itself as. */
export const SELF = "reach-wasm (this installation)";

function categoriesOf(text: string | undefined): Category[] {
  if (text === undefined) return [...CATEGORIES];
  const picked = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const bad = picked.filter((c) => !(CATEGORIES as readonly string[]).includes(c));
  if (picked.length === 0 || bad.length > 0) throw usageError(CONFORMANCE, `--category ${JSON.stringify(text)}: expected a comma-separated list of ${CATEGORIES.join(", ")}${bad.length > 0 ? ` (not: ${bad.join(", ")})` : ""}`);
  return picked as Category[];
}

function summary(report: ConformanceReport): string[] {
  const lines = report.categories.map((c) => `  ${c.failed === 0 ? "PASS" : "FAIL"}  ${c.category.padEnd(12)} ${c.passed}/${c.cases.length}`);
  lines.push(report.passed ? `conformance: all ${report.summary.total} cases passed` : `conformance: ${report.summary.failed} of ${report.summary.total} cases FAILED`);
  return lines;
}

/**
 * The `conformance` command.
 * @param argv arguments after `conformance`
 * @param io output streams
 * @returns 0 when every case passed, 1 otherwise
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a bad invocation; `EXEC_RESOURCE_UNAVAILABLE` when the suite's
 *   files are not installed
 * @example process.exitCode = await runConformanceCommand(["--category", "determinism", "--json"], io);
 */
export async function runConformanceCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseArgsOf(CONFORMANCE, argv);
  const categories = categoriesOf(values.category);
  const impl = values.impl;
  const command = impl === undefined ? selfCommand() : parseCommand(impl);
  const pkg = await packageRoot();
  let inProcess: ConformanceCase[] = [];
  if (impl === undefined) {
    const { suites, fingerprints } = await neutralSuites(pkg);
    inProcess = inProcessCases(suites, fingerprints, categories);
  }
  const say = (text: string): void => {
    if (io.quiet !== true) io.stderr(`reach-wasm: ${text}\n`);
  };
  say(`conformance (seed 003 §10) of ${impl ?? SELF}: ${categories.join(", ")}`);
  const report = await runConformance({
    host: conformanceHost(command, pkg),
    categories,
    inProcess,
    implementation: impl ?? SELF,
    onCase: ({ index, total, case: c, result }) => {
      if (result === undefined) return;
      const head = `[${String(index + 1).padStart(String(total).length)}/${total}] ${result.status === "passed" ? "PASS" : "FAIL"} ${c.id} (${c.clause})`;
      if (result.status === "passed") say(head);
      else io.stderr(`reach-wasm: ${head}\n    ${result.message ?? ""}\n`);
    },
  });
  for (const line of summary(report)) io.stderr(`reach-wasm: ${line}\n`);
  const junit = values.junit;
  if (junit !== undefined) await writeFileAtomic(junit, new TextEncoder().encode(junitXml(report)));
  if (values.json) io.stdout(JSON.stringify(report) + "\n");
  return report.passed ? 0 : 1;
}
