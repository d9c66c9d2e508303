/**
 * Two names of one kernel variable are one setting (review 7, H2): net.ipv4.ip_forward is net.ipv4.conf.all.forwarding
 * (devinet.c: one variable), net.nf_conntrack_max is net.netfilter.nf_conntrack_max. The catalogue declares them once;
 * one resource giving both names, two resources of one program giving one name each on one host, are refused at
 * preview naming both keys; the plan carries the other names (`@alias`) for the host's owner check
 * (tests/reliability/aliases.test.ts proves that one on lab hosts).
 */
import * as pulumi from "@pulumi/pulumi";
import { SYSCTL_REPORT } from "./fixtures/report";
import { mockCommands, settleAfterAll } from "../../testkit/mocks";

mockCommands(SYSCTL_REPORT.report);
settleAfterAll();

import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { CATALOGUE, lookup, otherNames, variableOf } from "../../provider/sysctl/catalogue";
import { planSysctls } from "../../provider/sysctl/plan";
import { validateSysctls } from "../../provider/sysctl/validate";
import { ownerOf } from "../../provider/owner";
import { InputError } from "../../provider/errors";

const FWD = "net.ipv4.ip_forward";
const ALL = "net.ipv4.conf.all.forwarding";
const CT = "net.netfilter.nf_conntrack_max";
const CT_OLD = "net.nf_conntrack_max";
const conn = (host: string, port?: number) => ({ host, ...(port ? { port } : {}), user: "root", privateKey: pulumi.secret("k") });

function problemsOf(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (e instanceof InputError) return e.problems;
    throw e;
  }
  throw new Error("no InputError");
}

describe("the catalogue's variable identity", () => {
  test("both names of each variable give one identity and name each other; other keys are their own", () => {
    expect(variableOf(FWD)).toBe(FWD);
    expect(variableOf(ALL)).toBe(FWD);
    expect(variableOf(CT)).toBe(CT);
    expect(variableOf(CT_OLD)).toBe(CT);
    expect([otherNames(FWD), otherNames(ALL), otherNames(CT), otherNames(CT_OLD)]).toEqual([[ALL], [FWD], [CT_OLD], [CT]]);
    // conf.default.forwarding and per-device forwarding are variables of their own (reset by a write of all, not one with it)
    for (const k of ["net.ipv4.conf.default.forwarding", "net.ipv4.conf.eth0.forwarding", "net.ipv6.conf.all.forwarding", "net.core.somaxconn"]) {
      expect(variableOf(k)).toBe(k);
      expect(otherNames(k)).toEqual([]);
    }
  });

  test("the alias data is consistent: aliasOf names a catalogued key without aliasOf; aliases are not catalogued and name one variable", () => {
    const entries = Object.values(CATALOGUE);
    expect(entries.filter((e) => e.aliasOf).map((e) => e.key)).toEqual([CT_OLD]);
    expect(entries.filter((e) => e.aliases).map((e) => e.key)).toEqual([FWD]);
    for (const e of entries) {
      if (e.aliasOf) expect([lookup(e.aliasOf)?.key, lookup(e.aliasOf)?.aliasOf]).toEqual([e.aliasOf, undefined]);
      for (const a of e.aliases ?? []) {
        expect(lookup(a)).toBeUndefined();
        expect(variableOf(a)).toBe(e.key);
      }
    }
  });
});

