/**
 * One engine per host (issue #12) on real lab hosts through the harness (pulumi-command 1.2.1 semantics, CopyToRemote
 * over SFTP): delivery (one stack-level CopyToRemote per stack and address) and install, sessions per operation, root
 * and sudo, rollback with the host's files gone, a host rebuilt under the same address (the recovery commands the
 * messages name are run against the stack's URNs), a host without the sftp subsystem.
 */
import { NetTuning, NetTuningArgs } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { engine } from "../../provider/host/engine";
import { APPLY_RUN, ENGINE_BOOT, engineStdin, planOfStdin, sudoLine } from "../../provider/host/programs";
import { shQuote } from "../../provider/shell";
import { COPY_TYPE, Stack, StateEntry } from "../../testkit/harness";
import { Lab, LabHost, startLab, Who } from "../../testkit/lab";
import { lookedUpUrn, ok, snapshot, sysctl, sysProgram } from "../../testkit/host";

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 4, tag: "engine" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

const E = engine();
const INSTALLED = `/usr/local/lib/pulumi-net-tuning/engine-${E.sha256}.sh`;
const SOMAXCONN = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";

type Args = Omit<NetTuningArgs, "connection" | "become">;
/** testkit/host's NetTuning program, with `become: "sudo"` for the sudo user. */
const program = (host: LabHost, name: string, args: Args, who: Who = "root") =>
  sysProgram(host, name, { become: who === "sudo" ? "sudo" : undefined, ...args }, who);
/** Host values and the files this library writes for users, without the engine's own delivery files. */
async function values(host: LabHost): Promise<string> {
  return (await snapshot(host, { delivery: true }))
    .split("\n")
    .filter((l) => !/^\/usr\/local\/lib\/pulumi-net-tuning|^\/var\/lib\/pulumi-net-tuning\/incoming|\/\.cache\/pulumi-net-tuning/.test(l.replace(/^[0-9a-f]{32} +/, "")))
    .join("\n");
}
/** The stack's engine delivery (a stack-level CopyToRemote; one per stack and address here). */
function delivery(stack: Stack): StateEntry {
  const d = stack.resources().filter((e) => e.type === COPY_TYPE);
  expect(d.length).toBe(1);
  return d[0];
}
/** The URN the recovery message's own look-up command finds among the stack's. */
const lookedUp = (message: string, stack: Stack) => lookedUpUrn(message, stack.resources().map((e) => e.urn));
async function stat(host: LabHost, p: string): Promise<string> {
  const r = await host.exec(`stat -c '%U %a' ${p}`);
  return r.code === 0 ? r.stdout.trim() : `absent (${r.stderr.trim()})`;
}

