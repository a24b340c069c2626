// vitest runs the CLI in process from src/: there is no built worker script for src/, so engine calls run inline.
// The CLI's own tests of the engine thread (signals) spawn the built CLI instead.
import { setInlineEngine } from "../src/platform/engine-thread.ts";

setInlineEngine(true);
