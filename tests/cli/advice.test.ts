/**
 * Issue #33, "one advice per finding", under the real `pulumi` CLI on 3 lab hosts: a program of 3 NetTuning resources
 * (one per host) that give the same advice shows it ONCE, one warning naming the 3 resources and their hosts, in
 * `pulumi preview` and in `pulumi up --skip-preview` (components/advice.ts); the engine waits for that flush (the
 * batch holds the SDK's rpcKeepAlive), so the line is never lost when the program ends. The up applies all three.
 */
import { CliProject, providerLabel, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";

jest.setTimeout(600_000);

let hosts: LabHost[] = [];
useLab("cliadv", 3, async (hs) => {
  toolchain();
  hosts = hs;
});

const PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");
const { NetTuning } = require("net-tuning");
const cfg = new pulumi.Config();
JSON.parse(cfg.require("hosts")).forEach((h, i) => {
  new NetTuning("adv-" + i, {
    connection: { host: h.host, port: h.port, user: h.user, privateKey: cfg.requireSecret("key" + i) },
    sysctls: { "net.core.somaxconn": 100000 },
  });
});
`;

test(`3 resources with the same advice: one warning naming all 3, in preview and up (real pulumi CLI + ${providerLabel()})`, async () => {
  const conns = hosts.map((h) => h.connection("root"));
  const p = new CliProject({
    name: "ntadvice",
    program: PROGRAM,
    config: { hosts: JSON.stringify(conns.map((c) => ({ host: c.host, port: c.port, user: c.user }))) },
    secrets: Object.fromEntries(conns.map((c, i) => [`key${i}`, c.privateKey])),
  });
  await p.init();
  const names = conns.map((c, i) => `NetTuning "adv-${i}" (${c.host})`).join(", ");
  const expected = `3 resources (${names}): net.core.somaxconn = 100000 wraps to 34464 on pre-4.1 kernels`;
  // every line of the advice is the grouped one (the CLI shows a diagnostic in its progress and again under
  // "Diagnostics:"), and the Diagnostics section holds it once: it held it 3 times, once per resource, before
  const check = (out: string) => {
    const lines = out.split("\n").filter((l) => l.includes("net.core.somaxconn = 100000 wraps"));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const l of lines) expect(l).toContain(expected);
    const diag = out.slice(out.indexOf("Diagnostics:"));
    expect(diag.split("\n").filter((l) => l.includes("net.core.somaxconn = 100000 wraps"))).toHaveLength(1);
  };
  try {
    const pv = await p.preview();
    const out = pv.stdout + pv.stderr;
    expect(pv.code).toBe(0);
    check(out);
    const up = await p.up({ skipPreview: true });
    const upOut = up.stdout + up.stderr;
    expect(up.code).toBe(0);
    check(upOut);
    for (const h of hosts) expect((await h.exec("cat /proc/sys/net/core/somaxconn")).stdout.trim()).toBe("100000");
  } finally {
    expect((await p.destroy()).code).toBe(0);
    p.remove();
  }
});
