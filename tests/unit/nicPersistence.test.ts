/**
 * Boot persistence of the nic kind, run locally on temp files: the rc.local block (insert, replace, remove,
 * foreign content kept byte for byte), the boot script / systemd unit text, systemd's device-name escaping.
 */
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { runSh as runNicSh, SHELLS } from "../../testkit/localsh";
import { execShell, ShellName } from "../../testkit/shells";

const BEGIN = "# BEGIN pulumi-net-tuning proj/dev/nq eth0";
const END = "# END pulumi-net-tuning proj/dev/nq eth0";

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nic-persist-"));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const runSh = (script: string, shell = "/bin/sh") => runNicSh(script, { shell, tmp });

/** Runs nn_rclocal_edit IN OUT BLOCK and returns OUT's bytes (IN absent when `input` is undefined). */
function edit(input: Buffer | string | undefined, block: string[], shell: ShellName = "dash"): Buffer {
  const inPath = path.join(tmp, "rc.local");
  if (input !== undefined) fs.writeFileSync(inPath, input);
  fs.writeFileSync(path.join(tmp, "blockfile"), block.map((l) => l + "\n").join(""));
  runSh(`nn_rclocal_edit "$NT_TMP/rc.local" "$NT_TMP/out" "$NT_TMP/blockfile" '${BEGIN}' '${END}'`, shell);
  return fs.readFileSync(path.join(tmp, "out"));
}
const BLOCK = [BEGIN, "nt_nic_run ethtool -G 'eth0' rx 4096", END];
const BLOCK2 = [BEGIN, "nt_nic_run ethtool -G 'eth0' rx 2048", "nt_nic_run ip link set dev 'eth0' txqueuelen 10000", END];

describe.each(SHELLS)("rc.local block (%s)", (shell) => {
  test("absent file: created with #!/bin/sh -e, the block, exit 0", () => {
    expect(edit(undefined, BLOCK, shell).toString()).toBe(`#!/bin/sh -e\n${BLOCK.join("\n")}\nexit 0\n`);
  });
  test("inserted before the final exit 0, foreign content kept byte for byte", () => {
    const foreign = "#!/bin/sh -e\n#\n# rc.local\n\ttouch /var/lock/subsys/local  \r\nsomething 'with quotes' $HOME \\\n\nexit 0\n";
    const out = edit(foreign, BLOCK, shell).toString();
    const [before, after] = foreign.split("exit 0\n");
    expect(out).toBe(`${before}${BLOCK.join("\n")}\nexit 0\n${after}`);
  });
  test("trailing comments and blank lines after exit 0 stay after it", () => {
    const foreign = "#!/bin/sh\necho hi\nexit 0\n\n# end\n";
    expect(edit(foreign, BLOCK, shell).toString()).toBe(`#!/bin/sh\necho hi\n${BLOCK.join("\n")}\nexit 0\n\n# end\n`);
  });
  test("no exit 0 (RHEL's rc.local): appended at the end", () => {
    const foreign = "#!/bin/bash\ntouch /var/lock/subsys/local\n";
    expect(edit(foreign, BLOCK, shell).toString()).toBe(`${foreign}${BLOCK.join("\n")}\n`);
  });
  test("replaced in place, idempotently; removal restores the original bytes exactly", () => {
    const foreign = "#!/bin/sh -e\nfirst\nexit 0\n";
    const once = edit(foreign, BLOCK, shell);
    const again = edit(once, BLOCK, shell);
    expect(again.equals(once)).toBe(true);
    const replaced = edit(once, BLOCK2, shell).toString();
    expect(replaced).toBe(`#!/bin/sh -e\nfirst\n${BLOCK2.join("\n")}\nexit 0\n`);
    expect(edit(replaced, [], shell).toString()).toBe(foreign);
  });
  test("a file without a final newline keeps it missing (insert before exit 0, then removal)", () => {
    const foreign = "#!/bin/sh -e\nfoo\nexit 0";
    const out = edit(foreign, BLOCK, shell).toString();
    expect(out).toBe(`#!/bin/sh -e\nfoo\n${BLOCK.join("\n")}\nexit 0`);
    expect(edit(out, [], shell).toString()).toBe(foreign);
  });
  test("non-UTF-8 bytes outside the block are kept", () => {
    const foreign = Buffer.concat([Buffer.from("#!/bin/sh -e\n# caf"), Buffer.from([0xe9, 0xff]), Buffer.from("\nexit 0\n")]);
    const out = edit(foreign, BLOCK, shell);
    const removed = edit(out, [], shell);
    expect(removed.equals(foreign)).toBe(true);
  });
  test("another resource's block for another interface is not touched", () => {
    const other = "# BEGIN pulumi-net-tuning proj/dev/other eth1\nnt_nic_run ethtool -G 'eth1' rx 512\n# END pulumi-net-tuning proj/dev/other eth1\n";
    const foreign = `#!/bin/sh -e\n${other}exit 0\n`;
    const out = edit(foreign, BLOCK, shell).toString();
    expect(out).toBe(`#!/bin/sh -e\n${other}${BLOCK.join("\n")}\nexit 0\n`);
    expect(edit(out, [], shell).toString()).toBe(foreign);
  });
  test("a BEGIN line without its END is refused (exit 3), nothing guessed", () => {
    fs.writeFileSync(path.join(tmp, "rc.local"), `#!/bin/sh\n${BEGIN}\nfoo\n`);
    fs.writeFileSync(path.join(tmp, "blockfile"), "");
    expect(() => runSh(`nn_rclocal_edit "$NT_TMP/rc.local" "$NT_TMP/out" "$NT_TMP/blockfile" '${BEGIN}' '${END}'`, shell)).toThrow();
  });
});

