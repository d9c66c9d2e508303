/**
 * Issue #33, "one advice per finding", under mocks: the same advice from N resources of a program run is one warning
 * naming the N resources and their hosts (components/advice.ts), logged on no resource; advice of one resource stays
 * on that resource; a batch is logged once, ADVICE_WINDOW_MS after its first advice, also for resources whose plan is
 * known only later (an Output).
 */
import * as pulumi from "@pulumi/pulumi";
import { mockCommands, settleAfterAll } from "../../testkit/mocks";
import { SYSCTL_REPORT } from "./fixtures/report";

mockCommands(SYSCTL_REPORT.report);
settleAfterAll();

import { NetTuning } from "../../components/netTuning";
import { ADVICE_WINDOW_MS, adviceStats, groupedAdvice } from "../../components/advice";

const warned: { text: string; on?: pulumi.Resource }[] = [];
beforeEach(() => {
  warned.length = 0;
  jest.spyOn(pulumi.log, "warn").mockImplementation((text: string, resource?: pulumi.Resource) => {
    warned.push({ text, on: resource });
    return Promise.resolve();
  });
});
afterEach(() => jest.restoreAllMocks());

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A host of its own per resource and test (one key belongs to one NetTuning per host). */
const conn = (i: number, net = 33) => ({ host: `198.18.${net}.${i}`, user: "root", privateKey: "k" });
/** somaxconn above 65535: advice (wraps on pre-4.1 kernels) that names no resource, the same for every host. */
const ADVICE_ARGS = { sysctls: { "net.core.somaxconn": 100000 } };

test("3 resources with the same advice: one warning naming the 3 resources and hosts, on no resource", async () => {
  const rs = [1, 2, 3].map((i) => new NetTuning(`same-${i}`, { connection: conn(i), ...ADVICE_ARGS }));
  expect(warned).toEqual([]); // nothing logged before the window closes
  await wait(ADVICE_WINDOW_MS + 100);
  const somax = warned.filter((w) => w.text.includes("net.core.somaxconn = 100000"));
  expect(somax).toHaveLength(1);
  expect(somax[0].on).toBeUndefined();
  expect(somax[0].text).toMatch(/^3 resources \(NetTuning "same-1" \(198\.18\.33\.1\), NetTuning "same-2" \(198\.18\.33\.2\), NetTuning "same-3" \(198\.18\.33\.3\)\): net\.core\.somaxconn = 100000/);
  expect(rs).toHaveLength(3);
});

test("20 hosts: 1 line, not 20; a resource alone with its advice keeps it on itself", async () => {
  const before = adviceStats.batches;
  for (let i = 1; i <= 20; i++) new NetTuning(`fleet-${i}`, { connection: conn(i, 34), ...ADVICE_ARGS });
  const alone = new NetTuning("alone", { connection: conn(99, 34), sysctls: { "net.ipv4.tcp_sack": 0 } });
  await wait(ADVICE_WINDOW_MS + 100);
  const somax = warned.filter((w) => w.text.includes("net.core.somaxconn = 100000"));
  expect(somax).toHaveLength(1);
  expect(somax[0].text.startsWith("20 resources (NetTuning \"fleet-1\" (198.18.34.1), ")).toBe(true);
  for (let i = 1; i <= 20; i++) expect(somax[0].text).toContain(`NetTuning "fleet-${i}" (198.18.34.${i})`);
  const sack = warned.filter((w) => w.text.includes("net.ipv4.tcp_sack"));
  expect(sack).toHaveLength(1);
  expect(sack[0].on).toBe(alone);
  expect(sack[0].text.startsWith("net.ipv4.tcp_sack")).toBe(true);
  expect(adviceStats.batches - before).toBe(1);
});

test("plans known only later (Outputs) join the batch of their window; later advice is a batch of its own, also bounded", async () => {
  const late = (i: number, ms: number) =>
    new NetTuning(`late-${i}`, { connection: conn(i, 35), sysctls: pulumi.output(new Promise<Record<string, number>>((r) => setTimeout(() => r({ "net.core.somaxconn": 100000 }), ms))) });
  late(1, 0);
  late(2, 5);
  late(3, ADVICE_WINDOW_MS * 4);
  await wait(ADVICE_WINDOW_MS * 6 + 200);
  const somax = warned.filter((w) => w.text.includes("net.core.somaxconn = 100000"));
  expect(somax.map((w) => w.text.split(":")[0])).toEqual(['2 resources (NetTuning "late-1" (198.18.35.1), NetTuning "late-2" (198.18.35.2))', "net.core.somaxconn = 100000 wraps to 34464 on pre-4.1 kernels"]);
});

test("groupedAdvice: the count, each resource, the advice", () => {
  expect(groupedAdvice("advice", ["a", "b"])).toBe("2 resources (a, b): advice");
});
