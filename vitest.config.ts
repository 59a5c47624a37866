import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Finds the PostgreSQL server for the storage tests once (or prints the one line saying they are skipped).
    globalSetup: ["test/postgres-setup.ts"],
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: "test-results.json" }]],
  },
});
