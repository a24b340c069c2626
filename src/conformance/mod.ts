/**
 * The conformance suite of seed 003 §10, runnable against any implementation of the reach-wasm CLI contract
 * (`conformance/ADAPTER.md`): schema, determinism, replay, policy and federation cases that each name the clause
 * they check. Web-standard: the platform hands in a {@link ConformanceHost} (processes, files, ports, time).
 * @module
 */
export { blackBoxCases, junitXml, runConformance } from "./runner.ts";
export type { ConformanceOptions } from "./runner.ts";
export { inProcessCases, NEUTRAL_SUITES } from "./in-process.ts";
export type { NeutralCase, NeutralSuite } from "./in-process.ts";
export { CATEGORIES } from "./types.ts";
export type { CaseResult, Category, CategoryResult, ConformanceHost, ConformanceReport, ExecResult, ServedProcess } from "./types.ts";
export type { ConformanceCase } from "./case.ts";
