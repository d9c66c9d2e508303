/**
 * The two-tier restore (issue #12, ARCHITECTURE.md "Restore without the host") on real lab hosts through the harness:
 * the installed engine restores when the plan's `@engine` file is there; otherwise the fallback program carried in
 * the -restore child's stdin does (journal and engine gone, engine of another version only, a newer generation on the
 * same machine, a value that cannot be written back), for NetTuning and NicQueues, as root and with a sudo user.
 * Which program ran is read from the restore report (`restored-by`).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { assembleEngine, engine, useEngine } from "../../provider/host/engine";
import { fallbackProgram, readRestoreStdin, restoreCommand, restoreStdin } from "../../provider/host/programs";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab, Who } from "../../testkit/lab";
import { nicProgram, ok, snapshot, sysctl, sysProgram } from "../../testkit/host";

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 3, tag: "fallback" });
}, 120000);
afterAll(async () => {
  useEngine();
  await lab?.stop();
});

const E = engine();
const SOMAXCONN = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const RMEM = "net.ipv4.tcp_rmem";
const GONE = "rm -rf /var/lib/pulumi-net-tuning /usr/local/lib/pulumi-net-tuning";

/** NetTuning (3 keys, one multi-value) and NicQueues (channels, features, txqueuelen, RPS/RFS) on one host as `who`. */
function both(host: LabHost, who: Who, persistence: "rc.local" | "systemd") {
  const become = who === "sudo" ? ("sudo" as const) : undefined;
  return () => {
    sysProgram(host, "t", { become, sysctls: { [SOMAXCONN]: 8123, [FIN]: 17, [RMEM]: "4096 99999 6291456" } }, who)();
    nicProgram(host, "q", { become, persistence, channels: { rx: 2 }, features: { gro: true, tso: false }, txQueueLength: 2345, rps: { cpus: [1], flowEntriesPerQueue: 2048 } }, who)();
  };
}
const restoredBy = (out: string | undefined) => /^restored-by\t(.*)$/m.exec(out ?? "")?.[1];

