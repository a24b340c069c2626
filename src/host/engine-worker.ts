/**
 * The engine thread (see `engine-thread.ts`): runs one engine call — a run or a session — for the thread that
 * started it, reading the shared interrupt word at every fuel refill and answering an abort message by aborting
 * the run's signal (for a tool waiting on the host). A platform thread (`src/platform/threads.ts`).
 * @module
 */
import { openSession, runEngine } from "../engine/mod.ts";
import { siblingScript } from "../platform/sibling.ts";
import type { EngineRun, EngineSession } from "../engine/mod.ts";
import { toReachError } from "../protocol/mod.ts";
import { threadChannel } from "../platform/threads.ts";
import type { ThreadChannel } from "../platform/threads.ts";
import { defaultEnvironment } from "./environment.ts";
import { engineRequest } from "./engine-request.ts";
import type { FromWorker, ToWorker, WireRun } from "./engine-wire.ts";

type Channel = ThreadChannel<ToWorker, FromWorker>;

function wire(run: EngineRun): WireRun {
  return { ...run, error: run.error === null ? null : run.error.toDetails() };
}


/**
 * Serve engine calls on this thread until it is terminated.
 * @param ch the channel to the thread that started this one
 */
function serve(ch: Channel): void {
  // Step threads start from this file's sibling (in the CLI bundle this entry sits beside step-worker.mjs).
  const env = defaultEnvironment({ stepWorkerUrl: siblingScript("./step-worker", import.meta.url) });
  let session: EngineSession | null = null;
  // One call at a time; a pooled worker serves many, each with its own controller (an abort applies to the current).
  let controller = new AbortController();
  ch.listen((m) => {
    if (m.kind === "run" || m.kind === "session") controller = new AbortController();
    void (async () => {
      try {
        if (m.kind === "abort") controller.abort(m.reason);
        else if (m.kind === "run") {
          const run = await runEngine(env, engineRequest(m.request, m.interrupt, controller, (progress) => ch.send({ kind: "progress", progress })));
          ch.send({ kind: "done", run: wire(run) }, [run.capsule.bytes.buffer as ArrayBuffer]);
        } else if (m.kind === "session") {
          session = await openSession(env, engineRequest(m.request, m.interrupt, controller, (progress) => ch.send({ kind: "progress", progress })));
          ch.send({ kind: "session", tools: session.tools(), pack: session.pack, budget: session.budget, scope: session.scope });
        } else if (m.kind === "call") {
          try {
            const a = await session!.call(m.tool, m.args);
            ch.send({ kind: "answer", id: m.id, answer: a.ok ? a : { ...a, error: a.error.toDetails() } });
          } catch (err) {
            ch.send({ kind: "answer", id: m.id, answer: { thrown: toReachError(err, "EXEC_TOOL_FAILED").toDetails() } });
          }
        } else if (m.kind === "workspace") {
          ch.send({ kind: "workspace", id: m.id, files: session!.workspace() });
        } else if (m.kind === "read") {
          const bytes = session!.readWorkspace(m.path);
          ch.send({ kind: "file", id: m.id, bytes }, bytes === null ? [] : [bytes.buffer as ArrayBuffer]);
        } else if (m.kind === "close") {
          const run = await session!.close(m.aborted);
          ch.send({ kind: "done", run: wire(run) });
        }
      } catch (err) {
        ch.send({ kind: "error", error: toReachError(err, "EXEC_TOOL_FAILED").toDetails() });
      }
    })();
  });
}

// No top-level await: an entry that a bundle may load as a script stays free of it (as `src/cli/main.ts`).
void threadChannel<ToWorker, FromWorker>().then(serve);
