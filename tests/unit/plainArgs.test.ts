/**
 * Program cost at 1,000 hosts (issue #12): plain arguments take a shorter path through the components (plain values
 * for the children instead of Output chains; validations memoised per process). That path must register exactly what
 * the Output path registers: the same inputs, secrets, dependencies and component outputs, in update and in preview.
 */
import * as pulumi from "@pulumi/pulumi";
import { capture, registrationsByName } from "../../testkit/harness";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { canonicalKey, validateSysctls } from "../../provider/sysctl/validate";
import { InputError } from "../../provider/errors";
import { NIC_REPORT, SYSCTL_REPORT } from "./fixtures/report";
import { addressKey, sharedToken } from "../../components/delivery";
import { ownerOf } from "../../provider/owner";

beforeAll(() => {
  // The components log validation warnings with pulumi.log.warn; these tests compare registrations.
  jest.spyOn(console, "warn").mockImplementation(() => undefined);
  jest.spyOn(console, "log").mockImplementation(() => undefined);
});

const outputsOf = (r: { name: string; type: string }) =>
  r.type === "command:remote:Command" && r.name.endsWith("-apply") ? { stdout: r.name.startsWith("nq") ? NIC_REPORT.report : SYSCTL_REPORT.report, stderr: "" } : undefined;

/** Every argument wrapped in an Output (the path for values known only later), at the top level. */
function wrapped<T extends object>(args: T): T {
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, pulumi.output(v)])) as T;
}

const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n";
type Case = { label: string; conn: Record<string, unknown>; sysctl: Record<string, unknown>; nic: Record<string, unknown> };
const cases: Case[] = [
  { label: "root", conn: { host: "198.18.3.1", user: "root", privateKey: KEY }, sysctl: { sysctls: SYSCTL_REPORT.sysctls }, nic: { ...NIC_REPORT.args, interface: "eth0" } },
  {
    label: "sudo, persist and restore off",
    conn: { host: "198.18.3.2", port: 2222, user: "ops", privateKey: KEY },
    sysctl: { sysctls: SYSCTL_REPORT.sysctls, become: "sudo", persist: false, restoreOnDelete: false, fileName: "80-x.conf" },
    nic: { ...NIC_REPORT.args, interface: "eth1", become: "sudo", restoreOnDelete: false },
  },
  { label: "secret private key", conn: { host: "198.18.3.3", user: "root", privateKey: pulumi.secret(KEY) }, sysctl: { sysctls: SYSCTL_REPORT.sysctls }, nic: { ...NIC_REPORT.args, interface: "eth0" } },
];

/** What the engine receives, by resource name. */
const registrations = (program: () => void, preview: boolean) => registrationsByName(program, { project: "proj", stack: "dev", outputsOf, preview });

describe("plain arguments register what Output arguments register", () => {
  for (const c of cases) {
    for (const preview of [false, true]) {
      test(`${c.label}${preview ? " (preview)" : ""}`, async () => {
        // the connection stays as given: whether its address is a plain value decides whether the resources of one
        // address share the engine delivery (below, and "an address known only later" further down)
        const program = (wrap: boolean) => () => {
          const w = <T extends object>(a: T) => (wrap ? wrapped(a) : a);
          new NetTuning(SYSCTL_REPORT.name, { connection: c.conn, ...w(c.sysctl) } as never);
          new NicQueues(NIC_REPORT.name, { connection: c.conn, ...w(c.nic) } as never);
        };
        const plain = await registrations(program(false), preview);
        const outputs = await registrations(program(true), preview);
        const delivery = `net-tuning-engine-${sharedToken("proj", "dev", addressKey(c.conn)!, c.conn.user !== "root")}`;
        expect(Object.keys(plain).sort()).toEqual([delivery, "nq", "nq-apply", "nq-restore", "proj-dev", "web", "web-apply", "web-restore"]);
        expect(plain).toEqual(outputs);
        // and the plain path really produced the children's texts (not unknowns) in the update
        if (!preview) {
          const restore = plain["web-restore"] as { inputs: Record<string, unknown> };
          // (with become "sudo" the stdin's first line is the way to root: programs.ts sudoLine)
          expect(String(restore.inputs.stdin)).toMatch(c.sysctl.become === "sudo" ? /^p=sudo\\ -n;[^\n]*\n@restore / : /^@restore /);
          expect(String(restore.inputs.delete)).toMatch(/^\/bin\/sh -c /);
        }
      });
    }
  }
});

