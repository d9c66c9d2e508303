/**
 * A Go program under the real CLI: tests/cli/go/main.go (the Go SDK at the CLI's version from the Go module proxy,
 * built here once and kept in the toolchain cache) runs through Automation API's inline-program server
 * (pulumi-language-go is not served by the Go module proxy) and constructs NetTuning remotely; the engine reaches this
 * package's component provider attached with PULUMI_DEBUG_PROVIDERS. preview, up, an unchanged up and destroy, checked
 * on the host.
 */
import { spawnSync } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { clearSessions, countKinds, logSessions, providerLabel, sessions, startComponentPlugin, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { inlineProgram, otherLanguageLifecycle } from "./fixtures";

jest.setTimeout(900_000);

/** The program's binary, built once per source (go.mod + main.go) into the toolchain cache. */
function goProgram(): string {
  const src = path.join(__dirname, "go");
  const files = ["go.mod", "main.go"].map((f) => fs.readFileSync(path.join(src, f)));
  const hash = createHash("sha256").update(Buffer.concat(files)).digest("hex").slice(0, 16);
  const bin = path.join(toolchain().dir, "go-programs", `ntgo-${hash}`);
  if (fs.existsSync(bin)) return bin;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "nt-cli-go-build-"));
  for (const f of ["go.mod", "main.go"]) fs.copyFileSync(path.join(src, f), path.join(work, f));
  const env = { ...process.env, GOFLAGS: "-mod=mod", CGO_ENABLED: "0", GOTOOLCHAIN: "local" };
  for (const args of [["mod", "tidy"], ["build", "-trimpath", "-o", `${bin}.tmp`, "."]]) {
    const r = spawnSync("go", args, { cwd: work, env, encoding: "utf8", timeout: 1_200_000 });
    if (r.status !== 0) throw new Error(`go ${args.join(" ")} of tests/cli/go failed (exit ${r.status ?? r.signal}):\n${r.stderr}`);
  }
  fs.renameSync(`${bin}.tmp`, bin);
  fs.rmSync(work, { recursive: true, force: true });
  return bin;
}

let host: LabHost;
let bin = "";
let plugin: Awaited<ReturnType<typeof startComponentPlugin>> | undefined;
// the build first, with a timeout of its own (a cold Go build cache takes minutes; useLab's set-up allows 120 s)
beforeAll(() => {
  bin = goProgram();
}, 1_200_000);
useLab("cligo", 1, async (hs) => {
  host = hs[0];
  await logSessions(host);
  plugin = await startComponentPlugin();
}, async () => plugin?.stop());

const SYSCTLS = { "net.core.somaxconn": 8192, "net.ipv4.tcp_fin_timeout": 24 };

test(`Go (Go SDK v3.248.0, Automation API inline program + ${providerLabel()}): preview, up, an unchanged up, destroy`, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-cli-go-"));
  const run = (op: string) => inlineProgram([bin], host, plugin!.env, dir, op, SYSCTLS);
  // sessions since the last call (each step's own)
  const sessionsOf = async () => {
    const c = countKinds(await sessions(host));
    await clearSessions(host);
    return c;
  };
  await clearSessions(host);
  await otherLanguageLifecycle(host, SYSCTLS, run, sessionsOf);
  fs.rmSync(dir, { recursive: true, force: true });
});
