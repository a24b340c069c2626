import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "conformance/node/**/*.test.ts", "scripts/**/*.test.ts", "tests/**/*.test.ts"],
    testTimeout: 20_000,
    pool: "forks",
    // Two test files at a time whatever the core count: vitest's default (one fewer than the cores) ran the files one
    // by one on the 2-core CI machine, where most of a file's time is spent waiting on the processes it starts.
    maxWorkers: 2,
    minWorkers: 1,
    globalSetup: ["./tests/_global-setup.ts"],
    setupFiles: ["./tests/_setup-home.ts"],
  },
});
