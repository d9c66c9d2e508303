/** NicQueues validation (every message) and plan rendering (snapshots, determinism, restore stdin). */
import { InputError } from "../../provider/errors";
import { ownerOf } from "../../provider/owner";
import { canonicalFeature } from "../../provider/nic/features";
import { planNic, renderNicRestoreStdin, NicPlanInput } from "../../provider/nic/plan";
import { lowLatency, throughput } from "../../provider/sizing/nic";

const owner = ownerOf("proj", "dev", "nq");
const plan = (args: Partial<NicPlanInput>) => planNic({ owner, name: "nq", interface: "eth0", ...args } as NicPlanInput);
function problems(args: Partial<NicPlanInput> & Record<string, unknown>): string[] {
  try {
    plan(args as Partial<NicPlanInput>);
  } catch (e) {
    if (e instanceof InputError) return e.problems;
    throw e;
  }
  throw new Error("expected an InputError");
}

describe("validation messages", () => {
  test.each([
    ["", '"" is not a valid Linux interface name'],
    ["eth0/1", '"eth0/1" is not a valid Linux interface name'],
    ["a b", "not a valid Linux interface name"],
    ["eth0:1", "not a valid Linux interface name"],
    ["ab'c", "not a valid Linux interface name"],
    [".", '"." is not a valid Linux interface name'],
    ["..", '".." is not a valid Linux interface name'],
    ["abcdefghijklmnop", "1-15 characters"],
  ])("interface %j", (iface, msg) => {
    const p = problems({ interface: iface, txQueueLength: 1000 });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^interface /);
    expect(p[0]).toContain(msg);
  });
  test("interface must be a string", () => {
    expect(problems({ interface: 3 as unknown as string, txQueueLength: 1 })).toEqual(['interface must be a string such as "eth0"']);
  });

  test("every problem is listed in one error, each naming the input, the range and the fix", () => {
    const p = problems({
      rings: { rx: 0, tx: "maximum" as unknown as number, rxMini: 1.5 },
      channels: { combined: -1, bogus: 1 } as never,
      features: { gro: "yes" as unknown as boolean },
      coalesce: { rxUsecs: -8, adaptiveRx: 1 as unknown as boolean, rxUsec: 3 } as never,
      txQueueLength: 0,
      rps: { cpus: [0, 0, 9000], flowEntriesPerQueue: 2000000 },
      irqAffinity: { cpus: "all" as never },
      persistence: "initd" as never,
    });
    expect(p).toEqual([
      "channels.combined must be an integer from 0 to 4096 (queues)",
      'channels: unknown field "bogus" (check the spelling)',
      "rings.rx must be an integer from 1 to 1048576 (descriptors)",
      'rings.rxMini must be a number of descriptors from 1 to 1048576 or "max" (the driver\'s pre-set maximum)',
      'rings.tx must be a number of descriptors from 1 to 1048576 or "max" (the driver\'s pre-set maximum)',
      "features.gro must be true (on) or false (off)",
      "coalesce.adaptiveRx must be true (on) or false (off)",
      "coalesce.rxUsecs must be an integer from 0 to 4294967295 (microseconds)",
      'coalesce: unknown field "rxUsec" (check the spelling)',
      "txQueueLength must be an integer from 1 to 1000000 (packets)",
      "rps.cpus[2] must be an integer from 0 to 8191 (CPU number)",
      "rps.cpus lists a CPU twice",
      "rps.flowEntriesPerQueue must be an integer from 0 to 1048576 (flow entries per rx queue)",
      'irqAffinity.cpus must be "spread" or a list of CPU numbers',
      'persistence must be "systemd", "rc.local", "none" or "auto"',
    ]);
  });
  test("CPU lists: duplicates, empty, out of range", () => {
    expect(problems({ rps: { cpus: [] } })).toEqual(["rps.cpus must list at least one CPU"]);
    expect(problems({ irqAffinity: { cpus: [1, 1] } })).toEqual(["irqAffinity.cpus lists a CPU twice"]);
  });
  test("txQueueLength: iproute2's -1 (UINT_MAX) and huge values are refused", () => {
    expect(problems({ txQueueLength: -1 })).toEqual(["txQueueLength must be an integer from 1 to 1000000 (packets)"]);
    expect(problems({ txQueueLength: 4294967295 })).toEqual(["txQueueLength must be an integer from 1 to 1000000 (packets)"]);
  });
  test("rps_sock_flow_entries above the kernel's 1<<29 limit", () => {
    expect(problems({ rps: { cpus: "all", sockFlowEntries: 2 ** 30 } })).toEqual([
      "rps.sockFlowEntries must be an integer from 0 to 536870912 (flow entries)",
    ]);
  });
  test("feature names: malformed, and two aliases of one feature with different values", () => {
    expect(problems({ features: { "GRO!": true } })).toEqual([
      'features.GRO!: "GRO!" is not a feature name: use an ethtool -K short name (gro, gso, tso, lro, rx, tx, sg, rxhash, ntuple, rxvlan, txvlan, ufo) or a name from `ethtool -k` (lowercase letters, digits, "-", "_")',
    ]);
    expect(problems({ features: { gro: true, "rx-gro": false } })).toEqual([
      'features: "gro" and "rx-gro" are the same feature (generic-receive-offload) with different values; keep one',
    ]);
  });
  test("all channel counts 0", () => {
    expect(problems({ channels: { rx: 0, tx: 0 } })).toEqual([
      "channels: every count is 0; a NIC needs at least one rx and one tx queue (e.g. { combined: 4 })",
    ]);
  });
  test("empty group objects are nothing to set; any one group is something", () => {
    expect(problems({ rings: {}, channels: {}, features: {}, coalesce: {} })[0]).toMatch(/^nothing to set: /);
    for (const one of [{ txQueueLength: 1000 }, { rps: { cpus: "all" as const } }, { irqAffinity: { cpus: [0] } }, { features: { gro: true } }]) expect(() => plan(one)).not.toThrow();
  });
  test("nothing to set", () => {
    expect(problems({})).toEqual([
      "nothing to set: give at least one of channels, rings, features, coalesce, txQueueLength, rps, irqAffinity or preset (e.g. preset: nicPresets.throughput())",
    ]);
  });
  test("a preset that is not one", () => {
    const p = problems({ preset: { kind: "x" } as never });
    expect(p[0]).toMatch(/^preset\.kind .*\(pass a preset from this package, e\.g\. nicPresets\.throughput\(\)\)$/);
  });
  test("a preset gets exactly the argument checks (issue 15: rings.rx 5000000 and coalesce.rxUsecs 1e12 passed before)", () => {
    const bad = { ...throughput(), rings: { rx: 5000000, tx: "max" as const }, coalesce: { rxUsecs: 1e12 } };
    expect(problems({ preset: bad })).toEqual([
      "preset(throughput).rings.rx must be an integer from 1 to 1048576 (descriptors)",
      "preset(throughput).coalesce.rxUsecs must be an integer from 0 to 4294967295 (microseconds)",
    ]);
    // every group the arguments have, a preset has too, with the same checks: channels, rps ranges, irq CPU lists
    const more = { ...lowLatency(), channels: { combined: 5000 }, rps: { cpus: [0, 0] }, irqAffinity: { cpus: "all" }, bogus: 1 };
    expect(problems({ preset: more as never })).toEqual([
      "preset(lowLatency).channels.combined must be an integer from 0 to 4096 (queues)",
      "preset(lowLatency).rps.cpus lists a CPU twice",
      'preset(lowLatency).irqAffinity.cpus must be "spread" or a list of CPU numbers',
      'preset(lowLatency): unknown field "bogus" (check the spelling)',
    ]);
  });
  test("a partial rps over a preset: an explicit rps replaces the preset's as a whole (issue #32 item 12), so cpus is required", () => {
    // (was merged field by field: the preset's cpus, sockFlowEntries and onlyWhenQueuesBelowCpus were carried over)
    expect(problems({ preset: throughput(), rps: { flowEntriesPerQueue: 8192 } as never })).toEqual(['rps.cpus must be "all" or a list of CPU numbers such as [0, 1, 2]']);
    const r = plan({ preset: throughput(), rps: { cpus: "all", flowEntriesPerQueue: 8192 } });
    expect(r.request.rps).toEqual({ cpus: "all", flowEntriesPerQueue: 8192, sockFlowEntries: undefined, onlyWhenQueuesBelowCpus: false });
    expect(r.stdin).toContain("@rps-cpus all\n");
    expect(r.stdin).toContain("@rps-flow-cnt 8192\n");
    expect(r.stdin).not.toContain("@rps-only-below-cpus");
    // without a preset, cpus is required the same way (same message as before)
    expect(problems({ rps: { flowEntriesPerQueue: 8192 } as never })).toEqual(['rps.cpus must be "all" or a list of CPU numbers such as [0, 1, 2]']);
    expect(problems({ irqAffinity: {} as never })).toEqual(['irqAffinity.cpus must be "spread" or a list of CPU numbers']);
  });
  test("the error names the resource and counts problems", () => {
    expect(() => plan({ txQueueLength: 0, persistence: "x" as never })).toThrow(/^NicQueues "nq": 2 invalid inputs:\n  - txQueueLength/);
  });
});

