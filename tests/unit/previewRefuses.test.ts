/**
 * Issue #32 items 11–13 and #33's endpoint, under mocks: the preview (the component's constructor, before any child is
 * registered) refuses what `up` refuses when the input alone shows it: a misspelt sysctl key (item 11a), a connection
 * that cannot log in (11b); an explicit NicQueues group object replaces the preset's (12); the documented
 * `profiles: [webServer, database]` recipe with the README's override advice (13); the non-secret `endpoint` output.
 */
import * as pulumi from "@pulumi/pulumi";
import { mockCommands, promiseOf, settleAfterAll } from "../../testkit/mocks";
import { SYSCTL_REPORT } from "./fixtures/report";

const { resources } = mockCommands(SYSCTL_REPORT.report);
settleAfterAll();

import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { InputError } from "../../provider/errors";
import { validateNic } from "../../provider/nic/validate";
import { nicPresets } from "../../provider/sizing";
import { resolveProfiles } from "../../provider/sizing/spec";

const key = pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nK\n");
let n = 0;
const host = () => ({ host: `198.18.20.${++n}`, user: "root", privateKey: key });

function refusal(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error("no InputError");
}
const children = () => resources.filter((r) => r.type.startsWith("command:")).length;

// (a misspelt key that arrives through an Output: one error for its resource, tests/unit/oneError.test.ts)
describe("item 11a: a misspelt sysctl key is an error at preview (the host refuses keys that do not exist)", () => {
  test("net.core.somaxcon: refused with the key it looks like and the fix; no child registered", async () => {
    const before = children();
    const e = refusal(() => new NetTuning("typo", { connection: host(), sysctls: { "net.core.somaxcon": 4096 } }));
    expect(e.problems).toEqual([
      "net.core.somaxcon = 4096 is not a catalogued key; it looks like net.core.somaxconn, and the host preflight refuses keys that do not exist. " +
        "Fix: rename it to net.core.somaxconn if that is what you meant, or list net.core.somaxcon in acknowledge if this kernel has that key.",
    ]);
    await new Promise((r) => setTimeout(r, 50));
    expect(children()).toBe(before);
  });

  test("every misspelt key of the resource in one error, with the other problems", () => {
    const e = refusal(() => new NetTuning("typos", { connection: host(), sysctls: { "net.core.somaxconnvalue": 1, "net.ipv4.tcp_keepalive_prob": 3, "net.core.rmem_max": -1 } }));
    expect(e.problems).toHaveLength(3);
    expect(e.problems.join("\n")).toContain("it looks like net.core.somaxconn");
    expect(e.problems.join("\n")).toContain("it looks like net.ipv4.tcp_keepalive_probes");
  });

  test("the documented escape hatch stays: a key listed in acknowledge is applied (the host checks it exists)", async () => {
    const t = new NetTuning("acked", { connection: host(), sysctls: { "net.core.somaxcon": 4096 }, acknowledge: ["net.core.somaxcon"] });
    expect(await promiseOf(t.acknowledged)).toEqual([expect.stringMatching(/^net\.core\.somaxcon \(acknowledged\): net\.core\.somaxcon = 4096 is not a catalogued key/)]);
    expect(await promiseOf(t.warnings)).not.toContainEqual(expect.stringContaining("somaxcon"));
  });

  test("an unknown key that resembles no catalogued key is left to the host (it may exist there)", () => {
    expect(() => new NetTuning("unknown", { connection: host(), sysctls: { "net.ipv4.conf.eth7.arp_ignore": 1, "vm.zone_reclaim_mode": 0 } })).not.toThrow();
  });

});

