/**
 * Refusals under the real `pulumi` CLI (issue #30): what the live read refuses at preview, for two resources of one
 * Node.js program, each printed once, cleanly (the message, as a RunError prints: no "InputError:" prefix, no stack
 * trace), against its own resource; the host unchanged and only the live read's session opened.
 *
 * Before the fix, a refusal that arrived after the program's main module had returned (the live reads settle later)
 * was printed by @pulumi/pulumi/cmd/run's first handler of unhandled rejections, which logs `err.stack` once the
 * program is no longer running: "error: InputError: NicQueues …" followed by the stack frames.
 */
import { clearSessions, countKinds, explain, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { snapshot } from "../../testkit/host";
import { projectOn } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
useLab("clirefuse", 1, async (hs) => {
  toolchain();
  host = hs[0];
  await logSessions(host);
});

test(`real pulumi CLI + ${providerLabel()}: two resources refused by the live read at preview, each printed once, cleanly, against its own name`, async () => {
  const before = await snapshot(host);
  // a host-wide key, absent in the lab host's network namespace; channels above the veth's maximum (4)
  const p = await projectOn(host, "ntrefuse", "root", {
    sys: { kind: "sysctl", args: { sysctls: { "net.core.netdev_max_backlog": 5000 } } },
    nic: { kind: "nic", args: { interface: host.iface, persistence: "none", channels: { rx: 8 } } },
  });
  await clearSessions(host);
  const pv = await p.preview();
  expect([pv.code, explain(pv)]).toEqual([1, expect.any(String)]);
  const out = pv.stdout + pv.stderr;
  // once each in the Diagnostics (the progress lines above show each error's first line too)
  const diagnostics = out.slice(out.indexOf("\nDiagnostics:\n"), out.indexOf("\nResources:\n"));
  expect(diagnostics.match(/error: NetTuning "sys": 1 invalid input:\n/g)).toHaveLength(1);
  expect(diagnostics.match(/error: NicQueues "nic": 1 invalid input:\n/g)).toHaveLength(1);
  expect(out).toContain(`  - channels.rx 8 exceeds ${host.iface} maximum 4 (driver veth, ethtool -l ${host.iface}); use at most 4`);
  expect(out).toMatch(/net\.core\.netdev_max_backlog \([^)]*host-wide: absent inside a network namespace or container\)/);
  // no stack trace, no error type: the messages only
  expect(out).not.toContain("InputError");
  expect(out).not.toMatch(/^\s+at .*\.(js|ts):\d+:\d+\)?$/m);
  // no child registered, nothing on the host changed: the live read's one session
  expect(out).not.toContain("command:remote:");
  expect(countKinds(await sessions(host))).toEqual({ "live-read": 1 });
  expect(await snapshot(host)).toBe(before);
  p.remove();
});