describe.each<Who>(["root", "sudo"])("engine delivery as %s", (who) => {
  test("create: 2 sessions (copy + apply), installed root-owned under its hash; update 1; unchanged 0; destroy 1 restores", async () => {
    const host = lab.hosts[who === "root" ? 0 : 1];
    const full = await snapshot(host, { delivery: true });
    const before = await values(host);
    const o = { somaxconn: await sysctl(host, SOMAXCONN), fin: await sysctl(host, FIN) };
    const stack = new Stack({ project: "eng", stack: who });
    const r1 = ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 8191, [FIN]: 21 } }, who)));
    expect(r1.sessions.total).toBe(2);
    const d0 = delivery(stack);
    expect(d0.name).toMatch(new RegExp(`^net-tuning-engine-${host.address.replace(/\./g, "\\.")}-[0-9a-f]{8}$`));
    expect(d0.parent).toMatch(/::pulumi:pulumi:Stack::/);
    expect(r1.copies.map((c) => [c.name, c.op, c.ok])).toEqual([[d0.name, "create", true]]);
    const stage = who === "root" ? "/var/lib/pulumi-net-tuning/incoming" : ".cache/pulumi-net-tuning";
    expect(r1.copies[0].remotePath).toBe(`${stage}/engine.${d0.name.slice("net-tuning-engine-".length)}.sh`);
    if (who === "sudo") {
      // SFTP relative paths are home-relative and written as the SSH user (no sudo)
      expect(await stat(host, `/home/${host.sudoUser.user}/${r1.copies[0].remotePath}`)).toBe(`${host.sudoUser.user} 644`);
    }
    expect(await sysctl(host, SOMAXCONN)).toBe("8191");
    expect(await sysctl(host, FIN)).toBe("21");
    expect(await stat(host, "/usr/local/lib/pulumi-net-tuning")).toBe("root 755");
    expect(await stat(host, INSTALLED)).toBe("root 644");
    expect((await host.exec(`sha256sum ${INSTALLED}`)).stdout.split(" ")[0]).toBe(E.sha256);
    expect((await host.exec("ls -a /usr/local/lib/pulumi-net-tuning")).stdout.split("\n").filter((f) => f.startsWith(".new"))).toEqual([]);
    // the plan names the engine in its first line and carries no program
    const apply = r1.runs.find((r) => r.name === "web-apply")!;
    expect(apply.op).toBe("create");
    expect(apply.cmd).toContain(" sysctl apply-create ");
    expect(apply.stdin!.split("\n")[0]).toBe(`@engine ${E.version} ${E.sha256}`);
    expect(apply.stdin).not.toContain("@program");
    expect(apply.stdin!.length).toBeLessThan(2000);

    const same = ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 8191, [FIN]: 21 } }, who)));
    expect(same.sessions.total).toBe(0);

    const r2 = ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 8190, [FIN]: 21 } }, who)));
    expect(r2.sessions.total).toBe(1);
    expect(r2.copies).toEqual([]);
    const upd = r2.runs.find((r) => r.name === "web-apply")!;
    expect([upd.op, upd.cmd.includes(" sysctl apply-update ")]).toEqual(["update", true]);
    expect(await sysctl(host, SOMAXCONN)).toBe("8190");

    const d = ok(await stack.destroy());
    expect(d.sessions.total).toBe(1);
    expect(await sysctl(host, SOMAXCONN)).toBe(o.somaxconn);
    expect(await sysctl(host, FIN)).toBe(o.fin);
    expect(await values(host)).toBe(before);
    // the host is left clean: staged copy, installed engine and the directories this product created are gone
    expect(await snapshot(host, { delivery: true })).toBe(full);
    // the installed engine restored (two-tier restore: tests/engine/fallback.test.ts); no warning: every removal succeeded
    expect(d.runs[0].stdout).toBe(`net-tuning-report v1\nrestored-by\tengine ${E.fileName}\nend`);
    expect(await stat(host, "/usr/local/lib/pulumi-net-tuning")).toMatch(/^absent/);
    expect(await stat(host, "/var/lib/pulumi-net-tuning")).toMatch(/^absent/);
    if (who === "sudo") expect(await stat(host, `/home/${host.sudoUser.user}/.cache/pulumi-net-tuning`)).toMatch(/^absent/);
  });
});

test("two stacks on one host: the first destroy removes only its staged copy and keeps the engine, the second removes it", async () => {
  const host = lab.hosts[0];
  const full = await snapshot(host, { delivery: true });
  const a = new Stack({ project: "eng", stack: "two-a" });
  const b = new Stack({ project: "eng", stack: "two-b" });
  ok(await a.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7101 } })));
  ok(await b.up(program(host, "db", { sysctls: { [FIN]: 24 } })));
  const stagedA = String(delivery(a).inputs.remotePath);
  const stagedB = String(delivery(b).inputs.remotePath);
  expect(stagedA).not.toBe(stagedB);
  const da = ok(await a.destroy());
  expect(da.runs[0].stdout).toBe(`net-tuning-report v1\nrestored-by\tengine ${E.fileName}\nend`);
  expect(await stat(host, stagedA)).toMatch(/^absent/);
  expect(await stat(host, stagedB)).toBe("root 644");
  expect(await stat(host, INSTALLED)).toBe("root 644");
  // the remaining resource still runs the installed engine
  ok(await b.up(program(host, "db", { sysctls: { [FIN]: 25 } })));
  expect(await sysctl(host, FIN)).toBe("25");
  ok(await b.destroy());
  expect(await stat(host, stagedB)).toMatch(/^absent/);
  expect(await stat(host, "/usr/local/lib/pulumi-net-tuning")).toMatch(/^absent/);
  expect(await snapshot(host, { delivery: true })).toBe(full);
});