describe("one resource giving both names", () => {
  test.each([
    [{ [FWD]: 1, [ALL]: 1 }, `${ALL} = 1 sets the same kernel variable as ${FWD} (= 1), also given here: one variable, two names. Fix: give only ${FWD}.`],
    [{ [FWD]: 0, "net/ipv4/conf/all/forwarding": 1 }, `${ALL} = 1 sets the same kernel variable as ${FWD} (= 0), also given here: one variable, two names. Fix: give only ${FWD}.`],
    [{ [CT_OLD]: 1000, [CT]: "1000" }, `${CT_OLD} = 1000 sets the same kernel variable as ${CT} (= "1000"), also given here: one variable, two names. Fix: give only ${CT}.`],
  ])("%j is refused, naming both keys (equal values too)", (sysctls, message) => {
    expect(problemsOf(() => validateSysctls(sysctls, 'NetTuning "x"'))).toEqual([message]);
    expect(problemsOf(() => new NetTuning(`both-${Object.values(sysctls).join("-")}`, { connection: conn("198.18.9.1"), sysctls }))).toEqual([message]);
  });

  test("one name alone is accepted", () => {
    expect(validateSysctls({ [ALL]: 1 }).values).toEqual({ [ALL]: "1" });
    expect(validateSysctls({ [FWD]: 1 }).values).toEqual({ [FWD]: "1" });
  });
});

describe("the plan's @alias line", () => {
  const plan = (sysctls: Record<string, unknown>) => planSysctls({ owner: ownerOf("p", "s", "n"), name: "n", sysctls }).stdin;
  test("an aliased key names its other names once; a key with one name adds nothing", () => {
    expect(plan({ [FWD]: 1, "net.core.somaxconn": 4096 }).split("\n").filter((l) => l.startsWith("@alias"))).toEqual([`@alias ${FWD} ${ALL}`]);
    expect(plan({ [ALL]: 1 }).split("\n").filter((l) => l.startsWith("@alias"))).toEqual([`@alias ${ALL} ${FWD}`]);
    expect(plan({ [CT_OLD]: 1000 })).toContain(`\n@alias ${CT_OLD} ${CT}\n`);
    expect(plan({ "net.core.somaxconn": 4096 })).not.toContain("@alias");
  });
});

describe("two resources of one program, two names of one variable on one host", () => {
  test.each([
    [FWD, ALL],
    [ALL, FWD],
    [CT, CT_OLD],
  ])("%s then %s: refused at preview naming both keys, both resources and the fix", (first, second) => {
    const host = `198.18.10.${first.length + second.length + (first < second ? 0 : 1)}`;
    new NetTuning(`a-${first}`, { connection: conn(host), sysctls: { [first]: 1, "vm.swappiness": 10 } });
    expect(problemsOf(() => new NetTuning(`b-${second}`, { connection: conn(host), sysctls: { [second]: 1 } }))).toEqual([
      `${second} is the kernel variable NetTuning "a-${first}" sets as ${first} on the same host (${host}:22): two names of one variable are one key, which belongs to one NetTuning per host; set it in only one of them (as ${variableOf(first)})`,
    ]);
    // the same names on another port (another sshd) or another host are other hosts
    new NetTuning(`c-${second}`, { connection: conn(host, 2222), sysctls: { [second]: 1 } });
    new NetTuning(`d-${second}`, { connection: conn(`${host}9`), sysctls: { [second]: 1 } });
  });

  test("the refused resource claimed nothing: its other key stays free for a third resource", () => {
    const host = "198.18.11.1";
    new NetTuning("keep", { connection: conn(host), sysctls: { [FWD]: 1 } });
    expect(() => new NetTuning("other", { connection: conn(host), sysctls: { [ALL]: 1, "vm.swappiness": 10 } })).toThrow(/is the kernel variable NetTuning "keep" sets as net\.ipv4\.ip_forward/);
    // vm.swappiness was not claimed by the refused resource
    new NetTuning("swap", { connection: conn(host), sysctls: { "vm.swappiness": 10 } });
  });

  test("a NicQueues' rps.sockFlowEntries and a NetTuning still conflict (claims by variable keep the plain-key case)", () => {
    const host = "198.18.11.2";
    new NicQueues("rfs", { connection: conn(host), interface: "eth0", rps: { cpus: "all", sockFlowEntries: 32768 } });
    expect(problemsOf(() => new NetTuning("sfe", { connection: conn(host), sysctls: { "net.core.rps_sock_flow_entries": 32768 } }))[0]).toMatch(
      /^net\.core\.rps_sock_flow_entries is also set by NicQueues "rfs" \(its rps\.sockFlowEntries\)/,
    );
  });
});
