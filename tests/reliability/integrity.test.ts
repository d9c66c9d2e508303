/**
 * The host never lies (issue #32): plans cut or altered on the way, a /tmp that fills during a failing apply.
 * Each test sends the exact command and stdin the components store (stack.history) over SSH to a lab host, or drives
 * a real `up` while the lab build's fault-injection hook holds the engine at a step; the host's values and files are compared
 * byte for byte (testkit/host snapshot) with what the test expects.
 */
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { ok, readSysctl, snapshot, sysProgram } from "../../testkit/host";
import { frameRestore, readRestoreStdin } from "../../provider/host/programs";
import { clearHooks, hold, release, setHooks, waitPaused } from "../safety/hooks";
import { lineCuts, trackedStacks } from "./common";

jest.setTimeout(300000);

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "integrity" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

const K = { somax: "net.core.somaxconn", fin: "net.ipv4.tcp_fin_timeout", syn: "net.ipv4.tcp_max_syn_backlog", ecn: "net.ipv4.tcp_ecn_fallback" };
const track = trackedStacks();
const newStack = (name: string) => track("integrity", name);

describe("a plan cut or altered on the way is refused before anything changes", () => {
  test("apply: every line-boundary cut, a mid-line cut, an altered value and data after the end: exit 5, host unchanged", async () => {
    const host = lab.hosts[0];
    // another stack keeps the engine installed on the host while the tested resource is destroyed and re-sent
    ok(await newStack("keep").up(sysProgram(host, "keep", { sysctls: { [K.fin]: 23 } })));
    const stack = newStack("cut");
    const prog = sysProgram(host, "web", { sysctls: { [K.somax]: 7011, [K.syn]: 3011 } });
    ok(await stack.up(prog));
    const run = stack.history.find((r) => r.name === "web-apply" && r.op === "create")!;
    expect(run.stdin).toMatch(/\n@end [0-9a-f]{64}\n$/);
    ok(await stack.destroy());
    const before = await snapshot(host);
    const stdin = run.stdin!;
    const cuts = lineCuts(stdin);
    expect(cuts.length).toBeGreaterThan(8);
    const variants: [string, string][] = [
      ...cuts.map((c, i): [string, string] => [`cut after line ${i + 1}`, c]),
      ["cut mid-line", stdin.slice(0, stdin.indexOf(`${K.somax} = 7011`) + 20)],
      ["altered value", stdin.replace(`${K.somax} = 7011`, `${K.somax} = 7012`)],
      ["data after the end", `${stdin}${K.somax} = 1\n`],
    ];
    for (const [what, text] of variants) {
      const r = await host.ssh(run.cmd, { stdin: text });
      // the first cut holds only the @engine line (the command reads it and finds no bootstrap line after it)
      expect({ what, code: r.code }).toEqual({ what, code: 5 });
      expect({ what, stderr: r.stderr }).toEqual({
        what,
        stderr: expect.stringMatching(/stdin cut or no @engine line|plan is incomplete \(no end line|plan is damaged \(its sha256 differs|plan goes on after its end line|malformed plan line|stdin is not a pulumi-net-tuning v1 plan/),
      });
      expect(r.stderr).toMatch(/nothing was changed|malformed plan line|not a pulumi-net-tuning v1 plan/);
      expect({ what, same: (await snapshot(host)) === before }).toEqual({ what, same: true });
    }
    // the whole plan, the same way, applies (the test can tell a refusal from a working path)
    const whole = await host.ssh(run.cmd, { stdin });
    expect(whole.code).toBe(0);
    expect(await readSysctl(host, K.somax)).toBe("7011");
    // the stack converges over it and gives every original back
    ok(await stack.up(prog));
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  });

  test("restore (plain form): a cut anywhere, or an altered byte, restores nothing (exit 1) and keeps the journal; the whole one restores", async () => {
    const host = lab.hosts[0];
    ok(await newStack("keep2").up(sysProgram(host, "keep2", { sysctls: { [K.fin]: 24 } })));
    const orig = await readSysctl(host, K.somax);
    const stack = newStack("rcut");
    ok(await stack.up(sysProgram(host, "web", { sysctls: { [K.somax]: 7021 } })));
    const restore = stack.get("web-restore")!;
    const cmd = String(restore.inputs.delete);
    // the plain form a host without gzip gets (restoreStdin frames it with its end line, as here)
    const plain = frameRestore(readRestoreStdin(String(restore.inputs.stdin)));
    expect(plain).toMatch(/\n@program\n[\s\S]*\n@end [0-9a-f]{64}\n$/);
    const tuned = await snapshot(host);
    const cuts = lineCuts(plain);
    // every cut at a line boundary of the plan part, and a sample of those inside the fallback program
    const programAt = cuts.findIndex((c) => c.endsWith("\n@program\n"));
    const picked = [...cuts.slice(0, programAt + 2), ...cuts.slice(programAt + 2).filter((_c, i) => i % 25 === 0), cuts[cuts.length - 1]];
    // an altered original: one digit of the @orig line changed
    const altered = plain.replace(/^(@orig net\.core\.somaxconn\t)(\d)/m, (_m, a: string, d: string) => `${a}${d === "1" ? "2" : "1"}`);
    expect(altered).not.toBe(plain);
    for (const [i, text] of [...picked.map((c, i): [number, string] => [i, c]), [-1, altered] as [number, string]]) {
      const r = await host.ssh(cmd, { stdin: text });
      expect({ i, code: r.code }).toEqual({ i, code: 1 });
      expect(r.stderr).toContain("restore stdin cut or damaged, or /tmp full; nothing restored");
      expect({ i, same: (await snapshot(host)) === tuned }).toEqual({ i, same: true });
      expect((await host.exec("ls -d /tmp/net-tuning-in.* 2>/dev/null")).stdout).toBe("");
    }
    ok(await stack.destroy());
    expect(await readSysctl(host, K.somax)).toBe(orig);
  });
});

describe("/tmp fills up during an apply that then fails", () => {
  test("the rollback needs no temporary file: every value is back, the report is true, the next up converges", async () => {
    const host = lab.hosts[1];
    const orig = { somax: await readSysctl(host, K.somax), syn: await readSysctl(host, K.syn) };
    await host.exec("mount -t tmpfs -o size=512k nt-tmp /tmp");
    try {
      const clean = await snapshot(host);
      const stack = newStack("tmpfull");
      // tcp_ecn_fallback is not catalogued: only the kernel refuses 7 (range 0-1); it sorts after somaxconn, so the
      // engine has changed somaxconn (step 3: owner file, journal, somaxconn) when it must write the refusal down
      const args = { sysctls: { [K.somax]: 4321, [K.ecn]: 7, [K.syn]: 3210 } };
      await setHooks(host, ["pause-after-step 3 60"]);
      await hold(host);
      const up = stack.up(sysProgram(host, "tf", args));
      await waitPaused(host);
      expect(await readSysctl(host, K.somax)).toBe("4321");
      // fill /tmp to the last block while the engine waits, then let it go on
      await host.exec("dd if=/dev/zero of=/tmp/fill bs=4k 2>/dev/null; df -k /tmp | tail -1");
      expect((await host.exec("echo x > /tmp/probe")).code).not.toBe(0);
      await release(host);
      const r = await up;
      expect(r.ok).toBe(false);
      expect(r.runs[r.runs.length - 1].exitCode).toBe(1);
      expect(r.error).toMatch(/cannot write to \/tmp\/net-tuning\.[\w-]+ on \S+ \(\/tmp full\?\); every change of this run was rolled back/);
      // and it was: the report is true
      expect(await readSysctl(host, K.somax)).toBe(orig.somax);
      expect(await readSysctl(host, K.syn)).toBe(orig.syn);
      await clearHooks(host);
      await host.exec("rm -f /tmp/fill");
      expect(await snapshot(host)).toBe(clean);
      const fixed = { sysctls: { [K.somax]: 4321, [K.syn]: 3210 } };
      ok(await stack.up(sysProgram(host, "tf", fixed)));
      expect(await readSysctl(host, K.somax)).toBe("4321");
      ok(await stack.destroy());
      expect(await snapshot(host)).toBe(clean);
    } finally {
      await clearHooks(host).catch(() => undefined);
      await host.exec("umount /tmp");
    }
  });
});

describe("hostile or unusual files at the names the engine uses", () => {
  test("a sysctl.d file with CRLF line ends that sets the declared value is no boot-order conflict (bootOverride error)", async () => {
    const host = lab.hosts[1];
    await host.exec(`printf '# hand-written on Windows\\r\\n${K.somax} = 4099\\r\\n' > /etc/sysctl.d/99-crlf.conf`);
    try {
      const stack = newStack("crlf");
      const r = await stack.up(sysProgram(host, "crlf", { sysctls: { [K.somax]: 4099 }, bootOverride: "error" }));
      expect(r.error).toBeUndefined();
      expect(await readSysctl(host, K.somax)).toBe("4099");
      ok(await stack.destroy());
      // a CRLF file that sets ANOTHER value is still a conflict, named without its CR
      await host.exec(`printf '${K.somax} = 5000\\r\\n' > /etc/sysctl.d/99-crlf.conf`);
      const c = await stack.up(sysProgram(host, "crlf", { sysctls: { [K.somax]: 4099 }, bootOverride: "error" }));
      expect(c.ok).toBe(false);
      expect(c.error).toContain(`${K.somax} = 4099 is overridden at boot by /etc/sysctl.d/99-crlf.conf:1 which sets 5000:`);
    } finally {
      await host.exec("rm -f /etc/sysctl.d/99-crlf.conf");
    }
  });

  test("a dangling symlink at the target file name is the user's: refused at preflight, kept, nothing changed", async () => {
    const host = lab.hosts[1];
    const file = "/etc/sysctl.d/90-net-tuning-link.conf";
    await host.exec(`ln -s /etc/nowhere.conf ${file}`);
    try {
      const before = await snapshot(host);
      const stack = newStack("link");
      const r = await stack.up(sysProgram(host, "link", { sysctls: { [K.somax]: 4098 } }));
      expect(r.ok).toBe(false);
      expect(r.error).toContain(`${file} is a symlink (to /etc/nowhere.conf), not a file written by this resource`);
      expect((await host.exec(`readlink ${file}`)).stdout.trim()).toBe("/etc/nowhere.conf");
      expect(await snapshot(host)).toBe(before);
    } finally {
      await host.exec(`rm -f ${file}`);
    }
  });

  test("item 5, the race: a symlink planted at the temporary name between its removal and the write is never followed; each run applies or fails rolled back", async () => {
    const host = lab.hosts[1];
    const orig = await readSysctl(host, K.somax);
    const before = await snapshot(host);
    const tmp = "/etc/sysctl.d/.90-net-tuning-race.conf.net-tuning-new";
    // another user's loop plants the link as fast as the shell can (bounded: at most 2,000,000 attempts or until told
    // to stop); the engine removes whatever is at that name, then opens it exclusively (noclobber)
    const planter = `i=0; while [ $i -lt 2000000 ] && [ ! -e /run/nt-race-stop ]; do ln -s /etc/nt-race-victim ${tmp} 2>/dev/null; i=$((i + 1)); done`;
    // (two loops: on a loaded machine, as when the lab suites run side by side, one loop alone lost every race of 20)
    await host.exec(`rm -f /run/nt-race-stop /etc/nt-race-victim; (${planter}) > /dev/null 2>&1 & (${planter}) > /dev/null 2>&1 &`);
    const stack = newStack("race");
    const outcomes: string[] = [];
    try {
      // at least 4 runs, and on until the planter has won the race once (at most 40 runs)
      for (let i = 0; i < 40 && (i < 4 || !outcomes.includes("failed")); i++) {
        const v = 4200 + i;
        const r = await stack.up(sysProgram(host, "race", { sysctls: { [K.somax]: v } }));
        const now = await readSysctl(host, K.somax);
        if (r.ok) {
          expect(now).toBe(String(v));
          outcomes.push("applied");
        } else {
          // refused to write through the planted name: rolled back, as the message says
          expect(r.error).toContain("cannot write /etc/sysctl.d/90-net-tuning-race.conf");
          expect(r.error).toContain("every change of this run was rolled back");
          expect([String(v), now === String(v)]).toEqual([String(v), false]);
          outcomes.push("failed");
        }
        // never followed: the link's target was never created
        expect((await host.exec("test -e /etc/nt-race-victim")).code).not.toBe(0);
      }
    } finally {
      await host.exec(`touch /run/nt-race-stop; sleep 0.5; rm -f ${tmp} /run/nt-race-stop`);
    }
    console.log(`symlink race, ${outcomes.length} runs: ${outcomes.join(", ")}`);
    // the planter did win the race at least once (else the test proved nothing)
    expect(outcomes).toContain("failed");
    expect((await host.exec("test -e /etc/nt-race-victim")).code).not.toBe(0);
    ok(await stack.destroy());
    expect(await readSysctl(host, K.somax)).toBe(orig);
    expect(await snapshot(host)).toBe(before);
  });
});

test("an owner line removed by hand from our sysctl.d file: the delete restores the values, keeps the file and fails naming it; after the fix it converges", async () => {
  const host = lab.hosts[1];
  const orig = await readSysctl(host, K.somax);
  const before = await snapshot(host);
  const stack = newStack("marker");
  ok(await stack.up(sysProgram(host, "marker", { sysctls: { [K.somax]: 4097 } })));
  const file = "/etc/sysctl.d/90-net-tuning-marker.conf";
  expect((await host.exec(`sed -i '/^# pulumi-net-tuning owner: /d' ${file} && grep -c owner ${file}`)).stdout.trim()).toBe("0");
  const d = await stack.destroy();
  expect(d.ok).toBe(false);
  expect(d.error).toContain(`${file} was written by this resource (its journal lists it) but its line '# pulumi-net-tuning owner: integrity/marker/marker' was removed by hand`);
  expect(d.error).toContain("delete the file, or put that line back, then run the delete again");
  expect(await readSysctl(host, K.somax)).toBe(orig);
  expect((await host.exec(`test -f ${file}`)).code).toBe(0);
  await host.exec(`rm -f ${file}`);
  ok(await stack.destroy());
  expect(await snapshot(host)).toBe(before);
});

describe("the engine trusts nothing another user can write", () => {
  const cases: [string, string, string, RegExp][] = [
    ["a world-writable /var/lib", "chmod 1777 /var/lib", "chmod 755 /var/lib", /\/var\/lib is writable by other users \(drwxrwxrwt/],
    ["a state directory writable by its group", "mkdir -p /var/lib/pulumi-net-tuning/sysctl && chmod 770 /var/lib/pulumi-net-tuning/sysctl", "chmod 700 /var/lib/pulumi-net-tuning/sysctl", /\/var\/lib\/pulumi-net-tuning\/sysctl is writable by other users \(drwxrwx---/],
    ["a state directory owned by another user", "mkdir -p /var/lib/pulumi-net-tuning && chown 1234 /var/lib/pulumi-net-tuning", "chown 0 /var/lib/pulumi-net-tuning", /\/var\/lib\/pulumi-net-tuning is owned by uid 1234, not root/],
  ];
  test.each(cases)("%s: refused before anything changes, with the fix; converges once fixed", async (_t, setup, fix, message) => {
    const host = lab.hosts[1];
    const before = await snapshot(host);
    await host.exec(setup);
    try {
      const stack = newStack("trust");
      const r = await stack.up(sysProgram(host, "trust", { sysctls: { [K.somax]: 4096 } }));
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(message);
      expect(r.error).toContain("nothing was changed. Make it root's and writable by root only (chown root:root, chmod go-w)");
      await host.exec(fix);
      ok(await stack.up(sysProgram(host, "trust", { sysctls: { [K.somax]: 4096 } })));
      ok(await stack.destroy());
      expect(await snapshot(host)).toBe(before);
    } finally {
      await host.exec(fix);
    }
  });

  test("a journal key with a '..' step (a forged journal): refused before anything changes, nothing written outside", async () => {
    const host = lab.hosts[1];
    const stack = newStack("forged");
    ok(await stack.up(sysProgram(host, "forged", { sysctls: { [K.somax]: 4095 } })));
    const j = (await host.exec("ls /var/lib/pulumi-net-tuning/sysctl/*.orig")).stdout.trim().split("\n").find((f) => f.includes("forged"))!;
    const good = (await host.exec(`cat ${j}`)).stdout;
    await host.exec(`printf 'net/../../../etc/nt-pwned\\tx\\n' >> ${j}`);
    const mid = await snapshot(host);
    const r = await stack.up(sysProgram(host, "forged", { sysctls: { [K.somax]: 4094 } }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain(`the journal ${j} on `);
    expect(r.error).toContain("holds an invalid key 'net/../../../etc/nt-pwned' (altered?); nothing was changed");
    expect(await snapshot(host)).toBe(mid);
    expect((await host.exec("test -e /etc/nt-pwned")).code).not.toBe(0);
    await host.exec(`cat > ${j}`, { stdin: good });
    ok(await stack.destroy());
  });
});

test("SIGKILL leaves a work directory in /tmp: the next run on the host removes it (its pid is gone), a live run's stays", async () => {
  const host = lab.hosts[1];
  const stack = newStack("killtmp");
  await setHooks(host, ["pause-after-step 3 60"]);
  await hold(host);
  try {
    const up = stack.up(sysProgram(host, "kt", { sysctls: { [K.somax]: 4093, [K.syn]: 3093 } }));
    const pid = await waitPaused(host);
    // a live run's directory (this one, paused) is not touched by another run's clean-up: checked below by its pid
    const dirs = (await host.exec("ls -d /tmp/net-tuning.*")).stdout.trim().split("\n");
    expect(dirs.length).toBe(1);
    expect((await host.exec(`cat ${dirs[0]}/pid`)).stdout.trim()).toBe(String(pid));
    // another run starts meanwhile: its clean-up leaves the live run's directory; it waits for the host lock
    const other = newStack("killtmp-other");
    const otherUp = other.up(sysProgram(host, "kto", { sysctls: { [K.fin]: 29 } }));
    for (let i = 0; i < 100 && (await host.exec("ls -d /tmp/net-tuning.*")).stdout.trim().split("\n").length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await host.exec("ls -d /tmp/net-tuning.*")).stdout.trim().split("\n").length).toBe(2);
    expect((await host.exec(`test -d ${dirs[0]}`)).code).toBe(0);
    await host.exec(`kill -KILL ${pid}`);
    await release(host);
    expect((await up).ok).toBe(false);
    ok(await otherUp);
    await clearHooks(host);
    expect((await host.exec(`test -d ${dirs[0]}`)).code).toBe(0); // SIGKILL ran no trap: left behind
    // the next run (the recovery up) cleans it
    ok(await stack.up(sysProgram(host, "kt", { sysctls: { [K.somax]: 4093, [K.syn]: 3093 } })));
    expect((await host.exec("ls -d /tmp/net-tuning.* /tmp/net-tuning-in.* 2>/dev/null")).stdout).toBe("");
    ok(await stack.destroy());
  } finally {
    await clearHooks(host);
  }
});

describe("secret values (net.ipv4.tcp_fastopen_key, marked secret in the catalogue)", () => {
  const KEY = "net.ipv4.tcp_fastopen_key";
  const SECRET = "0badc0de-5ec2e7aa-13572468-deadbeef";
  test("the file is 0600, the world-readable record holds no value, a host message never prints it", async () => {
    const host = lab.hosts[1];
    const orig = await readSysctl(host, KEY);
    const stack = newStack("secret");
    const r = ok(await stack.up(sysProgram(host, "sec", { sysctls: { [KEY]: SECRET, [K.somax]: 4092 } })));
    expect(r.error).toBeUndefined();
    expect(await readSysctl(host, KEY)).toBe(SECRET);
    expect(String(stack.get("sec-apply")!.inputs.stdin)).toContain(`@secret ${KEY}\n`);
    const file = "/etc/sysctl.d/90-net-tuning-sec.conf";
    expect((await host.exec(`stat -c %a ${file}`)).stdout.trim()).toBe("600");
    // every file of the engine on the host, except the 0600 ones root keeps (the sysctl.d file, the journal)
    const grep = await host.exec(`grep -rl ${SECRET} /var/lib/pulumi-net-tuning-converged /tmp /run /etc 2>/dev/null | grep -v '^${file}$'`);
    expect(grep.stdout).toBe("");
    // /proc/sys/net/ipv4/tcp_fastopen_key is root's only (0600): the world-readable record names the key, no value
    expect((await host.exec("cat /var/lib/pulumi-net-tuning-converged/*")).stdout).toContain(`\nunknown\t${KEY}\n`);
    // a boot-order conflict on the key names the file and line, not the value
    await host.exec(`printf '${KEY} = 00000000-00000000-00000000-00000001\\n' > /etc/sysctl.d/99-zz-fo.conf`);
    try {
      const c = await stack.up(sysProgram(host, "sec", { sysctls: { [KEY]: SECRET, [K.somax]: 4091 } }));
      expect(c.ok).toBe(false);
      expect(c.error).toContain(`${KEY} = (secret) is overridden at boot by /etc/sysctl.d/99-zz-fo.conf:1 which sets another value (secret)`);
      expect(c.error).not.toContain("00000000-00000000-00000000-00000001");
      expect(c.error).not.toContain(SECRET);
    } finally {
      await host.exec("rm -f /etc/sysctl.d/99-zz-fo.conf");
    }
    ok(await stack.destroy());
    expect(await readSysctl(host, KEY)).toBe(orig);
  });
});