test("destroy restores every original from state when the journal, the staged copy and the installed engine are gone", async () => {
  const host = lab.hosts[2];
  const before = await values(host);
  const o = await sysctl(host, SOMAXCONN);
  const stack = new Stack({ project: "eng", stack: "gone" });
  ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7001, [FIN]: 23 } })));
  expect(await sysctl(host, SOMAXCONN)).toBe("7001");
  // the originals and the restore program are stored as one gzip|base64 line (the apply found both tools): still self-contained
  const restoreIn = String(stack.get("web-restore")!.inputs.stdin);
  expect(restoreIn).toMatch(/^@restore 1\n[A-Za-z0-9+/=]+\n$/);
  const rm = await host.exec("rm -rf /var/lib/pulumi-net-tuning /usr/local/lib/pulumi-net-tuning");
  expect(rm.code).toBe(0);
  const d = await stack.destroy();
  expect(d.ok).toBe(true);
  expect(d.runs.map((r) => r.name)).toEqual(["web-restore"]);
  expect(d.runs[0].stdout).toMatch(/warning\tthe host's journal .* is missing; restoring the originals kept in Pulumi state/);
  expect(await sysctl(host, SOMAXCONN)).toBe(o);
  expect(await values(host)).toBe(before);
});

test("a host rebuilt under the same address: the next updates name the exact recovery commands, which then work", async () => {
  const host = lab.hosts[2];
  const o = await sysctl(host, SOMAXCONN);
  const stack = new Stack({ project: "eng", stack: "rebuilt" });
  ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7002 } })));
  // "rebuild": the engine, its staged copy, the journal and our file are gone, the value is back to the original
  expect((await host.exec(`rm -rf /var/lib/pulumi-net-tuning /usr/local/lib/pulumi-net-tuning /etc/sysctl.d/90-net-tuning-web.conf; echo ${o} > /proc/sys/net/core/somaxconn`)).code).toBe(0);
  const r = await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7003 } }));
  expect(r.ok).toBe(false);
  const d0 = delivery(stack);
  const staged = String(d0.inputs.remotePath);
  const hostname = (await host.exec("uname -n")).stdout.trim();
  expect(r.error!.split("\n").slice(1).join("\n")).toBe(
    `net-tuning on ${hostname}: no engine ${E.version} (${staged} missing or altered): run pulumi up --replace "$(pulumi stack --show-urns|grep -o 'urn:pulumi:[^ ]*::${d0.name}$')"\n`,
  );
  // the command the message names finds exactly the delivery's URN
  expect(lookedUp(r.error!, stack)).toBe(d0.urn);
  expect(await sysctl(host, SOMAXCONN)).toBe(o); // nothing changed
  // the recovery: `pulumi up --replace <urn>` = the delivery is replaced (copied again), then the apply updates;
  // the journal is gone too, so the update refuses to take the values found as originals and names the next step
  expect(d0.type).toBe(COPY_TYPE);
  const rr = await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7003 } }), { replace: [d0.urn] });
  expect(rr.ok).toBe(false);
  expect(rr.copies.map((c) => c.op)).toEqual(["create"]);
  const component = stack.resources().find((x) => x.name === "web")!.urn;
  expect(rr.error).toContain(`pulumi destroy --target "$(pulumi stack --show-urns|grep -o 'urn:pulumi:[^ ]*[:$]net-tuning:index:NetTuning::web$')" --target-dependents, then pulumi up`);
  expect(lookedUp(rr.error!, stack)).toBe(component);
  expect(await sysctl(host, SOMAXCONN)).toBe(o); // nothing changed
  // `pulumi destroy --target <component> --target-dependents` (the stack holds only it: a destroy), then `pulumi up`
  const d = ok(await stack.destroy());
  expect(d.runs.map((x) => x.stdout).join("\n")).toMatch(/journal .* is missing; restoring the originals kept in Pulumi state/);
  const again = ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7003 } })));
  expect(await sysctl(host, SOMAXCONN)).toBe("7003");
  expect(again.outputs?.previous).toEqual({ [SOMAXCONN]: o });
  ok(await stack.destroy());
  expect(await sysctl(host, SOMAXCONN)).toBe(o);
});