describe("item 11b: a connection without a private key, a password or an agent is refused at preview", () => {
  const saved = process.env.SSH_AUTH_SOCK;
  beforeEach(() => delete process.env.SSH_AUTH_SOCK);
  afterAll(() => {
    if (saved !== undefined) process.env.SSH_AUTH_SOCK = saved;
  });
  const noAuth = () => ({ host: `198.18.21.${++n}`, user: "root" });
  const message =
    "connection has no privateKey, password or agentSocketPath (and SSH_AUTH_SOCK is not set), so the SSH login would fail on the host: " +
    "set connection.privateKey (e.g. config.requireSecret(\"sshKey\")), connection.password, or connection.agentSocketPath (an ssh-agent socket)";
  test("NetTuning and NicQueues: refused naming the fields and the fix; no child registered", async () => {
    await new Promise((r) => setTimeout(r, 200)); // the children of the tests before are registered
    const before = children();
    expect(refusal(() => new NetTuning("noauth", { connection: noAuth(), sysctls: { "net.core.somaxconn": 4096 } })).problems).toEqual([message]);
    expect(refusal(() => new NicQueues("noauthq", { connection: noAuth(), interface: "eth0", txQueueLength: 2000 })).problems).toEqual([message]);
    await new Promise((r) => setTimeout(r, 50));
    expect(children()).toBe(before);
  });
  test("the property path names connection", () => {
    const e = refusal(() => new NetTuning("noauthp", { connection: noAuth(), sysctls: { "net.core.somaxconn": 4096 } })) as InputError & { errors: { propertyPath: string }[] };
    expect(e.errors.map((x) => x.propertyPath)).toEqual(["connection"]);
  });
  test("any one of them is enough, also as an Output (a secret from config); an empty string is none", () => {
    for (const auth of [{ privateKey: key }, { password: pulumi.secret("pw") }, { agentSocketPath: "/run/agent.sock" }, { privateKey: "k" }]) {
      expect(() => new NetTuning(`auth${++n}`, { connection: { ...noAuth(), ...auth }, sysctls: { "net.core.somaxconn": 4096 } })).not.toThrow();
    }
    expect(() => new NetTuning(`auth${++n}`, { connection: { ...noAuth(), password: "" }, sysctls: { "net.core.somaxconn": 4096 } })).toThrow(/connection has no privateKey, password or agentSocketPath/);
  });
  test("an agent from the environment (SSH_AUTH_SOCK) counts, as for the command provider and the live read", () => {
    process.env.SSH_AUTH_SOCK = "/tmp/agent.sock";
    expect(() => new NetTuning("envagent", { connection: noAuth(), sysctls: { "net.core.somaxconn": 4096 } })).not.toThrow();
  });
});

describe("item 12: an explicit NicQueues group object replaces the preset's as a whole", () => {
  const plan = (args: Record<string, unknown>) => validateNic({ interface: "eth0", preset: nicPresets.throughput(), ...args }, "NicQueues \"x\"");
  test("rps: { cpus: \"all\" } does not carry the preset's onlyWhenQueuesBelowCpus, flow entries or sock flow entries", () => {
    expect(plan({ rps: { cpus: "all" } }).rps).toEqual({ cpus: "all", flowEntriesPerQueue: undefined, sockFlowEntries: undefined, onlyWhenQueuesBelowCpus: false });
  });
  test("rings: { rx: 512 } leaves tx as it is on the host (not the preset's \"max\")", () => {
    expect(plan({ rings: { rx: 512 } }).rings).toEqual({ rx: 512 });
  });
  test("features: an explicit map replaces the preset's map", () => {
    expect(plan({ features: { lro: false } }).features).toEqual({ "large-receive-offload": false });
  });
  test("groups not given still come from the preset; a top-level setting given overrides its value", () => {
    const r = plan({ rps: { cpus: "all" }, txQueueLength: 500 });
    expect(r.rings).toEqual({ rx: "max", tx: "max" });
    expect(r.txQueueLength).toBe(500);
    expect(Object.keys(r.features).sort()).toEqual(["generic-receive-offload", "generic-segmentation-offload", "large-receive-offload", "tcp-segmentation-offload"]);
  });
  test("lowLatency's coalesce: an explicit coalesce object replaces it (no adaptiveRx: false carried over)", () => {
    const r = validateNic({ interface: "eth0", preset: nicPresets.lowLatency(), coalesce: { rxUsecs: 50 } }, "x");
    expect(r.coalesce).toEqual({ "rx-usecs": 50 });
  });
});

