/**
 * Upgrading a stack made by 0.3.0 as released (main fe254e3, where this round started) to this version, under the real
 * `pulumi` CLI (issue #30, "Upgrading a stack created by 0.3.0"): a NetTuning and a NicQueues on a lab host as root,
 * created by the released package; then the same program with this checkout's package. The upgrade copies the new
 * engine once and updates each -apply (its `@engine` line names the new engine) in one session each; no value on the
 * host changes and the sysctl.d file and rc.local keep their bytes; the next `up` opens no apply session; destroy
 * puts back the host as it was before the 0.3.0 create.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CliProject, clearSessions, countKinds, explain, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import { snapshot } from "../../testkit/host";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { Declared, projectOn } from "./fixtures";

jest.setTimeout(900_000);

const V030 = "fe254e3";
const ROOT = path.join(__dirname, "../..");
let OLD = "";
let host: LabHost;
useLab("cliupgrade", 1, async (hs) => {
  toolchain();
  host = hs[0];
  await logSessions(host);
  // the released package, built as `npm install` from git builds it (`prepare` = `npm run build`), with this
  // checkout's node_modules (the same @pulumi/pulumi and @pulumi/command)
  OLD = fs.mkdtempSync(path.join(os.tmpdir(), "nt-v030-"));
  const sh = (cmd: string) => {
    const r = spawnSync("sh", ["-c", cmd], { cwd: OLD, encoding: "utf8", timeout: 300_000 });
    if (r.status !== 0) throw new Error(`${cmd}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  };
  sh(`git -C "${ROOT}" archive ${V030} | tar -x && ln -s "${ROOT}/node_modules" node_modules && npm run build --silent`);
});
afterAll(() => {
  if (OLD) fs.rmSync(OLD, { recursive: true, force: true });
});

const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const RMEM = "net.ipv4.tcp_rmem";

/** The host's values and file bytes: a snapshot without the engine's own state (journal, record, installed engine) and without modification times. */
function hostValues(s: string): string {
  return s
    .split("\n")
    .filter((l) => !/^(\/usr\/local|\/var\/lib)\//.test(l) && !/^[0-9a-f]{32} {2}(\/usr\/local|\/var\/lib)\//.test(l))
    .map((l) => (/^\/etc\/\S* [fdl] /.test(l) ? l.replace(/ [0-9.]+$/, "") : l))
    .join("\n");
}

describe(`upgrade from 0.3.0 (${V030}), real pulumi CLI + ${providerLabel()}`, () => {
  test("the engine copied once, each apply updated in one session, no host value or file byte changed; destroy restores the host of before", async () => {
    const pristine = await snapshot(host);
    const resources: Record<string, Declared> = {
      t: { kind: "sysctl", args: { sysctls: { [SOMAX]: 8123, [FIN]: 17, [RMEM]: "4096 99999 6291456" } } },
      q: { kind: "nic", args: { interface: host.iface, persistence: "rc.local", features: { gro: true }, txQueueLength: 2345, rps: { cpus: [1], flowEntriesPerQueue: 2048 } } },
    };
    const p = await projectOn(host, "ntupgrade", "root", resources);
    try {
      const up = async () => {
        await clearSessions(host);
        const r = await p.up({ skipPreview: true });
        expect([r.code, r.code === 0 ? "" : explain(r)]).toEqual([0, ""]);
        return countKinds(await sessions(host));
      };
      p.usePackage(OLD);
      expect(await up()).toEqual({ "live-read": 1, sftp: 1, apply: 2 });
      const applied = await snapshot(host);
      expect((await host.exec(`cat /proc/sys/net/core/somaxconn /sys/class/net/${host.iface}/tx_queue_len`)).stdout.split("\n").slice(0, 2)).toEqual(["8123", "2345"]);

      p.usePackage();
      const pv = await p.preview({ diff: true });
      expect([pv.code, pv.code === 0 ? "" : explain(pv)]).toEqual([0, ""]);
      console.log(`the upgrade's preview --diff (${providerLabel()}):\n${pv.stdout}`);
      // what a reviewer sees: nothing on the host will change, the applies and the engine copy are updated
      expect(pv.stdout).not.toMatch(/ → /);
      expect(pv.stdout).toMatch(/~ \d+ to update/);
      expect(pv.stdout).not.toMatch(/to create|to delete|to replace/);

      expect(await up()).toEqual({ "live-read": 1, sftp: 1, apply: 2 });
      expect(hostValues(await snapshot(host))).toBe(hostValues(applied));
      expect(await up()).toEqual({ "live-read": 1 });

      const d = await p.destroy();
      expect([d.code, d.code === 0 ? "" : explain(d)]).toEqual([0, ""]);
      expect(await snapshot(host)).toBe(pristine);
    } finally {
      await p.destroy().catch(() => undefined);
      p.remove();
    }
  });
});
