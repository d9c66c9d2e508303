/** Two projects: fast unit tests (no root, no network) and lab tests (real SSH hosts in network namespaces). */
const tsJest = ["ts-jest", { tsconfig: "tsconfig.dev.json" }];
module.exports = {
  // Lab and VM tests start hosts and guests; per-test budgets are set in those files where tighter.
  testTimeout: 900000,
  projects: [
    {
      displayName: "unit",
      testMatch: ["<rootDir>/tests/unit/**/*.test.ts", "<rootDir>/tests/examples/examples.test.ts"],
      transform: { "^.+\\.ts$": tsJest },
      testEnvironment: "node",
    },
    {
      // The package as users install it (npm pack, path, git; Node 22 + current SDK) and served over gRPC.
      displayName: "package",
      testMatch: ["<rootDir>/tests/package/**/*.test.ts"],
      transform: { "^.+\\.ts$": tsJest },
      testEnvironment: "node",
    },
    {
      displayName: "lab",
      globalSetup: "<rootDir>/testkit/lab/globalSetup.ts",
      testMatch: ["<rootDir>/tests/lab/**/*.test.ts", "<rootDir>/tests/harness/**/*.test.ts", "<rootDir>/tests/integration/**/*.test.ts", "<rootDir>/tests/reliability/**/*.test.ts", "<rootDir>/tests/examples/lab.test.ts", "<rootDir>/tests/safety/**/*.test.ts", "<rootDir>/tests/engine/**/*.test.ts", "<rootDir>/tests/live/**/*.test.ts", "<rootDir>/tests/adopt/**/*.test.ts", "<rootDir>/tests/audit/**/*.test.ts"],
      transform: { "^.+\\.ts$": tsJest },
      testEnvironment: "node",
    },
    {
      // The real pulumi CLI (scripts/pulumi-toolchain.sh) against lab hosts: testkit/cli.
      displayName: "cli",
      globalSetup: "<rootDir>/testkit/cli/globalSetup.ts",
      testMatch: ["<rootDir>/tests/cli/**/*.test.ts"],
      transform: { "^.+\\.ts$": tsJest },
      testEnvironment: "node",
    },
    {
      displayName: "vm",
      testMatch: ["<rootDir>/tests/vm/**/*.test.ts"],
      transform: { "^.+\\.ts$": tsJest },
      testEnvironment: "node",
    },
  ],
};
