/**
 * Seeing a run: the run view (`buildRunView`), `show` (terminal timeline and JSON), the self-contained HTML report,
 * and `diff`. Web-standard: everything works on capsule entries and returns text, HTML or JSON; only `src/cli/`
 * reads files and writes to the terminal.
 * @module
 */
export { buildRunView } from "./model.ts";
export type { ArtifactView, RunSource, RunView, StepView, StopView, TerminalView, ViolationView, WorkspaceView } from "./model.ts";
export { renderShow, totalFuel } from "./show.ts";
export type { ShowOptions } from "./show.ts";
export { JSON_VALUE_LIMIT, showJson } from "./show-json.ts";
export { renderReport, reportCsp } from "./html.ts";
export type { ReportOptions } from "./html.ts";
export { verifyForReport } from "./verification.ts";
export { buildStepStates, fileSha256, workspaceDigest } from "./step-states.ts";
export type { MemoryState, RunStates, StateBasis, StepState, WorkspaceState } from "./step-states.ts";
export { needsReplay, statesJson } from "./states-json.ts";
export { redactionOf } from "./_replayed-states.ts";
export type { RecordedEnds, ReplayedRun, ReplayedStep } from "./_replayed-states.ts";
export { directParents, isRunHash, lineageOf } from "./lineage.ts";
export type { ChildLink, ForkLink, LineageView } from "./lineage.ts";
export { reportFileName } from "./_html-lineage.ts";
export type { LineageLinks } from "./_html-lineage.ts";
export type { ReportVerification } from "./verification.ts";
export { diffRuns } from "./diff.ts";
export type { FirstDivergence, PathChanges, RunDiff } from "./diff.ts";
export { renderDiff } from "./diff-text.ts";
export { diffLines } from "./text-diff.ts";
export type { DiffLine } from "./text-diff.ts";
export { workspaceChanges } from "./workspace-diff.ts";
export type { WorkspaceChanges } from "./workspace-diff.ts";
export { layers, renderPlanGraph } from "./graph.ts";
export { renderTimeline } from "./timeline.ts";
export { otelTrace, runSpanIdOf, traceIdOf, virtualClock } from "./otel.ts";
export type { EventClock, OtelOptions, OtelSpan, OtelTrace, OtelValue } from "./otel.ts";
export { encodeOtlpJson } from "./otlp-json.ts";
