/**
 * Arguments a component does not take are refused before anything is registered (review 7 H4): a typo or an untyped
 * JavaScript caller's extra field was dropped without a word (txqueuelen → no txqueuelen change; restoreOndelete:
 * false → the delete still restores; `sysctl:` → the profile's values applied instead of the caller's).
 */
import * as pulumi from "@pulumi/pulumi";
import { mockCommands, settleAfterAll } from "../../testkit/mocks";
import { SYSCTL_REPORT } from "./fixtures/report";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { webServer } from "../../provider/sizing";
import { InputError } from "../../provider/errors";
import { unknownArgProblems } from "../../components/validation";

const { resources } = mockCommands(SYSCTL_REPORT.report);
settleAfterAll();
const conn = { host: "198.18.7.1", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nK\n") };
let n = 0;
const host = () => ({ ...conn, host: `198.18.7.${++n}` });

function refusal(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error("no InputError");
}

test("NicQueues txqueuelen (for txQueueLength): refused, with the name to use; no child registered", async () => {
  const children = () => resources.filter((r) => r.type.startsWith("command:")).length;
  const before = children();
  const e = refusal(() => new NicQueues("typo", { connection: host(), interface: "eth0", features: { gro: true }, txqueuelen: 10000 } as never));
  expect(e.message).toContain('NicQueues "typo"');
  expect(e.problems).toEqual([expect.stringMatching(/^txqueuelen is not an argument of this resource, so it would be ignored: did you mean txQueueLength\? \(the arguments: connection, /)]);
  await new Promise((r) => setTimeout(r, 50));
  expect(children()).toBe(before); // no child command, so nothing can reach a host
});

test("NetTuning restoreOndelete and sysctl (for restoreOnDelete, sysctls): both refused in one error", () => {
  const e = refusal(() => new NetTuning("typos", { connection: host(), profile: webServer(), sysctl: { "net.core.somaxconn": 1024 }, restoreOndelete: false } as never));
  expect(e.problems).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^sysctl is not an argument of this resource, so it would be ignored: did you mean sysctls\?/),
      expect.stringMatching(/^restoreOndelete is not an argument of this resource, so it would be ignored: did you mean restoreOnDelete\?/),
    ]),
  );
});

test("a name far from every argument: remove it; every known argument (livePreview included) passes", () => {
  expect(unknownArgProblems({ colour: 1 }, ["connection", "sysctls"]).map((x) => x.message)).toEqual([
    "colour is not an argument of this resource, so it would be ignored: remove it (the arguments: connection, sysctls)",
  ]);
  expect(() => new NetTuning("known", { connection: host(), sysctls: { "net.core.somaxconn": 1024 }, livePreview: false, fileName: undefined })).not.toThrow();
  expect(() => new NicQueues("knownq", { connection: host(), interface: "eth0", txQueueLength: 2000, livePreview: false })).not.toThrow();
});

test("a missing connection, a string, or one without host: refused naming connection (was a TypeError), also with Output values", () => {
  for (const [connection, msg] of [
    [undefined, "connection is required: the SSH connection of the host, { host, port, user, privateKey or password }"],
    ["root@host", 'connection "root@host" must be an object {'],
    [{ user: "root" }, "connection.host is missing: set it to the host's name or IP address"],
    [{ host: "", user: "root" }, 'connection.host "" is not a host name or address'],
  ] as const) {
    expect(refusal(() => new NetTuning("c", { connection, sysctls: { "net.core.somaxconn": 1024 } } as never)).problems).toEqual([expect.stringContaining(msg)]);
    expect(refusal(() => new NetTuning("co", { connection, sysctls: pulumi.output({ "net.core.somaxconn": 1024 }) } as never)).problems).toEqual([expect.stringContaining(msg)]);
    expect(refusal(() => new NicQueues("cq", { connection, interface: "eth0", txQueueLength: pulumi.output(2000) } as never)).problems).toEqual([expect.stringContaining(msg)]);
  }
  // an Output connection (or host) is left to the provider
  expect(() => new NetTuning("oc", { connection: pulumi.output({ host: "198.18.7.200", user: "root" }), sysctls: { "net.core.somaxconn": 1024 } })).not.toThrow();
});
