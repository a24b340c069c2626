import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "conformance/node/**/*.test.ts", "scripts/**/*.test.ts", "tests/**/*.test.ts"],
    testTimeout: 20_000,
    pool: "forks",
    setupFiles: ["./tests/_setup-home.ts"],
  },
});
