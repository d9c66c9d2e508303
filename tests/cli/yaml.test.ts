/**
 * A Pulumi YAML program under the real CLI: the real pulumi-language-yaml (v1.38.0, built by scripts/pulumi-toolchain.sh)
 * runs it, and the engine reaches this package as a component provider served by the Node SDK's own host for
 * component plugins (`node @pulumi/pulumi/cmd/run-plugin <package dir>`, as pulumi-language-nodejs's RunPlugin
 * starts it), attached with PULUMI_DEBUG_PROVIDERS because pulumi-language-nodejs is not served by the Go module proxy
 * (so `pulumi package add`, which needs it, cannot run here). One plugin process serves every command of the test, as
 * an attached provider does; within one `pulumi up` it serves the preview and the update.
 *
 * The first run of this test found the engine delivery missing from the update of a `pulumi up` (the plugin kept one
 * delivery map for its whole life, so the update reused the preview's): components/delivery.ts keys it by deployment.
 */
import * as fs from "fs";
import * as path from "path";
import { CliProject, clearSessions, countKinds, logSessions, providerLabel, sessions, startComponentPlugin, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { snapshot } from "../../testkit/host";
import { values } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
let plugin: Awaited<ReturnType<typeof startComponentPlugin>> | undefined;
useLab("cliyaml", 1, async (hs) => {
  toolchain();
  host = hs[0];
  await logSessions(host);
  plugin = await startComponentPlugin();
}, async () => plugin?.stop());

const program = (somaxconn: number) => `name: ntyaml
runtime: yaml
config:
  host: { type: string }
  port: { type: integer }
  privateKey: { type: string, secret: true }
resources:
  web:
    type: net-tuning:index:NetTuning
    properties:
      connection:
        host: \${host}
        port: \${port}
        user: root
        privateKey: \${privateKey}
      sysctls:
        net.core.somaxconn: ${somaxconn}
        net.ipv4.tcp_rmem: [4096, 131072, 8388608]
  nic:
    type: net-tuning:index:NicQueues
    properties:
      connection:
        host: \${host}
        port: \${port}
        user: root
        privateKey: \${privateKey}
      interface: eth0
      txQueueLength: 2500
      persistence: none
outputs:
  applied: \${web.applied}
  nicApplied: \${nic.applied}
`;

const KEYS = ["net.core.somaxconn", "net.ipv4.tcp_rmem"];

test(`YAML (pulumi-language-yaml + ${providerLabel()}): preview --diff, up, an unchanged up, a change, destroy`, async () => {
  const c = host.connection("root");
  const originals = await values(host, KEYS);
  const txq = async () => (await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim();
  const txqBefore = await txq();
  const before = await snapshot(host);
  const p = new CliProject({ name: "ntyaml", program: "", config: { host: c.host, port: String(c.port) }, secrets: { privateKey: c.privateKey } });
  fs.writeFileSync(path.join(p.dir, "Pulumi.yaml"), program(8192));
  await p.init();
  const env = plugin!.env;
  const run = (args: string[]) => p.cli([...args, "--non-interactive", "--stack", p.stack], undefined, 300_000, env);

  await clearSessions(host);
  const pv = await run(["preview", "--diff"]);
  expect(pv.code).toBe(0);
  expect(pv.stdout).toContain("+ net-tuning:index:NetTuning: (create)");
  expect(pv.stdout + pv.stderr).toContain(`net.core.somaxconn: ${originals["net.core.somaxconn"]} → 8192`);
  expect(pv.stdout + pv.stderr).toMatch(/eth0\/txqueuelen: \d+ → 2500/);
  // both resources' live reads in one session: one per program run and host
  expect(countKinds(await sessions(host))).toEqual({ "live-read": 1 });

  // `pulumi up` with its preview: one plugin process serves both deployments
  await clearSessions(host);
  const up = await run(["up", "--yes"]);
  expect(up.code).toBe(0);
  expect(up.stdout).toMatch(/\+ 8 created/);
  expect(await values(host, KEYS)).toEqual({ "net.core.somaxconn": "8192", "net.ipv4.tcp_rmem": "4096 131072 8388608" });
  expect(await txq()).toBe("2500");
  // the preview's and the update's live read, one engine copy shared by both resources, two applies
  expect(countKinds(await sessions(host))).toEqual({ "live-read": 2, sftp: 1, apply: 2 });

  await clearSessions(host);
  const same = await run(["up", "--yes", "--skip-preview"]);
  expect(same.code).toBe(0);
  expect(same.stdout).toMatch(/8 unchanged/);
  expect(countKinds(await sessions(host))).toEqual({ "live-read": 1 });

  fs.writeFileSync(path.join(p.dir, "Pulumi.yaml"), program(6144));
  await clearSessions(host);
  const changed = await run(["up", "--yes", "--skip-preview"]);
  expect(changed.code).toBe(0);
  expect(await values(host, ["net.core.somaxconn"])).toEqual({ "net.core.somaxconn": "6144" });
  expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, apply: 1 });

  await clearSessions(host);
  const d = await run(["destroy", "--yes", "--skip-preview"]);
  expect(d.code).toBe(0);
  expect(await values(host, KEYS)).toEqual(originals);
  expect(await txq()).toBe(txqBefore);
  expect(countKinds(await sessions(host))).toEqual({ restore: 2 });
  expect((await snapshot(host)).replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, "")).toBe(before.replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, ""));
  p.remove();
});
