/**
 * NetTuning under the real `pulumi` CLI (v3.248.0, built by scripts/pulumi-toolchain.sh), on lab hosts, as root and with
 * `become: "sudo"`: what a reviewer reads in `pulumi preview --diff`, the sessions each command opens on the host
 * (counted on the host by what each session ran: testkit/cli logSessions), the host's values and files after each
 * step, refresh, drift, a move, a rename, adoption, a failing apply, and destroy. One stack's lifecycle per user, its
 * steps in order. The command provider is named in the titles (testkit/cli providerLabel).
 */
import { CliProject, clearSessions, countKinds, explain, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost, Who } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { snapshot } from "../../testkit/host";
import { declare, Declared, fileOf, projectOn, values } from "./fixtures";

jest.setTimeout(600_000);

const hosts: LabHost[] = [];
useLab("cli", 2, async (hs) => {
  toolchain();
  for (const h of hs) {
    await logSessions(h);
    // the same machine under a second address: a second sshd on port 2222
    const r = await h.exec("/usr/sbin/sshd -p 2222 -o PidFile=/run/sshd-2222.pid -f /etc/ssh/sshd_config -h /etc/ssh/ssh_host_ed25519_key");
    if (r.code !== 0) throw new Error(`second sshd: ${r.stderr}`);
  }
  hosts.push(...hs);
});

const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const RMEM = "net.ipv4.tcp_rmem";
const KEYS = [SOMAX, FIN, RMEM];
const FILE = (name: string) => `/etc/sysctl.d/90-net-tuning-${name}.conf`;

