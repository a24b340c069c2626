// The service commands' help names what the service takes.
import { describe, expect, it } from "vitest";
import { RunStatusSchema } from "../service/schemas.ts";
import { RUNS_LIST } from "./specs-service.ts";

describe("runs list --status", () => {
  it("names exactly the states the service filters by", () => {
    const help = (RUNS_LIST.options as Record<string, { help?: string }>)["status"]?.help ?? "";
    const named = /\(([A-Z, ]+)\)/.exec(help)?.[1]?.split(", ") ?? [];
    expect(named).toEqual(RunStatusSchema.options);
  });
});