describe("feature aliases", () => {
  test.each([
    ["gro", "generic-receive-offload"], ["gso", "generic-segmentation-offload"], ["tso", "tcp-segmentation-offload"],
    ["lro", "large-receive-offload"], ["rx", "rx-checksumming"], ["tx", "tx-checksumming"], ["sg", "scatter-gather"],
    ["rxhash", "receive-hashing"], ["ntuple", "ntuple-filters"], ["rxvlan", "rx-vlan-offload"], ["txvlan", "tx-vlan-offload"],
    ["rx-gro", "generic-receive-offload"], ["rx-lro", "large-receive-offload"], ["generic-receive-offload", "generic-receive-offload"],
    ["rx-gro-list", "rx-gro-list"], ["GRO", "generic-receive-offload"], ["no spaces", undefined],
  ])("%s → %s", (name, canon) => expect(canonicalFeature(name)).toBe(canon));
});

describe("plan rendering", () => {
  const scenarioA = {
    rings: { rx: 4096, tx: 4096 },
    txQueueLength: 10000,
    features: { lro: false, gro: true, gso: true, tso: true },
    coalesce: { rxUsecs: 8 },
    rps: { cpus: "all" as const, flowEntriesPerQueue: 4096, sockFlowEntries: 32768 },
    persistence: "rc.local" as const,
  };
  test("Scenario A (seed 000) — stdin snapshot", () => {
    const p = plan(scenarioA);
    expect(p.stdin).toMatchSnapshot();
    expect(p.settings).toEqual({
      "eth0/ring.rx": "4096",
      "eth0/ring.tx": "4096",
      "eth0/feature.generic-receive-offload": "on",
      "eth0/feature.generic-segmentation-offload": "on",
      "eth0/feature.large-receive-offload": "off",
      "eth0/feature.tcp-segmentation-offload": "on",
      "eth0/coalesce.rx-usecs": "8",
      "eth0/txqueuelen": "10000",
      "eth0/rps.rx-*": "all",
      "eth0/rfs.rx-*": "4096",
      "net.core.rps_sock_flow_entries": "32768",
    });
  });
  test("deterministic: key order of the input does not matter", () => {
    const a = plan(scenarioA).stdin;
    const b = plan({
      persistence: "rc.local",
      rps: { sockFlowEntries: 32768, flowEntriesPerQueue: 4096, cpus: "all" },
      coalesce: { rxUsecs: 8 },
      features: { tso: true, gso: true, gro: true, lro: false },
      txQueueLength: 10000,
      rings: { tx: 4096, rx: 4096 },
    }).stdin;
    expect(b).toBe(a);
  });
  test("channels first, every group in apply order; max, CPU lists, IRQ spread (snapshot)", () => {
    const p = plan({
      irqAffinity: { cpus: "spread" },
      rps: { cpus: [3, 1, 2] },
      coalesce: { adaptiveRx: false, adaptiveTx: true, txFramesIrq: 64 },
      rings: { rxJumbo: 1024, rx: "max", rxMini: 8, tx: "max" },
      channels: { tx: 2, rx: 2, combined: 4, other: 1 },
    });
    expect(p.stdin).toMatchSnapshot();
    expect(p.stdin.indexOf("@set channel.")).toBeLessThan(p.stdin.indexOf("@set ring."));
  });
  test("preset: throughput, with explicit args overriding it (each given group object replaces the preset's)", () => {
    const p = plan({ preset: throughput(), rings: { tx: 1024 }, features: { "rx-gro": true, lro: true }, txQueueLength: 5000 });
    expect(p.stdin).toMatchSnapshot();
    // rings and features given: the preset's rings.rx "max" and its gso/tso are not carried over (issue #32 item 12)
    expect(p.settings["eth0/ring.rx"]).toBeUndefined();
    expect(p.settings["eth0/ring.tx"]).toBe("1024");
    expect(p.settings["eth0/feature.tcp-segmentation-offload"]).toBeUndefined();
    expect(p.settings["eth0/feature.generic-receive-offload"]).toBe("on");
    expect(p.settings["eth0/feature.large-receive-offload"]).toBe("on");
    expect(p.settings["eth0/txqueuelen"]).toBe("5000");
    expect(p.stdin).toContain("@rps-only-below-cpus 1\n");
    expect(p.warnings).toEqual([
      'NicQueues "nq": features turns large-receive-offload on: LRO merges frames irreversibly and breaks forwarding/bridging (routers, gateways, container hosts); prefer GRO',
    ]);
  });
  test("a preset holding every group renders the same plan as the same values given as arguments", () => {
    const values = {
      channels: { combined: 4, other: 1 },
      rings: { rx: 4096, rxJumbo: 512, tx: "max" as const },
      features: { gro: true, lro: false },
      coalesce: { adaptiveRx: false, rxUsecs: 10, pktRateHigh: 100000 },
      txQueueLength: 5000,
      rps: { cpus: [0, 1], flowEntriesPerQueue: 4096, sockFlowEntries: 32768, onlyWhenQueuesBelowCpus: true },
      irqAffinity: { cpus: [1, 0] },
    };
    const preset = { kind: "net-tuning/nic-preset" as const, name: "every", rationale: {}, ...values };
    const fromPreset = plan({ preset });
    const fromArgs = plan(values);
    expect(fromPreset.stdin).toBe(fromArgs.stdin);
    expect(fromPreset.settings).toEqual(fromArgs.settings);
    expect(fromPreset.stdin).toContain("@irq-cpus 1,0\n");
  });
  test("preset: lowLatency", () => {
    const p = plan({ preset: lowLatency() });
    expect(p.settings).toMatchObject({ "eth0/coalesce.adaptive-rx": "off", "eth0/coalesce.rx-usecs": "10" });
  });
  test("warnings: pow2 rounding, GRO/TSO off, adaptive + fixed usecs", () => {
    const p = plan({
      features: { gro: false, tso: false },
      rps: { cpus: "all", flowEntriesPerQueue: 100, sockFlowEntries: 30000 },
      coalesce: { adaptiveRx: true, rxUsecs: 8 },
    });
    expect(p.warnings).toEqual([
      'NicQueues "nq": coalesce sets adaptive coalescing on together with fixed usecs: with adaptive on, most drivers move rx-usecs/tx-usecs themselves',
      'NicQueues "nq": rps.flowEntriesPerQueue 100 is rounded up by the kernel to 128 (a power of two); write 128 to avoid surprise',
      'NicQueues "nq": rps.sockFlowEntries 30000 is rounded up by the kernel to 32768 (a power of two); write 32768 to avoid surprise',
      'NicQueues "nq": features turns generic-receive-offload off: this costs CPU per packet and usually worsens throughput and tail latency (the gateway guide\'s "latency" change collapsed throughput); keep it on unless a measurement says otherwise',
      'NicQueues "nq": features turns tcp-segmentation-offload off: this costs CPU per packet and usually worsens throughput and tail latency (the gateway guide\'s "latency" change collapsed throughput); keep it on unless a measurement says otherwise',
    ]);
  });
  test("default persistence is auto", () => {
    expect(plan({ txQueueLength: 1000 }).stdin).toContain("@persistence auto\n");
  });
});