describe("boot script, rc.local block and systemd unit text", () => {
  const desired = [
    ["eth0/channel.combined", "4"],
    ["eth0/ring.rx", "4096"],
    ["eth0/feature.generic-receive-offload", "on"],
    ["eth0/feature.large-receive-offload", "off"],
    ["eth0/feature.rx-gro-list", "off"],
    ["eth0/coalesce.adaptive-rx", "off"],
    ["eth0/coalesce.rx-usecs", "10"],
    ["eth0/txqueuelen", "10000"],
    ["net.core.rps_sock_flow_entries", "32768"],
    ["eth0/rps.rx-0", "3"],
    ["eth0/rps.rx-1", "-"],
    ["eth0/rfs.rx-0", "4096"],
    ["eth0/irq.45", "2"],
  ];
  const setup = (iface = "eth0") =>
    `printf '%s' '${desired.map(([k, v]) => `${k.replace(/^eth0/, iface)}\t${v}\n`).join("")}' > "$NT_TMP/desired"; NT_OWNER='proj/dev/nq'; NN_IF='${iface}'; nn_paths; `;

  test("the systemd boot script (snapshot)", () => {
    expect(runSh(`${setup()} nn_render_script`)).toMatchSnapshot();
  });
  test("the systemd unit (snapshot): oneshot, RemainAfterExit, bound to the device", () => {
    const unit = runSh(`${setup()} nn_render_unit`);
    expect(unit).toMatchSnapshot();
    expect(unit).toContain("After=sys-subsystem-net-devices-eth0.device network-pre.target\n");
    expect(unit).toContain("BindsTo=sys-subsystem-net-devices-eth0.device\n");
    expect(unit).toContain("Type=oneshot\nRemainAfterExit=yes\nExecStart=/usr/local/libexec/net-tuning/nic-eth0.sh\n");
    expect(unit).toContain("WantedBy=multi-user.target sys-subsystem-net-devices-eth0.device\n"); // boot, and again when eth0 reappears (hotplug)
  });
  test("the rc.local block (snapshot)", () => {
    expect(runSh(`${setup()} nn_render_block`)).toMatchSnapshot();
  });
  test("paths and device unit names for interface names with - @ +", () => {
    const out = runSh(`${setup("br-lan@x")} printf '%s\\n' "$NN_UNIT" "$NN_SCRIPT" "$NN_WANTS"; nn_systemd_escape br-lan@x; nn_systemd_escape eth0.100`);
    expect(out.split("\n")).toEqual([
      "/etc/systemd/system/net-tuning-nic-br-lan_x.service",
      "/usr/local/libexec/net-tuning/nic-br-lan@x.sh",
      "/etc/systemd/system/multi-user.target.wants/net-tuning-nic-br-lan_x.service",
      "br\\x2dlan\\x40x",
      "eth0.100",
      "",
    ]);
  });
  test.each(SHELLS)("the boot script is valid POSIX sh (shellcheck) and runs: failures are reported, exit 80 is success (%s)", (shell) => {
    const script = path.join(tmp, "boot.sh");
    fs.writeFileSync(script, runSh(`${setup()} nn_render_script`));
    // shellcheck must be installed (scripts/deps.sh installs it): a missing tool fails the test, it does not pass it.
    const sc = spawnSync("shellcheck", ["-s", "sh", script], { encoding: "utf8" });
    expect(sc.error).toBeUndefined();
    expect({ status: sc.status, output: sc.stdout + sc.stderr }).toEqual({ status: 0, output: "" });
    // Run it with fake tools: ethtool exits 80 ("unchanged", old ethtool), ip fails.
    const bin = path.join(tmp, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "ethtool"), "#!/bin/sh\necho \"ethtool $*\" >> \"$LOG\"\nexit 80\n", { mode: 0o755 });
    fs.writeFileSync(path.join(bin, "ip"), "#!/bin/sh\necho \"ip $*\" >> \"$LOG\"\necho 'Error: argument is wrong' >&2\nexit 2\n", { mode: 0o755 });
    const text = fs.readFileSync(script, "utf8").replace("PATH=/usr/sbin:/usr/bin:/sbin:/bin", `PATH=${bin}:/usr/bin:/bin`);
    fs.writeFileSync(script, text);
    const log = path.join(tmp, "log");
    let code = 0;
    let stderr = "";
    try {
      execShell(shell, [script], { env: { LOG: log }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      code = (e as { status: number }).status;
      stderr = (e as { stderr: string }).stderr;
    }
    expect(code).toBe(1);
    expect(stderr).toContain("pulumi-net-tuning: ip link set dev eth0 txqueuelen 10000 failed (exit 2): Error: argument is wrong");
    expect(stderr).not.toContain("ethtool -G");
    expect(fs.readFileSync(log, "utf8")).toContain("ethtool -K eth0 gro on\n");
  });
});

describe("removing the rc.local block on delete", () => {
  const stage = (content: string, mode: string) => {
    fs.writeFileSync(path.join(tmp, "rc.local"), content);
    runSh(`NT_OWNER='proj/dev/nq'; NN_IF=eth0; nn_paths; NN_RCLOCAL="$NT_TMP/rc.local"; chmod ${mode} "$NN_RCLOCAL"; : > "$NT_TMP/files"; nn_rclocal_unblock`);
    return fs.readFileSync(path.join(tmp, "files"), "utf8").split("\t");
  };
  test("a file this resource created (only the frame is left) is removed", () => {
    const [op, dest] = stage(`#!/bin/sh -e\n${BEGIN}\n# rc.local before this block: absent\nx\n${END}\nexit 0\n`, "755");
    expect([op, dest]).toEqual(["rm", path.join(tmp, "rc.local")]);
  });
  test("a file that existed gets its content without the block and its old mode back", () => {
    const [op, , src, mode] = stage(`#!/bin/sh -e\nmine\n${BEGIN}\n# rc.local before this block: mode 644\nx\n${END}\nexit 0\n`, "755");
    expect(op).toBe("put");
    expect(mode.trim()).toBe("644");
    expect(fs.readFileSync(src, "utf8")).toBe("#!/bin/sh -e\nmine\nexit 0\n");
  });
  test("content back to what it was → the original modification time is restored after the commit", () => {
    const orig = "#!/bin/sh -e\nmine\nexit 0\n";
    fs.writeFileSync(path.join(tmp, "orig"), orig);
    const sum = execFileSync("/bin/sh", ["-c", 'cksum < "$1"', "x", path.join(tmp, "orig")], { encoding: "utf8" }).trim();
    const prior = `mode 600, cksum ${sum}, modified 2020-01-02 03:04:05.123456789 +0000`;
    fs.writeFileSync(path.join(tmp, "rc.local"), `#!/bin/sh -e\nmine\n${BEGIN}\n# rc.local before this block: ${prior}\nx\n${END}\nexit 0\n`);
    const out = runSh(
      `NT_OWNER='proj/dev/nq'; NN_IF=eth0; nn_paths; NN_RCLOCAL="$NT_TMP/rc.local"; : > "$NT_TMP/files"; nn_rclocal_unblock; ` +
        `cut -f4 "$NT_TMP/files"; cp "$(cut -f3 "$NT_TMP/files")" "$NN_RCLOCAL"; nn_touch_rclocal; stat -c %y "$NN_RCLOCAL"`,
    );
    expect(out.trim().split("\n")).toEqual(["600", "2020-01-02 03:04:05.123456789 +0000"]);
  });
  test("a created file that now holds other content too is kept", () => {
    const [op, , , mode] = stage(`#!/bin/sh -e\nadded later\n${BEGIN}\n# rc.local before this block: absent\n${END}\nexit 0\n`, "755");
    expect(op).toBe("put");
    expect(mode.trim()).toBe("755");
  });
});
