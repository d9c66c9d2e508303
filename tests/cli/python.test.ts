/**
 * A Python program under the real CLI: tests/cli/python/program.py, with the pulumi SDK from PyPI at the CLI's version
 * (the toolchain's venv), runs through Automation API's inline-program server (pulumi-language-python is not served by
 * the Go module proxy) and constructs NetTuning remotely; the engine reaches this package's component provider
 * attached with PULUMI_DEBUG_PROVIDERS. preview, up, an unchanged up and destroy, checked on the host.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { clearSessions, countKinds, logSessions, providerLabel, sessions, startComponentPlugin, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { inlineProgram, otherLanguageLifecycle } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
let plugin: Awaited<ReturnType<typeof startComponentPlugin>> | undefined;
useLab("clipy", 1, async (hs) => {
  toolchain();
  host = hs[0];
  await logSessions(host);
  plugin = await startComponentPlugin();
}, async () => plugin?.stop());

const SYSCTLS = { "net.core.somaxconn": 8192, "net.ipv4.tcp_fin_timeout": 23 };

const py = (dir: string, op: string) =>
  inlineProgram([path.join(toolchain().dir, "python", "bin", "python"), path.join(__dirname, "python", "program.py")], host, plugin!.env, dir, op, SYSCTLS);

test(`Python (pulumi SDK from PyPI, Automation API inline program + ${providerLabel()}): preview, up, an unchanged up, destroy`, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-cli-py-"));
  fs.mkdirSync(path.join(dir, "state"));
  // sessions since the last call (each step's own)
  const sessionsOf = async () => {
    const c = countKinds(await sessions(host));
    await clearSessions(host);
    return c;
  };
  await clearSessions(host);
  await otherLanguageLifecycle(host, SYSCTLS, (op) => py(dir, op), sessionsOf);
  fs.rmSync(dir, { recursive: true, force: true });
});
