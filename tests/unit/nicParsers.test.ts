/**
 * The nic kind's host-side parsers and CPU mask arithmetic, run locally with dash and bash against ethtool text
 * output of 4.8 (CentOS 7, ioctl), 5.x (netlink, "n/a") and 6.x (6.1 captured from veth/lo on this machine).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { runSh, SHELLS } from "../../testkit/localsh";

const FIX = path.join(__dirname, "fixtures/ethtool");

const fixture = (name: string) => fs.readFileSync(path.join(FIX, name), "utf8");
const table = (out: string) => Object.fromEntries(out.trim().split("\n").map((l) => [l.split("\t")[0], l.split("\t").slice(1).join("\t")]));

describe.each(SHELLS)("ethtool text parsers (%s)", (shell) => {
  const parse = (fn: string, file: string) => table(runSh(fn, { input: fixture(file), shell }));

  test("-g of ethtool 4.8 (ixgbe): maximums and current, zeros for absent mini/jumbo rings", () => {
    expect(parse("nn_parse_sections", "4.8/g-ixgbe.txt")).toEqual({
      "max.rx": "4096", "max.rx-mini": "0", "max.rx-jumbo": "0", "max.tx": "4096",
      "cur.rx": "512", "cur.rx-mini": "0", "cur.rx-jumbo": "0", "cur.tx": "512",
    });
  });
  test("-g of ethtool 5.x (i40e): n/a for unsupported rings", () => {
    const t = parse("nn_parse_sections", "5.x/g-i40e.txt");
    expect(t["max.rx"]).toBe("4096");
    expect(t["cur.tx"]).toBe("1024");
    expect(t["max.rx-mini"]).toBe("n/a");
  });
  test("-g of ethtool 6.x (mlx5): extra lines (RX Buf Len, CQE Size, TX Push) do not disturb", () => {
    const t = parse("nn_parse_sections", "6.x/g-mlx5.txt");
    expect(t).toMatchObject({ "max.rx": "8192", "max.tx": "8192", "cur.rx": "1024", "cur.tx": "1024", "cur.tx-push": "off", "cur.rx-buf-len": "n/a" });
  });
  test("-l of ethtool 4.8 (ixgbe), 5.x (i40e) and 6.1 (veth, captured)", () => {
    expect(parse("nn_parse_sections", "4.8/l-ixgbe.txt")).toEqual({
      "max.rx": "0", "max.tx": "0", "max.other": "1", "max.combined": "63",
      "cur.rx": "0", "cur.tx": "0", "cur.other": "1", "cur.combined": "8",
    });
    expect(parse("nn_parse_sections", "5.x/l-i40e.txt")).toMatchObject({ "max.combined": "24", "cur.rx": "n/a" });
    expect(parse("nn_parse_sections", "6.x/l-veth.txt")).toEqual({
      "max.rx": "4", "max.tx": "4", "max.other": "n/a", "max.combined": "n/a",
      "cur.rx": "4", "cur.tx": "4", "cur.other": "n/a", "cur.combined": "n/a",
    });
  });
  test("-k: values, [fixed], indented sub-features, 4.8 and 6.1 (veth, lo)", () => {
    const k48 = parse("nn_parse_features", "4.8/k-ixgbe.txt");
    expect(k48["generic-receive-offload"]).toBe("on\t0");
    expect(k48["udp-fragmentation-offload"]).toBe("off\t1");
    expect(k48["tx-checksum-ipv4"]).toBe("off\t1");
    expect(k48["highdma"]).toBe("on\t1");
    const veth = parse("nn_parse_features", "6.x/k-veth.txt");
    expect(veth["large-receive-offload"]).toBe("off\t1");
    expect(veth["generic-receive-offload"]).toBe("off\t0");
    expect(veth["tcp-segmentation-offload"]).toBe("on\t0");
    expect(veth["tx-tcp-segmentation"]).toBe("on\t0");
    expect(veth["Features for eth0"]).toBeUndefined();
    const lo = parse("nn_parse_features", "6.x/k-lo.txt");
    expect(lo["rx-checksumming"]).toBe("on\t1");
    const e1000e = parse("nn_parse_features", "5.x/k-e1000e.txt");
    expect(e1000e["rx-gro-list"]).toBe("off\t0");
  });
  test("-c: Adaptive RX/TX line, rx-frame-low shown for rx-frames-low, n/a in 5.x/6.x, CQE mode", () => {
    const c48 = parse("nn_parse_coalesce", "4.8/c-ixgbe.txt");
    expect(c48).toMatchObject({ "adaptive-rx": "off", "adaptive-tx": "off", "rx-usecs": "1", "tx-frames-irq": "256", "rx-frames-low": "0", "tx-frames-high": "0" });
    expect(c48["rx-frame-low"]).toBeUndefined();
    const e = parse("nn_parse_coalesce", "5.x/c-e1000e.txt");
    expect(e).toMatchObject({ "adaptive-rx": "n/a", "rx-usecs": "3", "tx-usecs": "n/a" });
    const m = parse("nn_parse_coalesce", "6.x/c-mlx5.txt");
    expect(m).toMatchObject({ "adaptive-rx": "on", "adaptive-tx": "on", "rx-usecs": "8", "rx-frames": "128", "cqe-mode-rx": "on", "cqe-mode-tx": "off" });
  });
  test("-K arguments: legacy short names where they exist, kernel names otherwise", () => {
    const out = runSh(
      'for f in generic-receive-offload large-receive-offload tcp-segmentation-offload rx-checksumming receive-hashing rx-gro-list; do nn_feature_arg "$f"; printf "%s\\n" "$NN_ARG"; done',
      { shell },
    );
    expect(out.trim().split("\n")).toEqual(["gro", "lro", "tso", "rx", "rxhash", "rx-gro-list"]);
  });
});

describe.each(SHELLS)("CPU masks (%s)", (shell) => {
  const mask = (list: string) => runSh(`nn_mask_from_list "${list}"`, { shell }).trim();
  const cases: [number, string][] = [
    [1, "1"],
    [2, "3"],
    [31, "7fffffff"],
    [32, "ffffffff"],
    [33, "1,ffffffff"],
    [64, "ffffffff,ffffffff"],
    [65, "1,ffffffff,ffffffff"],
    [128, "ffffffff,ffffffff,ffffffff,ffffffff"],
  ];
  test.each(cases)('"all" on a host with %i possible CPUs', (n, expected) => {
    expect(mask(n === 1 ? "0" : `0-${n - 1}`)).toBe(expected);
  });
  test("explicit lists: single CPUs, ranges, duplicates, high CPUs keep zero words between", () => {
    expect(mask("0")).toBe("1");
    expect(mask("1")).toBe("2");
    expect(mask("5")).toBe("20");
    expect(mask("0,2,2,3")).toBe("d");
    expect(mask("31")).toBe("80000000");
    expect(mask("32")).toBe("1,00000000");
    expect(mask("64")).toBe("1,00000000,00000000");
    expect(mask("0,127")).toBe("80000000,00000000,00000000,00000001");
    expect(mask("4-7,36")).toBe("10,000000f0");
  });
  test("the kernel's zero-padded read-back normalises to the same canonical form", () => {
    const norm = (m: string) => runSh(`nn_mask_norm "${m}"; echo "$NN_NORM"`, { shell }).trim();
    expect(norm("3")).toBe("3");
    expect(norm("00000000,00000003")).toBe("3");
    expect(norm("00000001,ffffffff")).toBe("1,ffffffff");
    expect(norm("0")).toBe("0");
    expect(norm("00000000,00000000")).toBe("0");
    expect(norm("FFFFFFFF,FFFFFFFF")).toBe("ffffffff,ffffffff");
    expect(norm("1ffffffff")).toBe("1,ffffffff");
    expect(norm("0x3")).toBe("3"); // not a plain mask: awk's normalisation, as before
  });
  test("CPUs outside the host's possible CPUs are found (preflight error), kernel list syntax", () => {
    expect(runSh('nn_cpus_outside "0,3-4,1" "0-1"', { shell }).trim()).toBe("3 4");
    expect(runSh('nn_cpus_outside "0,1" "0-1"', { shell }).trim()).toBe("");
    expect(runSh('nn_cpus_outside "8" "0-3,8-11"', { shell }).trim()).toBe("");
  });
  test("power-of-two rounding of rps_flow_cnt / rps_sock_flow_entries read-back", () => {
    expect(runSh('for n in 0 1 100 4096 4097 32768; do nt_pow2 "$n"; echo "$NT_POW2"; done', { shell }).trim().split("\n")).toEqual(["0", "1", "128", "4096", "8192", "32768"]);
    // outside the shell-arithmetic range (and a leading 0): awk, as before
    expect(runSh('for n in 536870913 1000000000 0100; do nt_pow2 "$n"; echo "$NT_POW2"; done', { shell }).trim().split("\n")).toEqual(["1073741824", "1073741824", "128"]);
  });
  test("kind_expect: masks, pow2 counts, and '-' (queue absent) for rps/rfs", () => {
    const out = runSh(
      'NN_SYS=/nonexistent; kind_expect eth0/rps.rx-0 00000000,00000003; echo "$NT_EXPECT"; kind_expect eth0/rfs.rx-1 100; echo "$NT_EXPECT"; ' +
        'kind_expect net.core.rps_sock_flow_entries 30000; echo "$NT_EXPECT"; kind_expect eth0/rps.rx-9 -; echo "$NT_EXPECT"; kind_expect eth0/ring.rx 4096; echo "$NT_EXPECT"',
      { shell },
    );
    expect(out.trim().split("\n")).toEqual(["3", "128", "32768", "-", "4096"]);
  });
});

describe("interface names on the host", () => {
  test.each([
    ["eth0", true], ["enp3s0f1np1", true], ["br-lan", true], ["eth0.100", true], ["veth1@if2", true], ["", false],
    [".", false], ["..", false], ["a/b", false], ["a b", false], ["a:b", false], ["abcdefghijklmnop", false], ["abcdefghijklmno", true],
  ])("%j valid = %s", (name, ok) => {
    const out = runSh(`nn_valid_if '${name}' && echo yes || echo no`);
    expect(out.trim()).toBe(ok ? "yes" : "no");
  });
});

describe("kind_get / kind_set with a fake ethtool (4.8 text, exit 80, -K partial success)", () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nic-fake-"));
    fs.mkdirSync(path.join(tmp, "bin"));
    // Prints the fixtures for -g/-k/-c; "-G … rx 512" exits 80 (old ethtool: unchanged); "-K … lro on" is a
    // partial success (exit 0, "Actual changes"); -C fails like a driver that refuses the value.
    fs.writeFileSync(
      path.join(tmp, "bin/ethtool"),
      [
        "#!/bin/sh",
        'case "$1" in',
        `  -g) cat '${FIX}/4.8/g-ixgbe.txt' ;;`,
        `  -k) cat '${FIX}/4.8/k-ixgbe.txt' ;;`,
        `  -c) cat '${FIX}/4.8/c-ixgbe.txt' ;;`,
        `  -l) cat '${FIX}/4.8/l-ixgbe.txt' ;;`,
        '  -G) echo "rx unmodified, ignoring" >&2; echo "no ring parameters changed, aborting" >&2; exit 80 ;;',
        '  -K) printf "Actual changes:\\nlarge-receive-offload: off [requested on]\\n"; exit 0 ;;',
        '  -C) echo "Cannot set device coalesce parameters: Invalid argument" >&2; exit 1 ;;',
        '  -L) echo "combined unmodified, ignoring" >&2; echo "no channel parameters changed, aborting" >&2; echo "current values: tx 0 rx 0 other 1 combined 8" >&2; exit 1 ;;',
        "esac",
      ].join("\n") + "\n",
      { mode: 0o755 },
    );
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const run = (script: string, shell: string) =>
    runSh(`PATH="$NT_TMP/bin:$PATH"; NN_IF=eth0; ${script}`, { shell, tmp });

  test.each(SHELLS)("reads rings, features, coalescing and channels from ethtool 4.8 text (%s)", (shell) => {
    const out = run(
      "for k in eth0/ring.rx eth0/ring.tx eth0/feature.generic-receive-offload eth0/feature.large-receive-offload eth0/coalesce.rx-usecs eth0/coalesce.adaptive-rx eth0/coalesce.rx-frames-low eth0/channel.combined; do kind_get \"$k\" && echo \"$k=$NT_GOT\"; done",
      shell,
    );
    expect(out.trim().split("\n")).toEqual([
      "eth0/ring.rx=512",
      "eth0/ring.tx=512",
      "eth0/feature.generic-receive-offload=on",
      "eth0/feature.large-receive-offload=off",
      "eth0/coalesce.rx-usecs=1",
      "eth0/coalesce.adaptive-rx=off",
      "eth0/coalesce.rx-frames-low=0",
      "eth0/channel.combined=8",
    ]);
  });
  test.each(SHELLS)("old ethtool's \"unchanged\" (-G exit 80, -L exit 1 \"no channel parameters changed\") is success; a refusal carries ethtool's answer (%s)", (shell) => {
    expect(run("kind_set eth0/ring.rx 512 && echo ok", shell).trim()).toBe("ok");
    // ethtool 4.x -L with unchanged values: exit 1 and "no channel parameters changed, aborting".
    expect(run("kind_set eth0/channel.combined 8 && echo ok", shell).trim()).toBe("ok");
    expect(run('kind_set eth0/coalesce.rx-usecs 8 || echo "$NT_ERR"', shell).trim()).toBe(
      "ethtool -C eth0 rx-usecs 8 exited 1: Cannot set device coalesce parameters: Invalid argument",
    );
  });
  test.each(SHELLS)("-K partial success (exit 0, 'Actual changes … [requested on]') is detected by reading back (%s)", (shell) => {
    expect(run('kind_set eth0/feature.large-receive-offload on || echo "$NT_ERR"', shell).trim()).toBe(
      "ethtool -K eth0 lro on left it off: Actual changes: large-receive-offload: off [requested on]",
    );
  });
  // The kernel's e1000_set_coalesce / igb_set_coalesce (drivers/net/ethernet/intel): values they return -EINVAL for.
  const DRIVER_RX_USECS = {
    e1000e: { refused: [2, 5, 6, 7, 8, 9, 10001, 65535], accepted: [0, 1, 3, 4, 10, 100, 10000], accepts: "0, 1, 3, 4 (0 off, 1, 3 and 4 dynamic modes) or 10-10000 microseconds" },
    igb: { refused: [2, 4, 5, 6, 7, 8, 9, 10001], accepted: [0, 1, 3, 10, 100, 10000], accepts: "0, 1, 3 (0 off, 1 and 3 dynamic modes) or 10-10000 microseconds" },
  } as const;
  test.each(SHELLS)("preflight: the e1000e and igb rx-usecs/tx-usecs rules refuse exactly the driver's -EINVAL values before anything changes (%s)", (shell) => {
    for (const [driver, rule] of Object.entries(DRIVER_RX_USECS)) {
      const values = [...rule.refused, ...rule.accepted];
      const req = values.map((v) => `coalesce.rx-usecs\\t${v}\\n`).join("") + "coalesce.tx-usecs\\t8\\n";
      const out = run(
        `: > "$NT_TMP/problems"; NN_DRIVER=${driver}; printf "${req}" > "$NT_TMP/requested"; ` +
          ': > "$NT_TMP/want.coalesce"; nn_check_coalesce; cat "$NT_TMP/problems"; echo "--"; cat "$NT_TMP/want.coalesce"',
        shell,
      );
      const [problems, wanted] = out.split("--\n");
      // one problem per refused value (tx-usecs 8 is refused too), naming driver, value and the accepted values
      expect(problems.trimEnd().split("\n")).toEqual([
        ...rule.refused.map((v) => `  - coalesce.rxUsecs ${v} is refused by the ${driver} driver of eth0: it accepts ${rule.accepts}; use 10 or more`),
        `  - coalesce.txUsecs 8 is refused by the ${driver} driver of eth0: it accepts ${rule.accepts}; use 10 or more`,
      ]);
      expect(wanted.trim().split("\n")).toEqual(rule.accepted.map((v) => `eth0/coalesce.rx-usecs\t${v}`));
    }
    // other drivers: no built-in rule (the driver's own answer is reported when it refuses)
    const other = run(': > "$NT_TMP/problems"; NN_DRIVER=ixgbe; printf "coalesce.rx-usecs\\t8\\n" > "$NT_TMP/requested"; : > "$NT_TMP/want.coalesce"; nn_check_coalesce; cat "$NT_TMP/problems" "$NT_TMP/want.coalesce"', shell);
    expect(other).toBe("eth0/coalesce.rx-usecs\t8\n");
  });
  test.each(SHELLS)("plan lines: coalesce.adaptive-rx/-tx take on|off and are not taken for feature names (%s)", (shell) => {
    expect(run('kind_directive set "coalesce.adaptive-rx off" && kind_directive set "coalesce.adaptive-tx on" && kind_directive set "feature.rx-gro-hw on" && cat "$NT_TMP/requested"', shell)).toBe(
      "coalesce.adaptive-rx\toff\ncoalesce.adaptive-tx\ton\nfeature.rx-gro-hw\ton\n",
    );
    expect(() => run('kind_directive set "coalesce.adaptive-rx maybe"', shell)).toThrow(/invalid value 'maybe' for coalesce.adaptive-rx/);
    expect(() => run('kind_directive set "feature.a.b on"', shell)).toThrow(/invalid feature name 'feature.a.b'/);
  });
  test.each(SHELLS)("values from Pulumi state are checked before use: other interfaces, unsafe words (%s)", (shell) => {
    expect(run('kind_set eth1/ring.rx 512 || echo "$NT_ERR"', shell).trim()).toBe("eth1/ring.rx is not a setting of eth0");
    expect(run("kind_set eth0/ring.rx '1;reboot' || echo \"$NT_ERR\"", shell).trim()).toBe("invalid value '1;reboot'");
  });
});

describe("the NIC's IRQs", () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nic-irq-"));
    fs.mkdirSync(path.join(tmp, "sys/eth0/device"), { recursive: true });
    fs.mkdirSync(path.join(tmp, "sys/veth0"), { recursive: true });
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const irqs = (iface: string) =>
    runSh(`NN_SYS="$NT_TMP/sys"; NN_INTERRUPTS='${FIX}/proc/interrupts'; NN_IF=${iface}; nn_irqs`, { tmp }).trim().split("\n").filter(Boolean);

  test("from /proc/interrupts: exact name or name- prefix (eth0-TxRx-N), not eth00 or eth1", () => {
    expect(irqs("eth0")).toEqual(["45", "46", "47", "48", "49"]);
  });
  test("from device/msi_irqs when the driver uses MSI-X", () => {
    fs.mkdirSync(path.join(tmp, "sys/eth0/device/msi_irqs"));
    for (const n of ["130", "128", "129"]) fs.writeFileSync(path.join(tmp, "sys/eth0/device/msi_irqs", n), "msix\n");
    expect(irqs("eth0")).toEqual(["128", "129", "130"]);
  });
  test("a virtual interface (no device link) has none: preflight refuses irqAffinity", () => {
    expect(irqs("veth0")).toEqual([]);
  });
});
