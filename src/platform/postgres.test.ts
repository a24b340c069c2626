// Opening the service database: a --db URL the driver cannot parse is a mistake to fix (exit 2 at once), not a
// server that is down (which `serve` and `worker` wait for).
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { openDatabase } from "./postgres.ts";

describe("openDatabase with a URL", () => {
  it("refuses a URL that is no URL as bad input, without its password, instead of as an unavailable store", async () => {
    const err = await openDatabase({ url: "postgres://u:s3cret@[bad/db" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).code).toBe("PROTO_INVALID_ARGUMENT");
    expect((err as ReachError).details["storeUnavailable"]).toBeUndefined();
    expect((err as ReachError).message).not.toContain("s3cret");
  });
});