describe.each<[Who, "rc.local" | "systemd"]>([
  ["root", "rc.local"],
  ["sudo", "systemd"],
])("as %s (persistence %s)", (who, persistence) => {
  const hostOf = () => lab.hosts[who === "root" ? 0 : 1];

  test("engine installed: the destroy runs the installed engine's restore", async () => {
    const host = hostOf();
    const full = await snapshot(host, { delivery: true });
    const stack = new Stack({ project: "fb", stack: `eng-${who}` });
    ok(await stack.up(both(host, who, persistence)));
    const rs = String(stack.get("t-restore")!.inputs.stdin);
    expect(readRestoreStdin(rs).split("\n").slice(0, 2)).toEqual(["@restore 1", `@engine ${E.version} ${E.sha256}`]);
    const d = ok(await stack.destroy());
    expect(d.runs.map((r) => [r.name, restoredBy(r.stdout)]).sort()).toEqual([
      ["q-restore", `engine ${E.fileName}`],
      ["t-restore", `engine ${E.fileName}`],
    ]);
    expect(await snapshot(host, { delivery: true })).toBe(full);
  });

  test("journal and installed engine removed: the fallback puts every original back and removes every file", async () => {
    const host = hostOf();
    const full = await snapshot(host, { delivery: true });
    const o = { somaxconn: await sysctl(host, SOMAXCONN), rmem: await sysctl(host, RMEM) };
    const stack = new Stack({ project: "fb", stack: `gone-${who}` });
    ok(await stack.up(both(host, who, persistence)));
    expect(await sysctl(host, SOMAXCONN)).toBe("8123");
    const files = await host.exec("ls /etc/sysctl.d /etc/rc.local /etc/systemd/system /var/lib/pulumi-net-tuning-converged 2>&1");
    expect(files.stdout).toContain("net-tuning");
    expect((await host.exec(GONE)).code).toBe(0);
    const d = ok(await stack.destroy());
    for (const r of d.runs) {
      expect(restoredBy(r.stdout)).toBe("fallback");
      expect(r.stdout).toMatch(/warning\tthe host's journal .* is missing; restoring the originals kept in Pulumi state/);
    }
    expect(await sysctl(host, SOMAXCONN)).toBe(o.somaxconn);
    expect(await sysctl(host, RMEM)).toBe(o.rmem);
    // values in /proc/sys and /sys, ethtool state, every file under /etc, /usr/local, /var/lib: as before the create
    // (the sudo user's staged copy and the converged records included)
    expect(await snapshot(host, { delivery: true })).toBe(full);
    if (who === "sudo") expect((await host.exec(`ls -a /home/${host.sudoUser.user}/.cache`)).stdout).not.toContain("pulumi-net-tuning");
  });
});

describe.each<[string, string]>([
  ["with a final newline", "#!/bin/sh -e\\necho hello\\nexit 0\\n"],
  ["without a final newline", "#!/bin/sh -e\\necho hi\\nexit 0"],
])("an rc.local that existed before (%s), journal and engine gone", (_t, content) => {
  const text = content.replace(/\\n/g, "\n");
  test("the fallback gives back its bytes, mode and time", async () => {
    const host = lab.hosts[2];
    expect((await host.exec(`printf '${content}' > /etc/rc.local && chmod 700 /etc/rc.local && touch -d '2021-03-04 05:06:07' /etc/rc.local`)).code).toBe(0);
    try {
      const full = await snapshot(host, { delivery: true });
      const stack = new Stack({ project: "fb", stack: "rclocal" });
      ok(await stack.up(nicProgram(host, "q", { persistence: "rc.local", txQueueLength: 2346, features: { gro: true } })));
      expect((await host.exec("grep -c '^# BEGIN pulumi-net-tuning' /etc/rc.local")).stdout.trim()).toBe("1");
      expect((await host.exec(GONE)).code).toBe(0);
      const d = ok(await stack.destroy());
      expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
      expect((await host.exec("stat -c %a /etc/rc.local && cat /etc/rc.local")).stdout).toBe(`700\n${text}`);
      expect(await snapshot(host, { delivery: true })).toBe(full); // the modification time too (the snapshot lists it)
    } finally {
      await host.exec("rm -f /etc/rc.local");
    }
  });

  test("its recorded prior state unparsable: the fallback keeps the current mode (as the engine does)", async () => {
    const host = lab.hosts[2];
    expect((await host.exec(`printf '${content}' > /etc/rc.local && chmod 700 /etc/rc.local`)).code).toBe(0);
    try {
      const stack = new Stack({ project: "fb", stack: "rcprior" });
      ok(await stack.up(nicProgram(host, "q", { persistence: "rc.local", txQueueLength: 2346 })));
      const edit = "sed -i 's/^# rc.local before this block: .*/# rc.local before this block: ?/' /etc/rc.local && chmod 750 /etc/rc.local && grep -c '^# rc.local before this block: ?$' /etc/rc.local";
      expect((await host.exec(edit)).stdout.trim()).toBe("1");
      expect((await host.exec(GONE)).code).toBe(0);
      const d = ok(await stack.destroy());
      expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
      expect((await host.exec("stat -c %a /etc/rc.local && cat /etc/rc.local")).stdout).toBe(`750\n${text}`);
    } finally {
      await host.exec("rm -f /etc/rc.local");
    }
  });
});

test("engine removed, journal of a newer generation (the resource moved to another address of this machine): nothing restored", async () => {
  const host = lab.hosts[2];
  const full = await snapshot(host, { delivery: true });
  const stack = new Stack({ project: "fb", stack: "moved" });
  ok(await stack.up(both(host, "root", "rc.local")));
  const before = await snapshot(host);
  const stored = ["t-restore", "q-restore"].map((n) => ({ cmd: String(stack.get(n)!.inputs.delete), stdin: String(stack.get(n)!.inputs.stdin) }));
  // a newer apply of the same resource took the machine over: the journals carry another generation
  const gen = await host.exec(
    `rm -rf /usr/local/lib/pulumi-net-tuning && for j in /var/lib/pulumi-net-tuning/*/*.orig; do head -n1 "$j" > "$j.head"; sed -i '1s/\t[^\t]*$/\tnewer-generation-1/' "$j"; done && head -qn1 /var/lib/pulumi-net-tuning/*/*.orig`,
  );
  expect(gen.stdout.trim().split("\n").map((l) => l.split("\t")[2])).toEqual(["newer-generation-1", "newer-generation-1"]);
  const after = await snapshot(host);
  const d = ok(await stack.destroy());
  for (const r of d.runs) {
    expect(restoredBy(r.stdout)).toBe("fallback");
    expect(r.stdout).toMatch(/warning\trestore skipped on .*: a newer apply of this resource \(generation newer-generation-1, not [0-9a-f-]+\) owns this machine now/);
  }
  expect(await snapshot(host)).toBe(after); // values, files and journals untouched
  expect(after.split("\n").filter((l) => !l.includes("/var/lib/pulumi-net-tuning/"))).toEqual(before.split("\n").filter((l) => !l.includes("/var/lib/pulumi-net-tuning/")));
  // negative control: the journals back at this apply's generation, the same stored deletes restore everything
  expect((await host.exec(`for j in /var/lib/pulumi-net-tuning/*/*.orig; do { cat "$j.head"; sed 1d "$j"; } > "$j.new" && mv "$j.new" "$j" && rm "$j.head"; done`)).code).toBe(0);
  for (const s of stored) {
    const r = await host.ssh(s.cmd, { who: "root", stdin: s.stdin });
    expect([r.code, restoredBy(r.stdout)]).toEqual([0, "fallback"]);
  }
  expect(await snapshot(host, { delivery: true })).toBe(full);
});

test("the plan's engine (an older version) is no longer installed, another version is: the fallback restores", async () => {
  const host = lab.hosts[2];
  // "the older version": the same sources with another engine hash
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-engine-old-"));
  const shDir = path.join(__dirname, "../../provider/host/sh");
  for (const f of fs.readdirSync(shDir)) fs.copyFileSync(path.join(shDir, f), path.join(dir, f));
  fs.appendFileSync(path.join(dir, "main.sh"), "# older version\n");
  const old = assembleEngine(dir, `${E.version}-old`);
  const o = { somaxconn: await sysctl(host, SOMAXCONN), fin: await sysctl(host, FIN) };
  const full = await snapshot(host, { delivery: true });
  const stack = new Stack({ project: "fb", stack: "old" });
  useEngine(old);
  try {
    ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 8124, [FIN]: 19 } })));
  } finally {
    useEngine();
  }
  expect(readRestoreStdin(String(stack.get("t-restore")!.inputs.stdin)).split("\n")[1]).toBe(`@engine ${old.version} ${old.sha256}`);
  // the old engine is gone (removed by hand, e.g. after another stack's upgrade); today's engine is installed
  const swap = await host.exec(
    `d=/usr/local/lib/pulumi-net-tuning; rm -f $d/engine-${old.sha256}.sh && base64 -d > $d/engine-${E.sha256}.sh && ls $d`,
    { stdin: Buffer.from(E.text).toString("base64") },
  );
  expect(swap.stdout.trim()).toBe(`engine-${E.sha256}.sh`);
  const d = ok(await stack.destroy());
  expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
  expect(d.runs[0].stdout).not.toContain("journal"); // the journal was there: no warning
  expect(await sysctl(host, SOMAXCONN)).toBe(o.somaxconn);
  expect(await sysctl(host, FIN)).toBe(o.fin);
  // no journal left on the host: the fallback removed the installed engines and the product's directories too
  expect(await snapshot(host, { delivery: true })).toBe(full);
});