describe.each<[Who, number]>([["root", 0], ["sudo", 1]])(`NetTuning as %s, real pulumi CLI + ${providerLabel()}`, (who, n) => {
  let host: LabHost;
  let p: CliProject;
  let originals: Record<string, string>;
  let before: string;
  const args = (sysctls: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, Declared> => ({
    web: { kind: "sysctl", args: { sysctls, ...(who === "sudo" ? { become: "sudo" } : {}), ...extra } },
  });
  const DECLARED = { [SOMAX]: 8192, [FIN]: 21, [RMEM]: [4096, 131072, 8388608] };

  beforeAll(async () => {
    host = hosts[n];
    originals = await values(host, KEYS);
    before = await snapshot(host);
    p = await projectOn(host, `nt${who}`, who, args(DECLARED));
    await clearSessions(host);
  });

  test("preview --diff of a create: every setting as live → declared, the plan in the diff, no change and one read-only session", async () => {
    const r = await p.preview({ diff: true });
    expect(r.code).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toContain("+ net-tuning:index:NetTuning: (create)");
    expect(out).toContain("+ command:remote:Command: (create)");
    // the plan's first lines (a create shows 3 lines of a new string input)
    // (the CLI cuts a new string to its first three lines, each to its start: the @engine line, the bootstrap's start;
    // with become "sudo" the @engine line, the sudo line's start and the @engine line again)
    expect(out).toMatch(
      who === "sudo"
        ? /stdin +: "@engine \S+ [0-9a-f]{64}\\np=sudo\\\\ -n;[^\n]*?\.\.\.\\n@engine \S+ [0-9a-f]{64}\\n\.\.\."/
        : /stdin +: "@engine \S+ [0-9a-f]{64}\\numask 022;m\(\)\{ [^\n]*?\.\.\.\\n@net-tuning v1\\n\.\.\."/,
    );
    expect(out).toContain(`NetTuning "web" on ${host.address}:22: 3 of 3 settings will change (live → declared)`);
    expect(out).toContain(`${SOMAX}: ${originals[SOMAX]} → 8192`);
    expect(out).toContain(`${FIN}: ${originals[FIN]} → 21`);
    expect(out).toContain(`${RMEM}: ${originals[RMEM]} → 4096 131072 8388608`);
    expect(out).toMatch(/\+ 5 to create/);
    expect(await values(host, KEYS)).toEqual(originals);
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1 });
  });

  test("up: the host holds the declared values and the file; sessions: 2 live reads (preview and update), the engine copy, 1 apply", async () => {
    await clearSessions(host);
    const r = await p.up();
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\+ 5 created/);
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "8192", [FIN]: "21", [RMEM]: "4096 131072 8388608" });
    expect(await fileOf(host, FILE("web"))).toMatch(new RegExp(`^${SOMAX} = 8192$`, "m"));
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 2, sftp: 1, apply: 1 });
    const outs = await p.outputs();
    expect(outs.web).toEqual({ applied: { [SOMAX]: "8192", [FIN]: "21", [RMEM]: "4096 131072 8388608" }, previous: originals });
  });

  test("up again, nothing changed: 0 mutating sessions, exactly 1 live read per program run (2)", async () => {
    await clearSessions(host);
    const r = await p.up();
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/5 unchanged/);
    expect(r.stdout).not.toMatch(/\bupdated\b|\bcreated\b|\bdeleted\b/);
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 2 });
    // --skip-preview: the program runs once
    await clearSessions(host);
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1 });
  });

  test("one value changed: the diff shows that key only (live → declared, and its plan line), then 1 mutating session", async () => {
    await declare(p, args({ ...DECLARED, [FIN]: 23 }));
    await clearSessions(host);
    const pv = await p.preview({ diff: true });
    expect(pv.code).toBe(0);
    const out = pv.stdout + pv.stderr;
    expect(out).toContain("~ command:remote:Command: (update)");
    expect(out).toContain(`NetTuning "web" on ${host.address}:22: 1 of 3 settings will change (live → declared)`);
    expect(out).toContain(`${FIN}: 21 → 23`);
    expect(out).not.toContain(`${SOMAX}: 8192 →`);
    // the stdin line diff names the changed setting on both sides, and no other setting
    const minus = out.split("\n").filter((l) => /^\s*- .*(=|@set)/.test(l));
    const plus = out.split("\n").filter((l) => /^\s*\+ .*(=|@set)/.test(l));
    expect(minus.join("\n")).toContain(FIN);
    expect(plus.join("\n")).toContain(FIN);
    for (const l of [...minus, ...plus]) expect(l).not.toMatch(new RegExp(`${SOMAX}|tcp_rmem`));
    await clearSessions(host);
    const up = await p.up({ skipPreview: true });
    expect(up.code).toBe(0);
    expect(await values(host, [FIN])).toEqual({ [FIN]: "23" });
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, apply: 1 });
  });

  test("refresh leaves the state as it was (Commands have no Read); a hand change on the host shows in the next preview", async () => {
    // compared in plaintext: the engine encrypts every secret again (a fresh nonce) whenever it writes the checkpoint
    const stateBefore = (await p.export(true)).json.deployment.resources;
    const r = await p.refresh();
    expect(r.code).toBe(0);
    const stateAfter = (await p.export(true)).json.deployment.resources;
    const strip = (rs: typeof stateBefore) => (rs ?? []).map(({ urn, inputs, outputs }) => ({ urn, inputs, outputs }));
    expect(strip(stateAfter)).toEqual(strip(stateBefore));
    await host.exec(`echo 1024 > /proc/sys/net/core/somaxconn`);
    const pv = await p.preview({ diff: true });
    expect(pv.code).toBe(0);
    expect(pv.stdout + pv.stderr).toMatch(new RegExp(`${SOMAX}: 1024 → 8192`));
    // refresh does not repair it either; up does
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "8192" });
  });

  test("a move to another address of the same machine, then a file rename: the host equals the state afterwards", async () => {
    await p.setConfig("port", "2222");
    const mv = await p.up({ skipPreview: true });
    expect(mv.code).toBe(0);
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "8192", [FIN]: "23", [RMEM]: "4096 131072 8388608" });
    expect(await fileOf(host, FILE("web"))).toMatch(new RegExp(`^${FIN} = 23$`, "m"));
    await declare(p, args({ ...DECLARED, [FIN]: 23 }, { fileName: "91-web-renamed.conf" }));
    const rn = await p.up({ skipPreview: true });
    expect(rn.code).toBe(0);
    expect(await fileOf(host, FILE("web"))).toBeNull();
    expect(await fileOf(host, "/etc/sysctl.d/91-web-renamed.conf")).toMatch(new RegExp(`^${FIN} = 23$`, "m"));
    const outs = (await p.outputs()).web as { applied: Record<string, string> };
    expect(outs.applied).toEqual(await values(host, KEYS));
  });

  test("a failing apply the preview could not foresee (a file appears between preview and up): up fails, host unchanged, change still pending", async () => {
    await declare(p, args({ ...DECLARED, [FIN]: 27 }, { fileName: "91-web-renamed.conf" }));
    const pv = await p.preview();
    expect(pv.code).toBe(0);
    const mid = await values(host, KEYS);
    // another tool writes a file that overrides the key at boot, after the preview
    await host.exec(`printf '${FIN} = 31\\n' > /etc/sysctl.d/99-zz-other-tool.conf`);
    const up = await p.up({ skipPreview: true });
    expect(up.code).not.toBe(0);
    expect(up.stdout + up.stderr).toMatch(/99-zz-other-tool\.conf/);
    expect(await values(host, KEYS)).toEqual(mid);
    await host.exec("rm -f /etc/sysctl.d/99-zz-other-tool.conf");
    const again = await p.preview();
    expect(again.code).toBe(0);
    expect(again.stdout + again.stderr).toContain(`${FIN}: 23 → 27`);
    // both children: the apply's plan and the restore's stdin (which carries the plan) change
    expect(again.stdout).toMatch(/~ 2 to update/);
  });

  test("destroy: the originals are back, our files are gone, the host is as before the stack", async () => {
    await clearSessions(host);
    const r = await p.destroy();
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/- 5 deleted/);
    expect(await values(host, KEYS)).toEqual(originals);
    expect(await fileOf(host, "/etc/sysctl.d/91-web-renamed.conf")).toBeNull();
    expect(countKinds(await sessions(host))).toEqual({ restore: 1 });
    const after = await snapshot(host);
    expect(after.replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, "")).toBe(before.replace(/^.*\/var\/lib\/pulumi-net-tuning.*\n/gm, ""));
    p.remove();
  });
});
