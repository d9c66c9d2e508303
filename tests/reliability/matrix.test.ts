/**
 * The fault matrix (issue #32): each fault crossed with {NetTuning, NicQueues} × {apply, restore}, on lab hosts.
 * For every cell: the run fails with a non-zero exit and a message that says what happened; nothing is half-changed
 * (the host is byte for byte as before the run: testkit/host snapshot of /proc/sys/net, the NIC, /etc, /usr/local and
 * /var/lib); the originals can be recovered (once the fault is gone, the next `up` or `destroy` converges and the
 * destroy gives back the host of before the first apply). SIGKILL at every mutating step has its own matrix
 * (tests/safety/killsteps); the stall is here with a deadline shortened by the lab hook (3 s), and under the real CLI
 * with the same hook in tests/cli/stall.
 *
 * Cells run sequentially on one host per kind; the counts are printed at the end (docs/internals.md "Reliability").
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { nicProgram, ok, snapshot, sysProgram } from "../../testkit/host";
import { frameRestore, readRestoreStdin } from "../../provider/host/programs";
import { lineCuts } from "./common";
import { clearHooks, hold, release, setHooks, waitPaused } from "../safety/hooks";

jest.setTimeout(600000);

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "matrix" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
  console.log(`fault matrix: ${cells.length} cells run, ${cells.filter((c) => c.ok).length} as expected\n${cells.map((c) => `  ${c.ok ? "ok  " : "FAIL"} ${c.name}`).join("\n")}`);
});

const cells: { name: string; ok: boolean }[] = [];
async function cell(name: string, f: () => Promise<void>): Promise<void> {
  try {
    await f();
    cells.push({ name, ok: true });
  } catch (e) {
    cells.push({ name, ok: false });
    throw e;
  }
}

type Kind = "NetTuning" | "NicQueues";
const KINDS: Kind[] = ["NetTuning", "NicQueues"];
const hostOf = (k: Kind): LabHost => lab.hosts[k === "NetTuning" ? 0 : 1];
const program = (k: Kind, host: LabHost, name: string, v: number) =>
  k === "NetTuning"
    ? sysProgram(host, name, { sysctls: { "net.core.somaxconn": 4000 + v, "net.ipv4.tcp_max_syn_backlog": 3000 + v } })
    : nicProgram(host, name, { txQueueLength: 2000 + v, rps: { cpus: [0], flowEntriesPerQueue: 128 }, persistence: "rc.local" });

/** Every prefix of `text` ending at a line boundary, plus one cut mid-line in the middle; not the whole. */
function cutsOf(text: string, head = 1): [string, string][] {
  const cuts = lineCuts(text);
  const mid = Math.floor(text.length / 2);
  return [
    ["before the plan (first line only)", cuts[0]],
    ["mid-plan, at a line boundary", cuts[Math.floor(cuts.length / 2)]],
    ["mid-line", text.slice(0, text.lastIndexOf("\n", mid) + 3)],
    ["after the plan, without its end line", cuts[cuts.length - 1]],
    // a digit of the plan, not of its `head` first lines: the line naming the engine or the restore choice, and in an
    // apply stdin the bootstrap line, which the command runs as sent (the end line checks the plan; a cut session
    // truncates the stdin, it does not alter its bytes)
    ["whole, with one byte altered", text.replace(new RegExp(`^((?:[^\\n]*\\n){${head}}[\\s\\S]*?\\d)(\\d*\\n)`), (_m, a: string, b: string) => `${a.slice(0, -1)}${a.endsWith("1") ? "2" : "1"}${b}`)],
  ];
}

