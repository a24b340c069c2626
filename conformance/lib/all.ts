/**
 * Every runtime-neutral conformance suite, in a fixed order. Both runners (Node/vitest and Deno) run exactly this.
 * @module
 */
import { capsuleArchiveCases } from "./capsule-archive-cases.ts";
import { capsuleCases } from "./capsule-cases.ts";
import { chainCases } from "./chain-cases.ts";
import { deprecationCases } from "./deprecation-cases.ts";
import { determinismCases } from "./determinism-cases.ts";
import { federationCases } from "./federation-cases.ts";
import { jcsCases } from "./jcs-cases.ts";
import { parallelCases } from "./parallel-cases.ts";
import { pythonCases } from "./python-cases.ts";
import { reportCases } from "./report-cases.ts";
import { runModelCases } from "./runmodel-cases.ts";
import { schemaCases } from "./schema-cases.ts";
import { toolCases } from "./tool-cases.ts";
import { trustCases } from "./trust-cases.ts";
import { wasiFsCases } from "./wasi-fs-cases.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";

/** A named group of cases. */
export type Suite = { suite: string; cases: ConformanceCase[] };

/**
 * All suites.
 * @param io file access rooted at conformance/
 * @returns the suites in a fixed order
 */
export function allSuites(io: ConformanceIO): Suite[] {
  return [
    { suite: "schema", cases: schemaCases(io) },
    { suite: "jcs", cases: jcsCases(io) },
    { suite: "determinism", cases: determinismCases(io) },
    { suite: "hash-chain", cases: chainCases(io) },
    { suite: "tools", cases: toolCases(io) },
    { suite: "python", cases: pythonCases(io) },
    { suite: "trust", cases: trustCases(io) },
    { suite: "capsule-archive", cases: capsuleArchiveCases(io) },
    { suite: "capsules", cases: capsuleCases(io) },
    { suite: "parallel", cases: parallelCases(io) },
    { suite: "runmodel", cases: runModelCases(io) },
    { suite: "wasi-fs", cases: wasiFsCases(io) },
    { suite: "federation", cases: federationCases(io) },
    { suite: "report", cases: reportCases(io) },
    { suite: "deprecations", cases: deprecationCases(io) },
  ];
}

/** File name of the committed per-case fingerprints both runtimes must reproduce. */
export const FINGERPRINTS_FILE = "fingerprints.json";