test("a host whose sshd has no sftp subsystem: the delivery fails and says so, nothing on the host changes", async () => {
  const host = lab.hosts[3];
  const o = await sysctl(host, SOMAXCONN);
  // a second sshd on another port inside the same host, with the Subsystem line removed
  const port = 2299;
  const start = await host.exec(
    `grep -v '^Subsystem' /etc/ssh/sshd_config > /etc/ssh/sshd_nosftp && ` +
      `(/usr/sbin/sshd -f /etc/ssh/sshd_nosftp -p ${port} -h /etc/ssh/ssh_host_ed25519_key -o PidFile=/run/sshd-nosftp.pid &) && sleep 1`,
  );
  expect(start.code).toBe(0);
  const conn = { ...host.connection("root"), port };
  const stack = new Stack({ project: "eng", stack: "nosftp" });
  const r = await stack.up(() => {
    new NetTuning("web", { connection: conn, sysctls: { [SOMAXCONN]: 7004 } });
  });
  expect(r.ok).toBe(false);
  expect(r.error).toMatch(/Subsystem sftp/);
  expect(r.runs).toEqual([]); // the apply never ran
  expect(await sysctl(host, SOMAXCONN)).toBe(o);
  await host.exec("kill $(cat /run/sshd-nosftp.pid)");
});

test("NetTuning + NicQueues on one host: create 3 sessions (one delivery, shared, and an apply each), unchanged 0, destroy 2", async () => {
  const host = lab.hosts[3];
  const full = await snapshot(host, { delivery: true });
  const stack = new Stack({ project: "eng", stack: "both" });
  const prog = () => {
    new NetTuning("t", { connection: host.connection("root"), sysctls: { [SOMAXCONN]: 7005 } });
    new NicQueues("q", { connection: host.connection("root"), interface: host.iface, txQueueLength: 1500 });
  };
  const r = ok(await stack.up(prog));
  expect(r.sessions.total).toBe(3);
  expect(r.copies.length).toBe(1);
  const d0 = delivery(stack);
  for (const n of ["t-apply", "q-apply"]) expect(stack.get(n)!.options.dependsOn).toEqual([d0.urn]);
  expect((await stack.up(prog)).sessions.total).toBe(0);
  // one resource goes: its restore keeps the staged copy (the other resource of the stack on this address uses it)
  const one = ok(await stack.up(() => {
    new NetTuning("t", { connection: host.connection("root"), sysctls: { [SOMAXCONN]: 7005 } });
  }));
  expect(one.runs.map((x) => x.name)).toEqual(["q-restore"]);
  expect(await stat(host, String(d0.inputs.remotePath))).toBe("root 644");
  const d = ok(await stack.destroy());
  expect(d.sessions.total).toBe(1);
  expect(await snapshot(host, { delivery: true })).toBe(full);
});

test("a host without gzip: the restore program is stored as plain text and destroy restores", async () => {
  const host = lab.hosts[3];
  const o = await sysctl(host, SOMAXCONN);
  expect((await host.exec("mv /usr/bin/gzip /usr/bin/gzip.off")).code).toBe(0);
  try {
    const stack = new Stack({ project: "eng", stack: "nogzip" });
    const r = ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7006 } })));
    expect(r.runs[0].stdout).not.toMatch(/^host\t/m);
    const restoreIn = String(stack.get("web-restore")!.inputs.stdin);
    expect(restoreIn).toMatch(/^@restore 1\n@engine \S+ [0-9a-f]{64}\n@net-tuning v1\n/);
    expect(restoreIn).toContain("\n@program\n");
    expect(await sysctl(host, SOMAXCONN)).toBe("7006");
    ok(await stack.destroy());
    expect(await sysctl(host, SOMAXCONN)).toBe(o);
  } finally {
    await host.exec("mv /usr/bin/gzip.off /usr/bin/gzip");
  }
});

test("become sudo for a user without sudo: exit 3 naming the fix, after the delivery, nothing changed", async () => {
  const host = lab.hosts[3];
  const o = await sysctl(host, SOMAXCONN);
  const stack = new Stack({ project: "eng", stack: "plain" });
  const r = await stack.up(() => {
    new NetTuning("web", { connection: host.connection("plain"), become: "sudo", sysctls: { [SOMAXCONN]: 7007 } });
  });
  expect(r.ok).toBe(false);
  expect(r.error).toMatch(/Process exited with status 3/);
  expect(r.error).toContain(`net-tuning: become "sudo" failed for user ${host.plainUser.user}: `);
  expect(r.error).toContain("Give this user passwordless sudo (NOPASSWD) or connect as root.");
  expect(await sysctl(host, SOMAXCONN)).toBe(o);
});