describe("engine deliveries", () => {
  const conn = { host: "198.18.4.1", user: "root", privateKey: KEY };
  test("an address known only later (an Output): a delivery of each resource's own, replaced when the address changes", async () => {
    const r = await capture(() => {
      new NetTuning(SYSCTL_REPORT.name, { connection: pulumi.output(conn), sysctls: SYSCTL_REPORT.sysctls });
      new NicQueues(NIC_REPORT.name, { connection: { ...conn, host: pulumi.output(conn.host) }, ...NIC_REPORT.args, interface: "eth0" } as never);
    }, { project: "proj", stack: "dev", outputsOf });
    if (r.error) throw r.error;
    const copies = r.resources.filter((x) => x.type === "command:remote:CopyToRemote");
    expect(copies.map((x) => x.name).sort()).toEqual([`net-tuning-engine-${ownerOf("proj", "dev", NIC_REPORT.name).id}`, `net-tuning-engine-${ownerOf("proj", "dev", SYSCTL_REPORT.name).id}`]);
    for (const x of copies) {
      expect(x.parent).toBe("urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev");
      // the whole connection: the engine sees the secret `connection` change only as a whole (tests/cli/harness.test.ts)
      expect(x.options.replaceOnChanges.filter((p) => !p.startsWith("triggers"))).toEqual(["connection"]);
    }
    // each -apply depends on its own
    for (const n of [SYSCTL_REPORT.name, NIC_REPORT.name]) {
      expect(r.resources.find((x) => x.name === `${n}-apply`)!.options.dependsOn).toEqual([copies.find((x) => x.name.includes(`.${n}-`))!.urn]);
    }
  });
  test("two stacks, two addresses of one machine, two users: one delivery per stack and address", async () => {
    const names = async (stack: string, conns: Record<string, unknown>[]) => {
      const r = await capture(() => {
        const keys = ["net.core.somaxconn", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_syn_retries"];
        conns.forEach((connection, i) => new NetTuning(`t${i}`, { connection, sysctls: { [keys[i]]: 5 } } as never));
      }, { project: "proj", stack }); // (no host answer needed: only the deliveries are looked at)
      if (r.error) throw r.error;
      return r.resources.filter((x) => x.type === "command:remote:CopyToRemote").map((x) => x.name);
    };
    const a = await names("dev", [conn, { ...conn, host: "198.18.4.1" }, { ...conn, port: 2222 }, { ...conn, user: "ops" }, { ...conn, host: "198.18.4.2" }]);
    expect(a.length).toBe(4); // the first two share one; port, user and host each make another
    expect(new Set(a).size).toBe(4);
    expect(a[0]).toMatch(/^net-tuning-engine-198\.18\.4\.1-[0-9a-f]{8}$/);
    const b = await names("prod", [conn]);
    expect(b[0]).not.toBe(a[0]); // another stack: another name, and another staged file on the host
  });
});

describe("memoised validation", () => {
  const sysctls = { "net.core.somaxconn": 4096, "net.ipv4.tcp_rmem": [4096, 131072, 16777216], "net.ipv4.tcp_congestion_control": "bbr" };

  test("each call gets its own copy of a memoised result", () => {
    const a = validateSysctls({ ...sysctls });
    a.values["net.core.somaxconn"] = "1";
    a.advice.push({ key: "x", text: "changed by the caller" });
    const b = validateSysctls({ ...sysctls });
    expect(b.values["net.core.somaxconn"]).toBe("4096");
    expect(b.advice.map((w) => w.text)).not.toContain("changed by the caller");
    expect(b.values["net.ipv4.tcp_rmem"]).toBe("4096 131072 16777216");
  });

  test("inputs JSON would confuse are validated on their own", () => {
    validateSysctls({ "net.core.somaxconn": 4096 }); // memoised
    // an undefined value (JSON drops the key), NaN and Infinity (JSON writes null), a string instead of a number
    for (const v of [undefined, NaN, Infinity, null]) {
      expect(() => validateSysctls({ "net.core.somaxconn": 4096, "net.core.netdev_max_backlog": v })).toThrow(InputError);
    }
    expect(validateSysctls({ "net.core.somaxconn": "4096" }).values).toEqual({ "net.core.somaxconn": "4096" });
    expect(() => validateSysctls({ "net.core.somaxconn": [4096, undefined] as unknown as number[] })).toThrow(InputError);
  });

  test("an error after a success of the same keys still names its resource and value", () => {
    validateSysctls({ "net.core.somaxconn": 4096 }, 'NetTuning "a"');
    let err: unknown;
    try {
      validateSysctls({ "net.core.somaxconn": -1 }, 'NetTuning "b"');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain('NetTuning "b"');
    expect((err as InputError).problems.join("\n")).toMatch(/net\.core\.somaxconn = -1/);
  });

  test("canonicalKey gives the same answers memoised", () => {
    for (let i = 0; i < 2; i++) {
      expect(canonicalKey("net/ipv4/conf/eth0.100/rp_filter")).toBe("net.ipv4.conf.eth0/100.rp_filter");
      expect(canonicalKey("net.core.somaxconn")).toBe("net.core.somaxconn");
      expect(canonicalKey("not a key")).toBe("not a key");
    }
  });
});
