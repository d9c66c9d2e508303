/**
 * The real `pulumi` CLI, continued: NicQueues's lifecycle on a lab host's NIC (veth eth0, 4 queues), adoption of a
 * hand-written sysctl.d file, a bad value that reaches a resource through an Output, and the checkpoint's bytes per
 * host as `pulumi stack export` writes them (the figure for bench/results; the bench's own is computed under mocks).
 */
import * as fs from "fs";
import * as path from "path";
import { clearSessions, countKinds, explain, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { snapshot } from "../../testkit/host";
import { fileOf, projectOn, values } from "./fixtures";
import { netTuningSysctls } from "../../bench/keys";

jest.setTimeout(600_000);

let h: LabHost[] = [];
useLab("cli2", 3, async (hs) => {
  toolchain();
  for (const x of hs) await logSessions(x);
  h = hs;
});

const nicState = (host: LabHost) =>
  host.exec(
    `i=${host.iface}; cat /sys/class/net/$i/tx_queue_len; ethtool -k $i | grep -E '^(generic-receive-offload|tcp-segmentation-offload):'; ` +
      `for q in /sys/class/net/$i/queues/rx-*; do echo "$(cat $q/rps_cpus) $(cat $q/rps_flow_cnt)"; done`,
  ).then((r) => r.stdout);

describe(`real pulumi CLI + ${providerLabel()}`, () => {
  test("NicQueues: preview --diff shows each NIC setting live → declared; up applies; an unchanged up opens no mutating session; destroy restores the NIC", async () => {
    const host = h[0];
    const before = await snapshot(host);
    const nicBefore = await nicState(host);
    const decl = { nq: { kind: "nic" as const, args: { interface: host.iface, persistence: "rc.local", features: { gro: true, tso: false }, txQueueLength: 3000, rps: { cpus: "all", flowEntriesPerQueue: 2048 } } } };
    const p = await projectOn(host, "ntnic", "root", decl);
    await clearSessions(host);
    const pv = await p.preview({ diff: true });
    expect(pv.code).toBe(0);
    const out = pv.stdout + pv.stderr;
    expect(out).toMatch(/NicQueues "nq" on \S+: \d+ of \d+ settings will change \(live → declared\)/);
    expect(out).toMatch(/eth0\/txqueuelen: 1000 → 3000/);
    expect(out).toMatch(/eth0\/feature\.generic-receive-offload: off → on/);
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1 });

    await clearSessions(host);
    const up = await p.up({ skipPreview: true });
    expect(up.code).toBe(0);
    // + the confirm: a feature change is confirmed by default (issue #34, docs/safe-rollout.md)
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, sftp: 1, apply: 1, confirm: 1 });
    const nicAfter = await nicState(host);
    expect(nicAfter).toMatch(/^3000\n/);
    expect(nicAfter).toMatch(/generic-receive-offload: on/);
    expect(nicAfter).toMatch(/tcp-segmentation-offload: off/);
    expect(nicAfter).toMatch(/^3 2048$/m);
    expect(await fileOf(host, "/etc/rc.local")).toContain("txqueuelen 3000");

    await clearSessions(host);
    const again = await p.up();
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/\d+ unchanged/);
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 2 });

    await clearSessions(host);
    const d = await p.destroy();
    expect(d.code).toBe(0);
    expect(countKinds(await sessions(host))).toEqual({ restore: 1 });
    expect(await nicState(host)).toBe(nicBefore);
    expect((await snapshot(host)).replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, "")).toBe(before.replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, ""));
    p.remove();
  });

  test("adoption of a hand-written file: up takes it over, destroy gives it back byte for byte with the hand values", async () => {
    const host = h[1];
    const hand = "# tuned by hand, 2024\nnet.core.somaxconn = 2048\nnet.ipv4.tcp_fin_timeout = 17\n";
    await host.exec(`cat > /etc/sysctl.d/99-hand.conf && sysctl -q -p /etc/sysctl.d/99-hand.conf`, { stdin: hand });
    const handValues = await values(host, ["net.core.somaxconn", "net.ipv4.tcp_fin_timeout"]);
    expect(handValues).toEqual({ "net.core.somaxconn": "2048", "net.ipv4.tcp_fin_timeout": "17" });
    const before = await snapshot(host);
    const sysctls = { "net.core.somaxconn": 16384, "net.ipv4.tcp_fin_timeout": 25 };
    // without adopt: up is refused by the host's preflight, naming the file's line, and nothing changes (the preview does
    // not see it: issue #32 item 11 makes the preview refuse what up refuses)
    const p = await projectOn(host, "ntadopt", "root", { edge: { kind: "sysctl", args: { sysctls } } });
    const refused = await p.up({ skipPreview: true });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toContain("is overridden at boot by /etc/sysctl.d/99-hand.conf:2 which sets 2048");
    expect(await values(host, Object.keys(sysctls))).toEqual(handValues);
    await p.setConfig("resources", JSON.stringify({ edge: { kind: "sysctl", args: { sysctls, adopt: ["99-hand.conf"] } } }));
    const pv = await p.preview({ diff: true });
    expect(pv.code).toBe(0);
    const up = await p.up({ skipPreview: true });
    expect(up.code).toBe(0);
    expect(await values(host, Object.keys(sysctls))).toEqual({ "net.core.somaxconn": "16384", "net.ipv4.tcp_fin_timeout": "25" });
    expect(await fileOf(host, "/etc/sysctl.d/99-hand.conf")).toBeNull();
    const d = await p.destroy();
    expect(d.code).toBe(0);
    expect(await fileOf(host, "/etc/sysctl.d/99-hand.conf")).toBe(hand);
    expect(await values(host, Object.keys(sysctls))).toEqual(handValues);
    expect((await snapshot(host)).replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, "")).toBe(before.replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, ""));
    p.remove();
  });

  test("a move to another machine: the new machine is tuned, the old one gets its originals back (the old restore runs there)", async () => {
    const [a, b] = [h[0], h[1]];
    // the adoption test left its hand file on h[1] (given back by its destroy): it sets these keys at boot
    await b.exec("rm -f /etc/sysctl.d/99-hand.conf");
    const keys = ["net.core.somaxconn", "net.ipv4.tcp_fin_timeout"];
    const origA = await values(a, keys);
    const origB = await values(b, keys);
    const p = await projectOn(a, "ntmove", "root", { web: { kind: "sysctl", args: { sysctls: { "net.core.somaxconn": 12288, "net.ipv4.tcp_fin_timeout": 29 } } } });
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    expect(await values(a, keys)).toEqual({ "net.core.somaxconn": "12288", "net.ipv4.tcp_fin_timeout": "29" });
    await p.setConfig("host", b.address);
    await clearSessions(a);
    await clearSessions(b);
    const pv = await p.preview();
    expect(pv.code).toBe(0);
    expect(pv.stdout).toMatch(/\+-\s*2 to replace/);
    const mv = await p.up({ skipPreview: true });
    expect([mv.code, mv.code === 0 ? "" : explain(mv)]).toEqual([0, ""]);
    expect(await values(b, keys)).toEqual({ "net.core.somaxconn": "12288", "net.ipv4.tcp_fin_timeout": "29" });
    expect(await values(a, keys)).toEqual(origA);
    expect(await fileOf(a, "/etc/sysctl.d/90-net-tuning-web.conf")).toBeNull();
    expect(countKinds(await sessions(a))).toEqual({ restore: 1 }); // the live read goes to the new address only
    expect(countKinds(await sessions(b))).toEqual({ "live-read": 2, sftp: 1, apply: 1 }); // the preview's and the up's
    expect((await p.destroy()).code).toBe(0);
    expect(await values(b, keys)).toEqual(origB);
    p.remove();
  });

  test("a bad ring size that arrives through an Output (pulumi.output(99999999)): up fails before the host changes, one error for the resource; the count in the CLI output is measured", async () => {
    const host = h[2];
    const before = await snapshot(host);
    const p = await projectOn(host, "ntbad", "root", {
      bad: { kind: "nic", args: { interface: host.iface, persistence: "none" }, outputs: { "rings.rx": 99999999 } },
    });
    const up = await p.up();
    expect(up.code).not.toBe(0);
    const out = up.stdout + up.stderr;
    // the message names the argument and its range, once for the resource (issue #32 item 14), in the resource's own
    // words (not wrapped in the SDK's "error serializing property" prefixes)
    const hits = out.split("\n").filter((l) => /rings\.rx must be an integer from 1 to \d+/.test(l));
    expect(hits.length).toBe(1);
    expect(out).toMatch(/NicQueues "bad": 1 invalid input:/);
    expect(out).not.toContain("error serializing property");
    // the engine counts one error for the program
    expect(up.stdout).toMatch(/1 errored|error: update failed|errored/);
    expect(await snapshot(host)).toBe(before);
    record("output-borne-error", { lines: hits.length, errorLines: out.split("\n").filter((l) => /\berror:/.test(l)).length, distinctMessages: new Set(hits.map((l) => l.trim())).size, sample: hits[0].trim().slice(0, 300) });
    p.remove();
  });

  test("checkpoint bytes per host: a NetTuning of 40 keys and a NicQueues on one host, as `pulumi stack export` writes them", async () => {
    const host = h[2];
    const bench = netTuningSysctls(); // the 40 keys of bench §2 and §4
    const p = await projectOn(host, "ntstate", "root", {
      web: { kind: "sysctl", args: { sysctls: bench } },
      nq: { kind: "nic", args: { interface: host.iface, persistence: "rc.local", features: { gro: true }, txQueueLength: 2000, rps: { cpus: "all" } } },
    });
    const up = await p.up({ skipPreview: true });
    expect(up.code).toBe(0);
    const exp = await p.export();
    // #33: the export without --show-secrets names the host of each resource (the children's connection is a secret)
    const endpoints = (exp.json.deployment.resources ?? []).filter((r) => /net-tuning:index:(NetTuning|NicQueues)$/.test(r.type ?? "")).map((r) => (r.outputs as { endpoint?: unknown } | undefined)?.endpoint);
    expect(endpoints).toEqual([expect.stringMatching(new RegExp(`^root@${host.address.replace(/\./g, "\\.")}:\\d+$`)), expect.stringMatching(new RegExp(`^root@${host.address.replace(/\./g, "\\.")}:\\d+$`))]);
    const bytes = Buffer.byteLength(exp.text);
    const compact = Buffer.byteLength(JSON.stringify(exp.json));
    const onDisk = findCheckpoint(p.dir);
    // where the bytes are: the resources' inputs and outputs (what bench §4 counts) against the engine's own fields
    const rs = exp.json.deployment.resources ?? [];
    const ioBytes = rs.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r.inputs ?? {})) + Buffer.byteLength(JSON.stringify(r.outputs ?? {})), 0);
    const metaBytes = rs.reduce((n, r) => n + Buffer.byteLength(JSON.stringify({ ...r, inputs: undefined, outputs: undefined })), 0);
    // an empty stack of the same project, for the bytes that are not per host
    const d = await p.destroy();
    expect(d.code).toBe(0);
    const empty = Buffer.byteLength((await p.export()).text);
    expect(bytes).toBeGreaterThan(empty);
    const compactEmpty = Buffer.byteLength(JSON.stringify((await p.export()).json));
    record("checkpoint", {
      exportBytes: bytes, emptyStackBytes: empty, perHostBytes: bytes - empty,
      compactPerHostBytes: compact - compactEmpty, checkpointFileBytes: onDisk, inputsOutputsBytes: ioBytes, engineFieldsBytes: metaBytes, resources: exp.json.deployment.resources?.length,
    });
    p.remove();
  });
});

/** Bytes of the stack's checkpoint file in the file:// backend (what the CLI writes at every step). */
function findCheckpoint(dir: string): number {
  const stacks = path.join(dir, "state", ".pulumi", "stacks");
  for (const proj of fs.readdirSync(stacks)) {
    for (const f of fs.readdirSync(path.join(stacks, proj))) if (/^test\.json(\.gz)?$/.test(f)) return fs.statSync(path.join(stacks, proj, f)).size;
  }
  return -1;
}

/** Measured figures for bench/results (the suite's own results file, written on every run). */
function record(name: string, value: unknown): void {
  const file = process.env.NT_CLI_RESULTS ?? path.join(require("os").tmpdir(), "nt-cli-results.json");
  const all = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>) : {};
  all[name] = { ...(value as object), provider: providerLabel(), cli: toolchain().version, at: new Date().toISOString() };
  fs.writeFileSync(file, JSON.stringify(all, null, 2));
  process.stdout.write(`[cli figures] ${name}: ${JSON.stringify(value)}\n`);
}

