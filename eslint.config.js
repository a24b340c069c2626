// Lint rules: the type-aware safety rules of CONVENTIONS.md, and the runtime boundary
// (only src/platform/ and src/cli/ may import node: modules or use Deno).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const nondeterminism = [
  { object: "Date", property: "now", message: "Use the virtual clock in src/determinism/ (seed 003 §3.3)." },
  { object: "Math", property: "random", message: "Use the seeded PRNG in src/determinism/ (seed 003 §3.3)." },
  { object: "crypto", property: "randomUUID", message: "Derive ids with src/canonical/ids.ts (seed 003 §3.3)." },
];

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "conformance/deno/", "templates/", "wasm-tools/", "packs/**", "conformance/schemas/", "**/*.js", "!eslint.config.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { project: ["./tsconfig.check.json"], tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // functions stay short enough to read in one screen (CONVENTIONS.md); every line counts, comments and blanks too
    files: ["src/**/*.ts"],
    ignores: ["src/**/*.test.ts"],
    rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }] },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/platform/**", "src/cli/**"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{ group: ["node:*"], allowTypeImports: true, message: "Only src/platform/ and src/cli/ may import node: modules." }],
      }],
      "no-restricted-globals": ["error", { name: "Deno", message: "Only src/platform/ and src/cli/ may use Deno." },
        { name: "process", message: "Only src/platform/ and src/cli/ may use process." },
        { name: "Buffer", message: "Use Uint8Array; Buffer is Node-only." }],
      "no-restricted-properties": ["error", ...nondeterminism],
    },
  },
  {
    // the standalone verifier is plain Node.js for third parties; so are the broken conformance adapters (fixtures)
    files: ["conformance/verifier/*.mjs", "conformance/fixtures/**/*.mjs"],
    languageOptions: { globals: { console: "readonly", process: "readonly", TextDecoder: "readonly", TextEncoder: "readonly", Buffer: "readonly", URL: "readonly" } },
    rules: { "@typescript-eslint/no-unused-vars": ["error", { varsIgnorePattern: "^_" }] },
  },
  {
    // the CLI's bin: a CommonJS script (scripts/bundle/script-loader.cjs)
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", __dirname: "readonly", process: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["src/**/*.test.ts", "src/**/_test-*.ts"],
    rules: { "no-restricted-imports": "off", "no-restricted-globals": "off" },
  },
);