describe("restore stdin", () => {
  test("originals in apply order (channels first), @restore flag", () => {
    const s = renderNicRestoreStdin(
      owner,
      "eth0",
      {
        "eth0/rps.rx-10": "0",
        "eth0/rps.rx-2": "-",
        "net.core.rps_sock_flow_entries": "0",
        "eth0/txqueuelen": "1000",
        "eth0/feature.generic-receive-offload": "on",
        "eth0/ring.rx": "512",
        "eth0/channel.combined": "8",
        "eth0/irq.45": "ffffffff",
        "eth0/rfs.rx-0": "0",
        "eth0/coalesce.rx-usecs": "50",
      },
      true,
    );
    expect(s).toBe(
      [
        "@net-tuning v1",
        "@kind nic",
        "@owner proj/dev/nq",
        `@owner-id ${owner.id}`,
        "@interface eth0",
        "@restore 1",
        // the ethtool -K name of each feature among the originals (the fallback restore carries no table of them)
        "@feature-args generic-receive-offload=gro",
        "@orig eth0/channel.combined\t8",
        "@orig eth0/ring.rx\t512",
        "@orig eth0/feature.generic-receive-offload\ton",
        "@orig eth0/coalesce.rx-usecs\t50",
        "@orig eth0/txqueuelen\t1000",
        // the one exception to the spec's order (plan.ts KEY_RANK): the host-wide key before the per-queue rps/rfs keys
        "@orig net.core.rps_sock_flow_entries\t0",
        "@orig eth0/rps.rx-2\t-",
        "@orig eth0/rps.rx-10\t0",
        "@orig eth0/rfs.rx-0\t0",
        "@orig eth0/irq.45\tffffffff",
        "",
      ].join("\n"),
    );
    expect(renderNicRestoreStdin(owner, "eth0", {}, false)).toContain("@restore 0\n");
  });
  test("unsafe values are refused", () => {
    expect(() => renderNicRestoreStdin(owner, "eth0", { "eth0/ring.rx": "1;reboot" }, true)).toThrow(/unsafe original value/);
    expect(() => renderNicRestoreStdin(owner, "eth0", { "eth0/ring rx": "1" }, true)).toThrow(/unsafe original value/);
  });
});