describe("item 13: profiles [webServer, database], and the README's override advice", () => {
  test("alone: refused, each conflict naming both values and the fix that works", () => {
    const r = resolveProfiles(undefined, [{ name: "webServer" }, { name: "database" }]);
    expect(r.problems.map((x) => x.message)).toEqual([
      "profiles (combine): net.core.somaxconn: conflicting values 65535 (webServer()) vs 4096 (database()); set it in sysctls (an entry there overrides every profile) or drop one profile",
      "profiles (combine): net.ipv4.tcp_max_syn_backlog: conflicting values 65535 (webServer()) vs 4096 (database()); set it in sysctls (an entry there overrides every profile) or drop one profile",
    ]);
  });
  test("with the conflicting keys in sysctls (the README's advice): accepted, sysctls win, the rest of both profiles applied", async () => {
    const t = new NetTuning("webdb", {
      connection: host(),
      profiles: [{ name: "webServer" }, { name: "database" }],
      sysctls: { "net.core.somaxconn": 16384, "net/ipv4/tcp_max_syn_backlog": 8192 },
    });
    const content = await promiseOf(t.fileContent);
    expect(content).toMatch(/^net\.core\.somaxconn = 16384$/m);
    expect(content).toMatch(/^net\.ipv4\.tcp_max_syn_backlog = 8192$/m);
    expect(content).toMatch(/^net\.ipv4\.tcp_fin_timeout = /m); // webServer's own key
    expect(content).toMatch(/^vm\.swappiness = 10$/m); // database's own key
  });
  test("overriding only one of the two conflicting keys: still refused, naming the other", () => {
    const e = refusal(() => new NetTuning("webdb1", { connection: host(), profiles: [{ name: "webServer" }, { name: "database" }], sysctls: { "net.core.somaxconn": 16384 } }));
    expect(e.problems).toEqual([expect.stringMatching(/^profiles \(combine\): net\.ipv4\.tcp_max_syn_backlog: conflicting values 65535/)]);
  });
});

describe("#33: endpoint, a non-secret output naming user@host:port", () => {
  test("NetTuning and NicQueues: user@host:port, not secret", async () => {
    const c = { host: "198.18.22.1", port: 2222, user: "ops", privateKey: key };
    const t = new NetTuning("ep", { connection: c, become: "sudo", sysctls: { "net.core.somaxconn": 4096 } });
    const q = new NicQueues("epq", { connection: { ...c, host: "198.18.22.2", port: undefined, user: undefined }, interface: "eth0", txQueueLength: 2000 });
    expect(await promiseOf(t.endpoint)).toBe("ops@198.18.22.1:2222");
    expect(await promiseOf(q.endpoint)).toBe("root@198.18.22.2:22");
    expect(await pulumi.isSecret(t.endpoint)).toBe(false);
  });
  test("a secret host gives no endpoint; a host known later (an Output) gives it then, not secret", async () => {
    const s = new NetTuning("eps", { connection: { host: pulumi.secret("198.18.22.3"), user: "root", privateKey: key }, sysctls: { "net.core.somaxconn": 4096 } });
    expect(await promiseOf(s.endpoint)).toBeUndefined();
    const o = new NetTuning("epo", { connection: { host: pulumi.output("198.18.22.4"), user: "root", privateKey: key }, sysctls: { "net.core.somaxconn": 4096 } });
    expect(await promiseOf(o.endpoint)).toBe("root@198.18.22.4:22");
    expect(await pulumi.isSecret(o.endpoint)).toBe(false);
  });
  test("a connection that is one Output: its fields are known only together, so the endpoint is given only when it is not secret", async () => {
    const plainOut = new NetTuning("epw", { connection: pulumi.output({ host: "198.18.22.5", user: "root", privateKey: "k" }), sysctls: { "net.core.somaxconn": 4096 } });
    expect(await promiseOf(plainOut.endpoint)).toBe("root@198.18.22.5:22");
    const secretOut = new NetTuning("epx", { connection: pulumi.secret({ host: "198.18.22.6", user: "root", privateKey: "k" }), sysctls: { "net.core.somaxconn": 4096 } });
    expect(await promiseOf(secretOut.endpoint)).toBeUndefined();
  });
});