describe("the apply bootstrap on a lab host (the exact command and stdin of a create)", () => {
  test("a staged copy whose sha256 differs is refused (exit 6, nothing installed, no temporary left); no @engine line: exit 5", async () => {
    const host = lab.hosts[0];
    const stack = new Stack({ project: "eng", stack: "tamper" });
    ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7010 } })));
    const run = stack.history.find((r) => r.name === "web-apply")!;
    const d0 = delivery(stack);
    const staged = String(d0.inputs.remotePath);
    ok(await stack.destroy());
    const o = await sysctl(host, SOMAXCONN);
    // the destroy removed the staged copy; someone puts an altered one there (the installed engine is gone too)
    expect((await host.exec(`test -e ${staged} || test -e /usr/local/lib/pulumi-net-tuning`)).code).not.toBe(0);
    const tamper = await host.exec(`mkdir -p ${staged.replace(/\/[^/]*$/, "")} && cat > ${staged} && echo 'echo pwned > /tmp/pwned' >> ${staged}`, { stdin: E.text });
    expect(tamper.code).toBe(0);
    const r = await host.ssh(run.cmd, { stdin: run.stdin });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(`: no engine ${E.version} (${staged} missing or altered): run pulumi up --replace "$(pulumi stack --show-urns|grep -o 'urn:pulumi:[^ ]*::${d0.name}$')"\n`);
    expect((await host.exec("ls -A /usr/local/lib/pulumi-net-tuning")).stdout).toBe("");
    expect((await host.exec("test -e /tmp/pwned")).code).not.toBe(0);
    expect(await sysctl(host, SOMAXCONN)).toBe(o);
    // without its @engine line, or cut inside the bootstrap line: nothing runs
    const hostname = (await host.exec("uname -n")).stdout.trim();
    for (const stdin of [run.stdin!.split("\n").slice(1).join("\n"), run.stdin!.slice(0, run.stdin!.indexOf("\n") + 300)]) {
      const bad = await host.ssh(run.cmd, { stdin });
      expect([bad.code, bad.stderr]).toEqual([5, "net-tuning: stdin cut or no @engine line; nothing was changed\n"]);
    }
    // an @engine line naming no engine (not 64 hex digits): the bootstrap refuses it
    const short = await host.ssh(run.cmd, { stdin: run.stdin!.replace(/^(@engine \S+ )([0-9a-f]{64})/, "$1abc") });
    expect([short.code, short.stderr]).toEqual([5, `net-tuning on ${hostname}: no @engine line\n`]);
    expect(await sysctl(host, SOMAXCONN)).toBe(o);
  });

  test("the bootstrap of the previous version (in its command, kept when a live read fails during an upgrade) runs this version's stdin", async () => {
    const host = lab.hosts[0];
    const stack = new Stack({ project: "eng", stack: "oldboot" });
    ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7011 } })));
    const run = stack.history.find((r) => r.name === "web-apply")!;
    // the command of the versions before the bootstrap moved into the stdin: `sh -c BOOTSTRAP`, which reads the
    // @engine line itself and execs the engine with the rest of the stdin (here: this bootstrap's line, then the plan)
    const oldBoot = ENGINE_BOOT.replace(";};[ \"$t:", ";};read -r t v s;[ \"$t:");
    expect(oldBoot).not.toBe(ENGINE_BOOT);
    const token = String(delivery(stack).name).slice("net-tuning-engine-".length);
    // the engine not installed yet (an upgrade): the old bootstrap installs it from the staged copy, then runs it
    expect((await host.exec("rm -rf /usr/local/lib/pulumi-net-tuning")).code).toBe(0);
    const r = await host.ssh(`/bin/sh -c ${shQuote(oldBoot)} net-tuning sysctl apply-update ${token}`, { stdin: run.stdin });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/^net-tuning-report v1\n[^]*\nend\n/);
    expect((await host.exec(`ls /usr/local/lib/pulumi-net-tuning`)).stdout).toBe(`${E.fileName}\n`);
    expect(await sysctl(host, SOMAXCONN)).toBe("7011");
    ok(await stack.destroy());
  });

  test("with become sudo: the commands of the versions before (their sudo wrapper in the command) run this version's stdin (its sudo line)", async () => {
    const host = lab.hosts[1];
    const stack = new Stack({ project: "eng", stack: "oldsudo" });
    ok(await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7012 } }, "sudo")));
    const run = stack.history.find((r) => r.name === "web-apply")!;
    expect(run.stdin!.split("\n")[1]).toBe(sudoLine(APPLY_RUN));
    const token = String(delivery(stack).name).slice("net-tuning-engine-".length);
    // the sudo wrapper those versions put around their command (its refusal diagnosis left out: not reached here)
    const wrapped = (run: string) => `if [ -O / ];then set -- exec;else set -- sudo -n;fi;"$@" ${run}`;
    const args = `net-tuning sysctl apply-update ${token} "$HOME"/.cache/pulumi-net-tuning`;
    // 0.3.0's (the bootstrap in the command, reading the @engine line itself: the engine skips the sudo line, the
    // second @engine line and the bootstrap line) and the last round's (APPLY_RUN under sudo: the sudo line, evaluated
    // as root, execs APPLY_RUN on the rest), each with the engine not installed yet (an upgrade)
    const oldBoot = ENGINE_BOOT.replace(";};[ \"$t:", ";};read -r t v s;[ \"$t:");
    for (const [i, cmd] of [wrapped(`/bin/sh -c ${shQuote(oldBoot)} ${args}`), wrapped(`/bin/sh -c ${shQuote(APPLY_RUN)} ${args}`)].entries()) {
      expect((await host.exec("rm -rf /usr/local/lib/pulumi-net-tuning")).code).toBe(0);
      // (another value each time, so that the run changes something: the plan's lines with the key)
      const plan = planOfStdin(run.stdin!).replace(/^(.*somaxconn.*[ \t])7012$/gm, `$1${7013 + i}`);
      expect(plan).toContain(`somaxconn = ${7013 + i}\n`);
      const r = await host.ssh(cmd, { who: "sudo", stdin: engineStdin(plan, E, "sudo") });
      expect([r.code, r.stderr]).toEqual([0, ""]);
      expect(r.stdout).toMatch(/^net-tuning-report v1\n[^]*\nend\n/);
      expect(await sysctl(host, SOMAXCONN)).toBe(String(7013 + i));
    }
    ok(await stack.destroy());
  });
});