/** Mounts that make a fault on the host; `undo` takes it away again. */
const FS_FAULTS: { name: string; on: string; undo: string; message: RegExp }[] = [
  {
    name: "a full /tmp (tmpfs of 64 KiB, filled)",
    on: "mount -t tmpfs -o size=64k nt-full /tmp && (dd if=/dev/zero of=/tmp/fill bs=4k 2>/dev/null; true)",
    undo: "umount /tmp",
    message: /\/tmp full|cannot create a temporary directory|No space left|restore stdin cut or damaged/,
  },
  {
    name: "a read-only /var/lib",
    on: "mount --bind /var/lib /var/lib && mount -o remount,bind,ro /var/lib",
    undo: "umount /var/lib",
    // an apply of a new stack stops at the engine's delivery (CopyToRemote stages it in /var/lib: SFTP's "Failure")
    message: /read-only|cannot create \/var\/lib|cannot write|Read-only file system|could not be removed|sftp: copying .* to \/var\/lib\/pulumi-net-tuning\/incoming\/\S+: Failure/,
  },
];

describe.each(KINDS)("%s", (kind) => {
  test("apply: a plan cut or altered on the way (5 cuts) → exit 5, host unchanged; the whole plan converges", async () => {
    const host = hostOf(kind);
    const keep = new Stack({ project: "matrix", stack: `keep-${kind}` }); // keeps the engine installed
    ok(await keep.up(sysProgram(host, "keep", { sysctls: { "net.ipv4.tcp_fin_timeout": 27 } })));
    const stack = new Stack({ project: "matrix", stack: `cut-${kind}` });
    try {
      ok(await stack.up(program(kind, host, "cut", 1)));
      const run = stack.history.find((r) => r.name === "cut-apply" && r.op === "create")!;
      ok(await stack.destroy());
      const before = await snapshot(host);
      for (const [what, text] of cutsOf(run.stdin!, 2)) {
        await cell(`${kind} apply: session cut ${what}`, async () => {
          const r = await host.ssh(run.cmd, { stdin: text });
          expect({ what, code: r.code }).toEqual({ what, code: 5 });
          expect(r.stderr).toMatch(/stdin cut or no @engine line; nothing was changed|plan is incomplete|plan is damaged|goes on after its end line/);
          expect({ what, same: (await snapshot(host)) === before }).toEqual({ what, same: true });
        });
      }
      ok(await stack.up(program(kind, host, "cut", 1)));
    } finally {
      await stack.destroy();
      await keep.destroy();
    }
  });

  test("restore: a restore stdin cut or altered (5 cuts) → exit 1, nothing restored; the next destroy restores", async () => {
    const host = hostOf(kind);
    const before = await snapshot(host);
    const stack = new Stack({ project: "matrix", stack: `rcut-${kind}` });
    ok(await stack.up(program(kind, host, "rcut", 2)));
    const restore = stack.get("rcut-restore")!;
    const plain = frameRestore(readRestoreStdin(String(restore.inputs.stdin)));
    const tuned = await snapshot(host);
    for (const [what, text] of cutsOf(plain)) {
      await cell(`${kind} restore: session cut ${what}`, async () => {
        const r = await host.ssh(String(restore.inputs.delete), { stdin: text });
        expect({ what, code: r.code }).toEqual({ what, code: 1 });
        expect(r.stderr).toContain("restore stdin cut or damaged, or /tmp full; nothing restored");
        expect({ what, same: (await snapshot(host)) === tuned }).toEqual({ what, same: true });
      });
    }
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  });

  test.each(FS_FAULTS.map((f) => [f.name, f] as const))("apply under %s → fails before changing anything; converges once fixed", async (_n, f) => {
    const host = hostOf(kind);
    const keep = new Stack({ project: "matrix", stack: `keepfs-${kind}` });
    ok(await keep.up(sysProgram(host, "keepfs", { sysctls: { "net.ipv4.tcp_keepalive_intvl": 26 } })));
    const clean = await snapshot(host);
    await host.exec(f.on);
    try {
      await cell(`${kind} apply: ${f.name}`, async () => {
        const before = await snapshot(host);
        const stack = new Stack({ project: "matrix", stack: `fs-${kind}` });
        const r = await stack.up(program(kind, host, "fs", 3));
        expect(r.ok).toBe(false);
        expect(r.error).toMatch(f.message);
        expect(r.error).not.toMatch(/rolled back.*ROLLBACK INCOMPLETE/);
        expect(await snapshot(host)).toBe(before);
        await host.exec(f.undo);
        expect(await snapshot(host)).toBe(clean);
        ok(await stack.up(program(kind, host, "fs", 3)));
        ok(await stack.destroy());
        expect(await snapshot(host)).toBe(clean);
      });
    } finally {
      await host.exec(`${f.undo} 2>/dev/null; true`);
      ok(await keep.destroy());
    }
  });

  test.each(FS_FAULTS.map((f) => [f.name, f] as const))("restore under %s → fails and says so, the journal kept; the next destroy restores", async (_n, f) => {
    const host = hostOf(kind);
    const before = await snapshot(host);
    const stack = new Stack({ project: "matrix", stack: `rfs-${kind}` });
    ok(await stack.up(program(kind, host, "rfs", 4)));
    await host.exec(f.on);
    try {
      await cell(`${kind} restore: ${f.name}`, async () => {
        const d = await stack.destroy();
        expect(d.ok).toBe(false);
        expect(d.error).toMatch(f.message);
        // the resource stays in the state (its originals with it) and the journal stays on the host
        expect(stack.get("rfs-restore")).toBeDefined();
        expect((await host.exec("ls /var/lib/pulumi-net-tuning/*/ | grep -c '\\.orig$'")).stdout.trim()).not.toBe("0");
        await host.exec(f.undo);
        ok(await stack.destroy());
        expect(await snapshot(host)).toBe(before);
      });
    } finally {
      await host.exec(`${f.undo} 2>/dev/null; true`);
    }
  });

  /**
   * A host that stalls mid-run: the host program stopped (SIGSTOP) after its first mutating step, or a command of it
   * that never returns (the hook runs `sleep 3600` there). The run's watchdog stops it at its deadline (the hook makes
   * it 3 s, grace 10 s): an apply rolls back, a restore keeps its journal; the next run converges.
   */
  const STALLS = [
    { name: "the host program stopped (SIGSTOP)", hooks: ["pause-after-step 1 120"], what: "the run was stopped (SIGSTOP)" },
    { name: "a command that does not return", hooks: ["hang-after-step 1"], what: "`sleep 3600` had not returned" },
  ];
  async function stalled(host: LabHost, hooks: string[], run: () => Promise<{ ok: boolean; error?: string }>): Promise<{ ok: boolean; error?: string; seconds: number }> {
    await setHooks(host, [...hooks, "deadline 3 10"]);
    const pausing = hooks[0].startsWith("pause");
    if (pausing) await hold(host);
    const t0 = Date.now();
    const running = run();
    try {
      if (pausing) {
        const pid = await waitPaused(host);
        expect((await host.exec(`kill -STOP ${pid}`)).code).toBe(0);
        await release(host); // seen only once it runs again
      }
      const r = await running;
      return { ...r, seconds: (Date.now() - t0) / 1000 };
    } finally {
      await clearHooks(host);
    }
  }
  async function noWatchdogLeft(host: LabHost): Promise<void> {
    // (the run stops it at its end; one whose stop did not reach it ends at its next step, within 5 s)
    let left = "";
    for (let i = 0; i < 80; i++) {
      left = (await host.exec("pgrep -af 'net-tuning-watchdo[g]' || true")).stdout.trim();
      if (!left) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(left).toBe("");
  }
  test.each(STALLS.map((f) => [f.name, f] as const))("a host that stalls: %s → stopped at its deadline; apply rolls back, restore keeps the journal; the next run converges", async (_n, f) => {
    const host = hostOf(kind);
    const before = await snapshot(host);
    const stack = new Stack({ project: "matrix", stack: `stall-${kind}` });
    ok(await stack.up(program(kind, host, "stall", 6)));
    const tuned = await snapshot(host);
    try {
      await cell(`${kind} apply: ${f.name}`, async () => {
        const r = await stalled(host, f.hooks, () => stack.up(program(kind, host, "stall", 7)));
        expect(r.ok).toBe(false);
        expect(r.error).toContain(`stopped by its deadline (3 s holding the host's lock: ${f.what}) while applying on `);
        expect(r.error).toMatch(/while applying on \S+; every change of this run was rolled back/);
        expect(r.error).toContain("Fix: find out why that does not return on this host");
        expect(r.seconds).toBeLessThan(30);
        expect(await snapshot(host)).toBe(tuned);
        ok(await stack.up(program(kind, host, "stall", 7)));
        await noWatchdogLeft(host); // a run that ends stops its watchdog
      });
      const applied = await snapshot(host);
      await cell(`${kind} restore: ${f.name}`, async () => {
        const d = await stalled(host, f.hooks, () => stack.destroy());
        expect(d.ok).toBe(false);
        expect(d.error).toContain(`stopped by its deadline (3 s holding the host's lock: ${f.what}) while restoring on `);
        expect(d.error).toMatch(/while restoring on \S+; already restored by this run:/);
        expect(d.error).toContain("the journal and the boot files were kept: run the delete again");
        expect(d.seconds).toBeLessThan(30);
        expect(await snapshot(host)).not.toBe(applied); // really mid-restore: one step was done
        expect(stack.get("stall-restore")).toBeDefined();
        ok(await stack.destroy());
        expect(await snapshot(host)).toBe(before);
      });
    } finally {
      await clearHooks(host);
      await stack.destroy();
    }
  });

  // the run's parent (sudo) is the same for both kinds: registered for one
  if (kind === "NetTuning")
  test("a host that stalls under become \"sudo\": the run stopped (SIGSTOP) → sudo, stopped with it, is resumed by the deadline; the apply rolls back, the session ends", async () => {
    const host = hostOf(kind);
    const stack = new Stack({ project: "matrix", stack: "stall-sudo" });
    const sudoProgram = (v: number) => sysProgram(host, "stallsudo", { become: "sudo", sysctls: { "net.core.somaxconn": 4100 + v } }, "sudo");
    ok(await stack.up(sudoProgram(1)));
    const tuned = await snapshot(host);
    try {
      const r = await stalled(host, STALLS[0].hooks, () => stack.up(sudoProgram(2)));
      expect(r.ok).toBe(false);
      expect(r.error).toContain("stopped by its deadline (3 s holding the host's lock: the run was stopped (SIGSTOP)) while applying on ");
      expect(r.seconds).toBeLessThan(30);
      expect(await snapshot(host)).toBe(tuned);
      // no stopped sudo left on the host
      expect((await host.exec("ps -eo stat=,comm= | awk '$1 ~ /^T/ && $2 == \"sudo\"'")).stdout.trim()).toBe("");
      ok(await stack.up(sudoProgram(2)));
    } finally {
      await clearHooks(host);
      await stack.destroy();
    }
  });

  test("hostile: a state directory others can write → refused before anything changes, for apply and restore", async () => {
    const host = hostOf(kind);
    const dir = `/var/lib/pulumi-net-tuning/${kind === "NetTuning" ? "sysctl" : "nic"}`;
    const before = await snapshot(host);
    const stack = new Stack({ project: "matrix", stack: `ww-${kind}` });
    await cell(`${kind} apply: world-writable state directory`, async () => {
      await host.exec(`mkdir -p ${dir} && chmod 0777 ${dir}`);
      const mid = await snapshot(host);
      const r = await stack.up(program(kind, host, "ww", 5));
      expect(r.ok).toBe(false);
      expect(r.error).toContain(`${dir} is writable by other users (drwxrwxrwx`);
      expect(await snapshot(host)).toBe(mid);
      await host.exec(`chmod 0700 ${dir}`);
    });
    ok(await stack.up(program(kind, host, "ww", 5)));
    const tuned = await snapshot(host);
    await cell(`${kind} restore: world-writable state directory`, async () => {
      await host.exec(`chmod 0777 ${dir}`);
      const d = await stack.destroy();
      expect(d.ok).toBe(false);
      expect(d.error).toContain(`${dir} is writable by other users`);
      await host.exec(`chmod 0700 ${dir}`);
      expect(await snapshot(host)).toBe(tuned);
    });
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  });
});