/** A delivery token (no delivery of it exists on the host: nothing to clean up). */
const TOKEN = "198.18.99.1-00000000";

describe("a value that cannot be written back: non-zero exit naming the key, journal and files kept", () => {
  const owner = "@owner fb:x:t\n@owner-id fb.x.t-00000000";
  test.each<["sysctl" | "nic", string, string]>([
    ["sysctl", `@file /etc/sysctl.d/90-x.conf\n@restore 1\n@orig ${SOMAXCONN}\tnot-a-number`, SOMAXCONN],
    ["nic", `@interface eth0\n@restore 1\n@orig eth0/txqueuelen\tlots`, "eth0/txqueuelen"],
  ])("%s", async (kind, body, key) => {
    const host = lab.hosts[2];
    const before = await snapshot(host);
    const plan = `@net-tuning v1\n@kind ${kind}\n${owner}\n${body}\n`;
    const r = await host.ssh(restoreCommand(TOKEN), { who: "root", stdin: restoreStdin(kind, plan, true) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`net-tuning: ${key} = '${body.split("\t").pop()}' not restored on `);
    expect(r.stderr).toMatch(new RegExp(`could not restore ${key.replace(/\./g, "\\.")}; journal and boot files kept: run the delete again on .* \\(fallback restore\\)`));
    expect(await snapshot(host)).toBe(before);
    // a plan value the fallback does not accept: exit 5 before anything changes
    const bad = await host.ssh(restoreCommand(TOKEN), { who: "root", stdin: restoreStdin(kind, plan.replace(/\t\S+$/m, "\t$(reboot)"), true) });
    expect(bad.code).toBe(5);
    expect(bad.stderr).toContain(`bad original ${key} = '$(reboot)'; nothing restored`);
    // a damaged compressed stdin (a blob cut short): exit 1 with the bootstrap's message, nothing run, nothing left in /tmp
    const cut = restoreStdin(kind, plan, true).replace(/.{40}\n$/, "\n");
    const dmg = await host.ssh(restoreCommand(TOKEN), { who: "root", stdin: cut });
    expect([dmg.code, dmg.stdout]).toEqual([1, ""]);
    // gzip's own message first
    expect(dmg.stderr.trim().split("\n")).toEqual(["gzip: stdin: unexpected end of file", "net-tuning: restore stdin cut or damaged, or /tmp full; nothing restored"]);
    expect((await host.exec("ls -d /tmp/net-tuning-in.* 2>/dev/null | wc -l")).stdout.trim()).toBe("0");
    expect(await snapshot(host)).toBe(before);
  });
});

// A failed ethtool read is a failure of the key, never "no longer exists": exit non-zero naming the key, journal and
// rc.local block kept, the host still tuned (Pulumi keeps the resource); with ethtool back the destroy finishes the job.
describe.each<["engine" | "fallback", "missing" | "failing"]>([
  ["engine", "missing"],
  ["engine", "failing"],
  ["fallback", "missing"],
  ["fallback", "failing"],
])("NicQueues destroy by the %s with ethtool %s", (tier, how) => {
  test("fails naming the key, keeps journal and boot files; after ethtool is back it restores every original", async () => {
    const host = lab.hosts[2];
    const full = await snapshot(host, { delivery: true });
    const stack = new Stack({ project: "fb", stack: `eth-${tier}-${how}` });
    try {
      ok(await stack.up(nicProgram(host, "e", { persistence: "rc.local", channels: { rx: 2 }, features: { gro: true } })));
      if (tier === "fallback") expect((await host.exec("rm -rf /usr/local/lib/pulumi-net-tuning")).code).toBe(0);
      const tuned = await snapshot(host, { delivery: true });
      const block = (await host.exec("cat /etc/rc.local")).stdout;
      expect(block).toContain("# BEGIN pulumi-net-tuning fb/eth-");
      const J = "/var/lib/pulumi-net-tuning/nic/*.orig";
      const journal = (await host.exec(`cat ${J}`)).stdout;
      expect(journal).toContain("eth0/channel.rx\t");
      // missing: renamed inside the lab host's own root; failing: a stub that exits 1 bound over it (EBUSY-like)
      const broken = how === "missing" ? "mv /usr/sbin/ethtool /usr/sbin/ethtool.away" : "mount --bind /bin/false /usr/sbin/ethtool";
      const fixed = how === "missing" ? "mv /usr/sbin/ethtool.away /usr/sbin/ethtool" : "umount /usr/sbin/ethtool";
      expect((await host.exec(broken)).code).toBe(0);
      try {
        expect((await host.exec("command -v ethtool >/dev/null && ethtool -l eth0")).code).not.toBe(0);
        const d = await stack.destroy();
        expect(d.ok).toBe(false);
        const run = d.runs.find((r) => r.name === "e-restore")!;
        expect(run.exitCode).toBe(1);
        expect(run.stdout).not.toContain("no longer exists");
        const why = how === "missing" ? "ethtool is not installed" : "ethtool -[lk] eth0 failed \\(exit 1\\)";
        if (tier === "engine") {
          expect(run.stderr).toMatch(new RegExp(`cannot read eth0/channel\\.rx to restore '\\d+': ${why}`));
          expect(run.stderr).toMatch(new RegExp(`cannot read eth0/feature\\.generic-receive-offload to restore '\\w+': ${why}`));
          expect(run.stderr).toMatch(/could not restore on \S+: eth0\/channel\.rx eth0\/feature\.generic-receive-offload; nothing was restored yet; the journal and the boot files were kept/);
        } else {
          expect(run.stderr).toMatch(new RegExp(`net-tuning: eth0/channel\\.rx = '\\d+' not restored on \\S+: ${why}`));
          expect(run.stderr).toMatch(/could not restore eth0\/channel\.rx eth0\/feature\.generic-receive-offload; journal and boot files kept: run the delete again on \S+ \(fallback restore\)/);
        }
        expect(stack.get("e-restore")).toBeDefined(); // Pulumi keeps the resource
        expect((await host.exec(`cat ${J}`)).stdout).toBe(journal);
        expect((await host.exec("cat /etc/rc.local")).stdout).toBe(block);
      } finally {
        await host.exec(fixed);
      }
      // values, ethtool state, rc.local block, journal: exactly as tuned (nothing restored, nothing removed)
      expect(await snapshot(host, { delivery: true })).toBe(tuned);
      const d = ok(await stack.destroy());
      expect(restoredBy(d.runs.find((r) => r.name === "e-restore")!.stdout)).toBe(tier === "engine" ? `engine ${E.fileName}` : "fallback");
      expect(await snapshot(host, { delivery: true })).toBe(full);
    } finally {
      if (stack.get("e-restore")) await stack.destroy(); // a failed assertion leaves the next case a clean host
    }
  });
});

// A journalled key whose file exists but cannot be read (stand-in: net.ipv4.route.flush, mode 0200 in /proc/sys, put
// into the journal by hand): the engine took it for gone ("no longer exists"), dropped its original and removed the
// journal; both tiers now fail that key and keep the journal for a retry, as docs/operations.md says (review 7 L2).
test.each(["engine", "fallback"] as const)("%s: a journalled key that exists but cannot be read fails the delete, journal kept; the retry restores", async (tier) => {
  const host = lab.hosts[0];
  const o = await sysctl(host, SOMAXCONN);
  const stack = new Stack({ project: "fb", stack: `unread-${tier}` });
  ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7701 } })));
  const J = "$(ls /var/lib/pulumi-net-tuning/sysctl/*.orig)";
  expect((await host.exec(`j=${J} && awk 'NR == 2 { print "net.ipv4.route.flush\t1" } { print }' $j > $j.x && mv $j.x $j && cat /proc/sys/net/ipv4/route/flush`)).code).not.toBe(0); // unreadable
  if (tier === "fallback") await host.exec(`rm -f /usr/local/lib/pulumi-net-tuning/${E.fileName}`);
  try {
    const d = await stack.destroy();
    expect(d.ok).toBe(false);
    expect(d.error).toMatch(/net\.ipv4\.route\.flush/);
    expect(d.error).not.toMatch(/no longer exists/);
    expect((await host.exec(`grep -c route.flush ${J}`)).stdout.trim()).toBe("1"); // the journal is kept
    expect(stack.get("t-restore")).toBeDefined();
  } finally {
    await host.exec(`j=${J} && grep -v route.flush $j > $j.x && mv $j.x $j`);
  }
  const d2 = ok(await stack.destroy());
  expect(restoredBy(d2.runs[0].stdout)).toBe(tier === "engine" ? `engine ${E.fileName}` : "fallback");
  expect(await sysctl(host, SOMAXCONN)).toBe(o);
});

test("the fallback programs end with their entry point (shellcheck and the three shells: tests/unit/programs.test.ts)", () => {
  for (const k of ["sysctl", "nic"] as const) expect(fallbackProgram(k)).toMatch(/\nr_main\n$/);
});
