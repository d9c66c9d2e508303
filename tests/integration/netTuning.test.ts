/**
 * NetTuning lifecycle on real lab hosts (own netns + mount ns, default sshd) through the command-provider harness:
 * the exact commands and stdin the component generates, run over SSH with @pulumi/command 1.2.1 semantics.
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { fileOn, ok, readSysctl as sysctl, snapshot, sysProgram as program, writeSysctl } from "../../testkit/host";
import { readRestoreStdin } from "../../provider/host/programs";

let lab: Lab;
let h0: LabHost;
let h1: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 3, tag: "nettuning" });
  [h0, h1] = lab.hosts;
}, 120000);
afterAll(async () => {
  await lab?.stop();
});


const K = {
  somaxconn: "net.core.somaxconn",
  fin: "net.ipv4.tcp_fin_timeout",
  rmem: "net.ipv4.tcp_rmem",
  range: "net.ipv4.ip_local_port_range",
  syn: "net.ipv4.tcp_max_syn_backlog",
};

describe("NetTuning on a lab host", () => {
  test("create → identical up → update (add, change, remove) → 5 updates → delete restores the first originals", async () => {
    const host = h0;
    const orig = {
      somaxconn: await sysctl(host, K.somaxconn),
      fin: await sysctl(host, K.fin),
      rmem: await sysctl(host, K.rmem),
      syn: await sysctl(host, K.syn),
    };
    const before = await snapshot(host);
    const stack = new Stack({ project: "it", stack: "lab" });
    const v1 = { sysctls: { [K.somaxconn]: 8192, [K.fin]: 25, [K.rmem]: [4096, 87380, 8388608] } };
    const r1 = ok(await stack.up(program(host, "web", v1)));
    expect(r1.sessions.total).toBe(2); // the engine delivery (one SFTP session) and one SSH session for the apply
    expect(r1.copies).toHaveLength(1);
    expect(await sysctl(host, K.somaxconn)).toBe("8192");
    expect(await sysctl(host, K.fin)).toBe("25");
    expect(await sysctl(host, K.rmem)).toBe("4096 87380 8388608");
    const file = await fileOn(host, "/etc/sysctl.d/90-net-tuning-web.conf");
    expect(file).toBe(r1.outputs!.fileContent);
    expect(`\n${(await stack.resources()).find((e) => e.name === "web-apply")!.inputs.stdin}`).toContain(`\n@content\n${file}`);
    expect(file).toMatch(/\nnet\.core\.somaxconn = 8192\nnet\.ipv4\.tcp_fin_timeout = 25\nnet\.ipv4\.tcp_rmem = 4096 87380 8388608\n$/);
    expect((await host.exec("stat -c %a /etc/sysctl.d/90-net-tuning-web.conf")).stdout.trim()).toBe("644");
    expect(r1.outputs!.applied).toEqual({ [K.somaxconn]: "8192", [K.fin]: "25", [K.rmem]: "4096 87380 8388608" });
    expect(r1.outputs!.previous).toEqual({ [K.somaxconn]: orig.somaxconn, [K.fin]: orig.fin, [K.rmem]: orig.rmem });
    expect(r1.outputs!.filePath).toBe("/etc/sysctl.d/90-net-tuning-web.conf");

    // Same args: zero remote work.
    const r2 = ok(await stack.up(program(host, "web", v1)));
    expect(r2.sessions.total).toBe(0);
    expect(r2.runs).toHaveLength(0);

    // Update: add syn backlog, change somaxconn, drop tcp_fin_timeout (restored to its original in the same run).
    const v2 = { sysctls: { [K.somaxconn]: 16384, [K.rmem]: [4096, 87380, 8388608], [K.syn]: 4096 } };
    const r3 = ok(await stack.up(program(host, "web", v2)));
    expect(r3.sessions.total).toBe(1);
    expect(await sysctl(host, K.somaxconn)).toBe("16384");
    expect(await sysctl(host, K.syn)).toBe("4096");
    expect(await sysctl(host, K.fin)).toBe(orig.fin);
    expect(r3.outputs!.previous).toEqual({ [K.somaxconn]: orig.somaxconn, [K.rmem]: orig.rmem, [K.syn]: orig.syn });
    expect(await fileOn(host, "/etc/sysctl.d/90-net-tuning-web.conf")).not.toContain("tcp_fin_timeout");

    // Five more updates: the first originals are kept.
    for (let i = 1; i <= 5; i++) {
      ok(await stack.up(program(host, "web", { sysctls: { ...v2.sysctls, [K.somaxconn]: 16384 + i * 100 } })));
      expect(await sysctl(host, K.somaxconn)).toBe(String(16384 + i * 100));
    }
    expect(readRestoreStdin(String(stack.get("web-restore")!.inputs.stdin))).toContain(`@orig ${K.somaxconn}\t${orig.somaxconn}\n`);

    const d = ok(await stack.destroy());
    expect(d.sessions.total).toBe(1);
    expect(await sysctl(host, K.somaxconn)).toBe(orig.somaxconn);
    expect(await sysctl(host, K.rmem)).toBe(orig.rmem);
    expect(await sysctl(host, K.syn)).toBe(orig.syn);
    expect(await fileOn(host, "/etc/sysctl.d/90-net-tuning-web.conf")).toBeUndefined();
    expect(await snapshot(host)).toBe(before);
  });

  test("delete restores from Pulumi state when the host's journal was deleted (default sshd refuses PULUMI_COMMAND_*)", async () => {
    const host = h0;
    const before = await snapshot(host);
    const stack = new Stack({ project: "it", stack: "journal" });
    ok(await stack.up(program(host, "lost", { sysctls: { [K.somaxconn]: 2222, [K.range]: [20000, 60000] } })));
    expect(await sysctl(host, K.range)).toBe("20000 60000");
    await host.exec("rm -rf /var/lib/pulumi-net-tuning");
    const d = ok(await stack.destroy());
    expect(d.runs[0].stdout).toContain("journal");
    expect(await snapshot(host)).toBe(before.replace(/\/var\/lib\/pulumi-net-tuning[^\n]*\n/g, ""));
  });

  test("as the sudo user with become: sudo; the plain user gets a clear sudo error and nothing changes", async () => {
    const host = h1;
    const before = await snapshot(host);
    const plain = new Stack({ project: "it", stack: "plain" });
    const bad = await plain.up(program(host, "s", { become: "sudo", sysctls: { [K.somaxconn]: 3333 } }, "plain"));
    expect(bad.ok).toBe(false);
    expect(bad.error).toMatch(/become "sudo" failed for user ntplain: .*passwordless sudo \(NOPASSWD\) or connect as root/s);
    const noBecome = await plain.up(program(host, "s", { sysctls: { [K.somaxconn]: 3333 } }, "plain"));
    expect(noBecome.error).toMatch(/net-tuning on \S+: must run as root, not ntplain: connect as root or set become: sudo/);
    expect(await snapshot(host)).toBe(before);

    const stack = new Stack({ project: "it", stack: "sudo" });
    ok(await stack.up(program(host, "s", { become: "sudo", sysctls: { [K.somaxconn]: 3333 } }, "sudo")));
    expect(await sysctl(host, K.somaxconn)).toBe("3333");
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  });

  test("a kernel refusal mid-run leaves the host byte-identical and names key, value and the kernel's answer", async () => {
    const host = h0;
    const before = await snapshot(host);
    const stack = new Stack({ project: "it", stack: "refuse" });
    // tcp_ecn_fallback is not in the catalogue (checked only on the host); the kernel accepts 0-1 only.
    // It sorts after somaxconn and tcp_fin_timeout... no: after somaxconn, before tcp_fin_timeout; both others change first/after.
    const r = await stack.up(
      program(host, "refuse", { sysctls: { [K.somaxconn]: 5555, "net.ipv4.tcp_ecn_fallback": 7, [K.syn]: 7777 } }),
    );
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/net\.ipv4\.tcp_ecn_fallback = '7' was refused on .*Invalid argument.*rolled back/s);
    expect(await snapshot(host)).toBe(before);
    expect(stack.resources().filter((e) => e.type === "command:remote:Command")).toHaveLength(0);
    // A failed create stores nothing: the next up (fixed) runs create again and succeeds.
    ok(await stack.up(program(host, "refuse", { sysctls: { [K.somaxconn]: 5555, "net.ipv4.tcp_ecn_fallback": 1, [K.syn]: 7777 } })));
    expect(await sysctl(host, K.syn)).toBe("7777");
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  });

  test("a failed update rolls back to the previous applied state, and the state keeps the old inputs", async () => {
    const host = h0;
    const stack = new Stack({ project: "it", stack: "failupd" });
    ok(await stack.up(program(host, "fu", { sysctls: { [K.somaxconn]: 6000 } })));
    const mid = await snapshot(host);
    const r = await stack.up(program(host, "fu", { sysctls: { [K.somaxconn]: 6100, "net.ipv4.tcp_ecn_fallback": 9 } }));
    expect(r.ok).toBe(false);
    expect(await snapshot(host)).toBe(mid);
    ok(await stack.destroy());
  });

  test("unknown key → one preflight error naming every missing key and the kernel; nothing changed", async () => {
    const host = h0;
    const before = await snapshot(host);
    const stack = new Stack({ project: "it", stack: "unknown" });
    const r = await stack.up(program(host, "unk", { sysctls: { "net.ipv4.tcp_nosuch_knob": 1, "net.core.also_missing": 2, [K.somaxconn]: 1000 } }));
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/these keys do not exist on this kernel \(\S+.*\): net\.core\.also_missing; net\.ipv4\.tcp_nosuch_knob/s);
    expect(r.error).toContain("nothing was changed");
    expect(await snapshot(host)).toBe(before);
  });

  test("a key naming a /proc/sys directory (net.ipv4.conf.all): refused as a directory, before any change (was: 'read-only here')", async () => {
    const host = h0;
    const before = await snapshot(host);
    const stack = new Stack({ project: "it", stack: "dirkey" });
    const r = await stack.up(program(host, "dk", { sysctls: { "net.ipv4.conf.all": 1, [K.somaxconn]: 1000 } }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain("net.ipv4.conf.all is a directory of settings (/proc/sys/net/ipv4/conf/all), not a setting: name a key inside it (net.ipv4.conf.all.<name>; ls /proc/sys/net/ipv4/conf/all lists them)");
    expect(r.error).not.toContain("read-only");
    expect(r.error).toContain("nothing was changed");
    expect(await snapshot(host)).toBe(before);
  });

  test("a fileName that would mask a vendor file of that name (/usr/lib/sysctl.d): refused naming it and its keys; accepted with a warning under bootOverride warn", async () => {
    const host = h0;
    const fin = "net.ipv4.tcp_fin_timeout";
    await host.exec(`mkdir -p /usr/lib/sysctl.d && printf '# vendor\\n%s = 33\\n-net.ipv4.tcp_syn_retries=5\\n' ${fin} > /usr/lib/sysctl.d/60-vendor.conf`);
    try {
      const before = await snapshot(host);
      const stack = new Stack({ project: "it", stack: "mask" });
      const r = await stack.up(program(host, "mk", { fileName: "60-vendor.conf", sysctls: { [K.somaxconn]: 7501 } }));
      expect(r.ok).toBe(false);
      expect(r.error).toContain(
        'fileName 60-vendor.conf: /etc/sysctl.d/60-vendor.conf would mask /usr/lib/sysctl.d/60-vendor.conf (systemd-sysctl and sysctl --system read only the first file of a name, /etc/sysctl.d first), so what it sets (net.ipv4.tcp_fin_timeout, net.ipv4.tcp_syn_retries) would no longer be applied at boot: choose another fileName, or set bootOverride to "warn" to accept it',
      );
      expect(r.error).toContain("nothing was changed");
      expect(await snapshot(host)).toBe(before);
      const w = ok(await stack.up(program(host, "mk", { fileName: "60-vendor.conf", sysctls: { [K.somaxconn]: 7501 }, bootOverride: "warn" })));
      expect(w.outputs!.warnings).toEqual(expect.arrayContaining([expect.stringContaining("would mask /usr/lib/sysctl.d/60-vendor.conf")]));
      ok(await stack.destroy());
      expect(await snapshot(host)).toBe(before);
    } finally {
      await host.exec("rm -f /usr/lib/sysctl.d/60-vendor.conf");
    }
  });

  test("host-wide keys inside a network namespace: a clear read-only/absent error before any change", async () => {
    const host = h0;
    const before = await snapshot(host);
    const stack = new Stack({ project: "it", stack: "hostwide" });
    const r = await stack.up(program(host, "hw", { sysctls: { "net.core.rmem_max": 268435456, "net.core.netdev_max_backlog": 250000 } }));
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/net\.core\.netdev_max_backlog \(host-wide: absent inside a network namespace or container\)/);
    expect(r.error).toMatch(/net\.core\.rmem_max is read-only/);
    expect(await snapshot(host)).toBe(before);
  });

  test("boot-order conflict: error naming file and line; bootOverride warn applies and warns", async () => {
    const host = h0;
    await host.exec("printf '# ops\\nnet.core.somaxconn = 1024\\n' > /etc/sysctl.d/99-zz.conf");
    try {
      const before = await snapshot(host);
      const stack = new Stack({ project: "it", stack: "boot" });
      const r = await stack.up(program(host, "boot", { sysctls: { [K.somaxconn]: 4444 } }));
      expect(r.ok).toBe(false);
      expect(r.error).toContain("net.core.somaxconn = 4444 is overridden at boot by /etc/sysctl.d/99-zz.conf:2 which sets 1024");
      expect(await snapshot(host)).toBe(before);
      const w = ok(await stack.up(program(host, "boot", { sysctls: { [K.somaxconn]: 4444 }, bootOverride: "warn" })));
      expect((w.outputs!.warnings as string[]).join("\n")).toContain("/etc/sysctl.d/99-zz.conf:2");
      ok(await stack.destroy());
      expect(await snapshot(host)).toBe(before);
    } finally {
      await host.exec("rm -f /etc/sysctl.d/99-zz.conf");
    }
  });

  test("never overwrites a file it does not own; two resources claiming one key → error naming the other owner", async () => {
    const host = h0;
    await host.exec("printf 'net.core.somaxconn = 999\\n' > /etc/sysctl.d/90-net-tuning-mine.conf");
    const before = await snapshot(host);
    const a = new Stack({ project: "it", stack: "a" });
    const r = await a.up(program(host, "mine", { sysctls: { [K.fin]: 33 } }));
    expect(r.error).toMatch(/90-net-tuning-mine\.conf exists and was not written by this resource/);
    expect(await snapshot(host)).toBe(before);
    await host.exec("rm -f /etc/sysctl.d/90-net-tuning-mine.conf");

    ok(await a.up(program(host, "first", { sysctls: { [K.fin]: 33 } })));
    const b = new Stack({ project: "it", stack: "b" });
    const mid = await snapshot(host);
    const rb = await b.up(program(host, "second", { sysctls: { [K.fin]: 44, [K.somaxconn]: 1234 } }));
    expect(rb.ok).toBe(false);
    expect(rb.error).toContain("net.ipv4.tcp_fin_timeout is already managed by it/a/first");
    expect(await snapshot(host)).toBe(mid);
    ok(await a.destroy());
  });

  test("persist false writes no file; restoreOnDelete false keeps the values and removes only the file", async () => {
    const host = h0;
    const before = await snapshot(host);
    const rt = new Stack({ project: "it", stack: "rt" });
    const r = ok(await rt.up(program(host, "rt", { persist: false, sysctls: { [K.somaxconn]: 7070 } })));
    expect(r.outputs!.filePath).toBeUndefined();
    expect(await fileOn(host, "/etc/sysctl.d/90-net-tuning-rt.conf")).toBeUndefined();
    expect(await sysctl(host, K.somaxconn)).toBe("7070");
    ok(await rt.destroy());
    expect(await snapshot(host)).toBe(before);

    const keep = new Stack({ project: "it", stack: "keep" });
    ok(await keep.up(program(host, "keep", { restoreOnDelete: false, sysctls: { [K.somaxconn]: 7171 } })));
    ok(await keep.destroy());
    expect(await sysctl(host, K.somaxconn)).toBe("7171");
    expect(await fileOn(host, "/etc/sysctl.d/90-net-tuning-keep.conf")).toBeUndefined();
    await writeSysctl(host, K.somaxconn, before.match(/\/proc\/sys\/net\/core\/somaxconn:(\d+)/)![1]);
    expect(await snapshot(host)).toBe(before);
  });

  test("moving a resource to another host tunes the new one and restores the old one (same-machine moves: tests/safety/moves.test.ts)", async () => {
    const [a, b] = [lab.hosts[1], lab.hosts[2]];
    const beforeA = await snapshot(a);
    const stack = new Stack({ project: "it", stack: "move" });
    ok(await stack.up(program(a, "mv", { sysctls: { [K.somaxconn]: 8080 } })));
    expect(await sysctl(a, K.somaxconn)).toBe("8080");
    const r = ok(await stack.up(program(b, "mv", { sysctls: { [K.somaxconn]: 8080 } })));
    expect(r.replaced.length).toBeGreaterThan(0);
    expect(await snapshot(a)).toBe(beforeA);
    expect(await sysctl(b, K.somaxconn)).toBe("8080");
    ok(await stack.destroy());
  });
});