test("a non-root connection without become: staged in its home, the apply says it must run as root (exit 3)", async () => {
  const host = lab.hosts[3];
  const o = await sysctl(host, SOMAXCONN);
  await host.exec("rm -rf /usr/local/lib/pulumi-net-tuning");
  const stack = new Stack({ project: "eng", stack: "plainroot" });
  const r = await stack.up(() => {
    new NetTuning("web", { connection: host.connection("plain"), sysctls: { [SOMAXCONN]: 7008 } });
  });
  expect(r.ok).toBe(false);
  expect(r.copies.map((c) => [c.ok, c.remotePath.startsWith(".cache/pulumi-net-tuning/")])).toEqual([[true, true]]);
  expect(r.error).toMatch(/Process exited with status 3/);
  expect(r.error).toContain(`: must run as root, not ${host.plainUser.user}: connect as root or set become: sudo`);
  expect((await host.exec("ls -A /usr/local/lib/pulumi-net-tuning 2>&1")).stdout).toMatch(/No such file/);
  expect(await sysctl(host, SOMAXCONN)).toBe(o);
});

test("an engine directory planted by another user is never run (exit 6), even with the right file name", async () => {
  const host = lab.hosts[2];
  const o = await sysctl(host, SOMAXCONN);
  const u = host.plainUser.user;
  const plant = await host.exec(
    `rm -rf /usr/local/lib/pulumi-net-tuning && mkdir -m 755 /usr/local/lib/pulumi-net-tuning && ` +
      `printf 'echo planted > /tmp/planted\\n' > ${INSTALLED} && chown -R ${u} /usr/local/lib/pulumi-net-tuning`,
  );
  expect(plant.code).toBe(0);
  const stack = new Stack({ project: "eng", stack: "planted" });
  const r = await stack.up(program(host, "web", { sysctls: { [SOMAXCONN]: 7009 } }));
  expect(r.ok).toBe(false);
  expect(r.error).toMatch(/Process exited with status 6/);
  expect(r.error).toContain(`: ${INSTALLED} not owned by root`);
  expect((await host.exec("test -e /tmp/planted")).code).not.toBe(0);
  expect(await sysctl(host, SOMAXCONN)).toBe(o);
  await host.exec("rm -rf /usr/local/lib/pulumi-net-tuning");
});
