/**
 * The `pulumi preview --diff` excerpts of docs/operations.md ("Previews in pull-request review"), produced from the
 * real rendered inputs:
 * the quickstart program evaluated under mocks (testkit/harness `capture`), then a second version of it.
 *
 *   npx ts-node --transpile-only -P tsconfig.dev.json tests/examples/readmeExcerpts.ts   # prints the markdown blocks
 *
 * tests/examples/examples.test.ts checks that the page contains exactly these blocks, so the docs cannot drift
 * from what the components render.
 */
import * as pulumi from "@pulumi/pulumi";
import { NetTuning } from "../../index";
import { capture, PulumiProgram } from "../../testkit/harness";
import { configFor, exampleProgram } from "./load";
import { lineDiff, planPart } from "./render";
import { ENGINE_BOOT } from "../../provider/host/programs";

export const PROJECT = "net-tuning-quickstart";
export const STACK = "prod";
const CONFIG = configFor(PROJECT, { host: "203.0.113.10", privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\n…\n" });

/** Version 2 of examples/quickstart: a pull request that raises somaxconn and the buffers' max, drops tcp_fin_timeout. */
export const quickstartV2: PulumiProgram = () => {
  const config = new pulumi.Config();
  const tuning = new NetTuning("quickstart", {
    connection: { host: config.require("host"), port: 22, user: "root", privateKey: config.requireSecret("privateKey") },
    sysctls: {
      "net.core.somaxconn": 16384,
      "net.ipv4.tcp_max_syn_backlog": 8192,
      "net.ipv4.tcp_rmem": [4096, 131072, 33554432],
      "net.ipv4.tcp_wmem": [4096, 65536, 33554432],
      "net.ipv4.ip_local_port_range": [10000, 65001],
    },
  });
  return { filePath: tuning.filePath };
};

async function applyStdin(program: PulumiProgram): Promise<string> {
  const c = await capture(program, { project: PROJECT, stack: STACK, preview: true, config: CONFIG, secretConfigKeys: [`${PROJECT}:privateKey`] });
  if (c.error) throw c.error;
  const apply = c.resources.find((r) => r.name === "quickstart-apply");
  if (!apply) throw new Error("quickstart-apply not registered");
  // the engine's hash changes with every engine change: the page shows a placeholder for it
  // and the end line's sum changes with every plan: a placeholder too; the bootstrap (one line of sh, the same in
  // every apply stdin of a version) is named, not printed
  const stdin = String(apply.inputs.stdin);
  if (stdin.split("\n")[1] !== ENGINE_BOOT) throw new Error("the apply stdin's second line is not the bootstrap");
  return stdin
    .replace(`\n${ENGINE_BOOT}\n`, "\n<the apply bootstrap: one line of sh, the same for every resource>\n")
    .replace(/^@engine (\S+) [0-9a-f]{64}$/m, "@engine $1 <sha256 of the engine file>")
    .replace(/^@end [0-9a-f]{64}$/m, "@end <sha256 of the plan>");
}

export interface Excerpts {
  /** The plan part of the create's stdin. */
  create: string;
  /** The line diff of the apply stdin between examples/quickstart and {@link quickstartV2}. */
  diff: string;
  /** Lines of the whole stdin (plan + host program). */
  stdinLines: number;
}

export async function readmeExcerpts(): Promise<Excerpts> {
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    const v1 = await applyStdin(exampleProgram("quickstart"));
    const v2 = await applyStdin(quickstartV2);
    const create = "```text\n" + planPart(v1) + "```\n";
    // The host program after @program is identical in both versions: only the plan part can differ.
    const diff = "```diff\n" + lineDiff(planPart(v1), planPart(v2), 2).join("\n") + "\n```\n";
    return { create, diff, stdinLines: v1.split("\n").length };
  } finally {
    console.warn = warn;
  }
}

if (require.main === module) {
  readmeExcerpts().then(
    (e) => process.stdout.write(`<!-- generated:preview-create -->\n${e.create}<!-- /generated -->\n\n<!-- generated:preview-diff -->\n${e.diff}<!-- /generated -->\n`),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
