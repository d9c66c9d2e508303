/**
 * The confirmed apply of a NicQueues on a real driver (issue #34, "Tests → Confirm", the VM half), under the real
 * `pulumi` CLI (testkit/cli) against a bookworm guest with systemd: the revert is the transient systemd timer, which the
 * lab (no systemd) cannot run. The NicQueues changes the e1000e's rings (`eth0`), which arms the confirm by default; the
 * network is cut with QEMU's `set_link` on the NIC that carries SSH (virtio-net, `eth1`) between the apply and its
 * confirm and plugged back in after the deadline. Nothing on the guest is faked. As in tests/cli/confirm.test.ts, the
 * only hook holds the stand-in command provider before it dials the confirm (NT_STANDIN_HOLD), so that the link goes
 * down between the two sessions; the rest is what a lost link does: the confirm's dial is accepted by QEMU's user-mode
 * network and waits for a banner, which comes once the link is back, after the host reverted.
 *  - a first apply is confirmed (rings 1024, the systemd unit); then an update to 2048 loses its confirm: the guest's
 *    timer puts 1024 back within timeoutSeconds + 5 s (the revert record's time, guest clock, against the deadline the
 *    apply reported); the unit, its script and rc.local are byte for byte the confirmed apply's (2048 never written);
 *    the journal of originals is back as it was, no pending directory or timer is left, the record of the revert stays;
 *  - the late confirm is refused by the host (exit 7, "its confirm came too late"), the next preview reports the revert
 *    and the hold, the next `up` holds (no apply step, exit 7 again); a changed plan applies and is confirmed; destroy
 *    puts the original rings back and removes the unit.
 */
import { CliProject, providerLabel, toolchain } from "../../testkit/cli";
import type { VmHost } from "../../testkit/vm";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { utc } from "../../provider/confirm";
import { declare, Declared, PROGRAM } from "../cli/fixtures";
import { sh as shOn, useGuest } from "./lifecycle";

let vm: VmHost;
useGuest("confirm.vm.test.ts", { suite: "bookworm" }, (g) => (vm = g));
const sh = (cmd: string) => shOn(vm, cmd);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

const STATE = "/var/lib/pulumi-net-tuning/nic";
/** The timeout: above the connection's dial budget (DIAL: 2 × 5 s), short enough to keep the test short. */
const TIMEOUT = 20;
const DIAL = { dialErrorLimit: 2, perDialTimeout: 5 };

/** Current RX and TX ring sizes of the e1000e, "RX TX". */
const rings = () => sh(`ethtool -g ${vm.iface.e1000e} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { r = $2 } $1 == "TX:" { t = $2 } END { print r, t }'`);
/** Every file NicQueues' persistence could write for the e1000e (the unit and its links, its script, rc.local), with its cksum, then "-". */
const persistence = () =>
  sh(
    `i=${vm.iface.e1000e}; for f in $(find /etc/systemd/system -name "net-tuning-nic-$i.service" | sort) /usr/local/libexec/net-tuning/nic-$i.sh /etc/rc.local; do ` +
      `[ -e "$f" ] && { [ "$f" != /etc/rc.local ] || grep -q pulumi-net-tuning "$f"; } && echo "$f $(cksum < "$f")"; done; echo -`,
  );
/** The engine's state of the NicQueues (journal, owner file, converged record) with cksums, but not the revert's record or pending directory. */
const engineState = () =>
  sh(`find ${STATE} /var/lib/pulumi-net-tuning-converged -type f ! -name '*.reverted' ! -path '*.pending/*' 2>/dev/null | sort | while read -r f; do echo "$f $(cksum < "$f")"; done`);

describe(`confirmed NicQueues apply on the e1000e, the SSH link cut with QEMU set_link, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject | undefined;
  const q = (ring: number): Record<string, Declared> => ({
    q: { kind: "nic", args: { interface: vm.iface.e1000e, rings: { rx: ring, tx: ring }, persistence: "systemd", confirm: { timeoutSeconds: TIMEOUT } } },
  });

  beforeAll(async () => {
    toolchain();
    const c = vm.connection("root");
    p = new CliProject({
      name: "ntvmconfirm",
      program: PROGRAM,
      config: { host: c.host, port: String(c.port), user: c.user, resources: "{}", dial: JSON.stringify(DIAL) },
      secrets: { privateKey: c.privateKey },
    });
    await p.init();
  }, 300_000);

  test("a confirmed apply, then an update whose confirm is cut off: the timer reverts within timeout + 5 s, nothing persisted; the late confirm, the next preview and up report the hold (exit 7); a changed plan applies", async () => {
    const i = vm.iface.e1000e;
    const orig = await rings();
    expect(orig).toMatch(/^\d+ \d+$/);
    expect(orig).not.toMatch(/^(1024|2048|512) /);
    expect(await persistence()).toBe("-");

    // the confirmed apply: rings 1024, the unit written by its confirm
    await declare(p!, q(1024));
    const first = await p!.up({ skipPreview: true });
    if (first.code !== 0) console.log(first.stdout + first.stderr);
    expect(first.code).toBe(0);
    expect(await rings()).toBe("1024 1024");
    const persisted = await persistence();
    expect(persisted).toContain(`/etc/systemd/system/net-tuning-nic-${i}.service `); // (what the checks below look at)
    expect(persisted).toContain(`/etc/systemd/system/multi-user.target.wants/net-tuning-nic-${i}.service `);
    const state = await engineState();
    expect(state).toMatch(/\.orig /);
    console.log(`after the confirmed apply: persistence\n${persisted}\nthe engine's state\n${state}`);
    const guestStart = await sh("date +%s");

    // the update to 2048: held before its confirm
    const hold = path.join(os.tmpdir(), `nt-vmhold-${process.pid}`);
    fs.writeFileSync(hold, "");
    await declare(p!, q(2048));
    let upDone = false;
    const upping = p!.up({ skipPreview: true, env: { NT_STANDIN_HOLD: `q-restore=${hold}` } }).finally(() => (upDone = true));
    // the apply armed the revert, changed the rings and ended (the host lock is free again); the confirm is held.
    // One read also gives the guest's clock, to place its deadline on this machine's clock.
    let deadline = 0;
    let offsetMs = 0;
    const until = Date.now() + 300_000;
    while (Date.now() < until && !upDone) {
      const t0 = Date.now();
      const [armed, rx, lock, guestMs] = (
        await sh(
          `a=$(cut -f2 ${STATE}/*.pending/armed 2>/dev/null); r=$(ethtool -g ${i} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { print $2 }'); ` +
            `if flock -n /run/pulumi-net-tuning.lock true; then l=free; else l=held; fi; echo "\${a:-none} $r $l $(date +%s%3N)"`,
        )
      ).split(" ");
      if (armed !== "none" && rx === "2048" && lock === "free") {
        deadline = Number(armed);
        offsetMs = (t0 + Date.now()) / 2 - Number(guestMs);
        break;
      }
      await sleep(200);
    }
    if (!deadline) {
      fs.rmSync(hold, { force: true });
      const r = await upping;
      throw new Error(`the apply did not arm a revert and end (up ${upDone ? "ended" : "still running"}):\n${r.stdout}${r.stderr}`);
    }
    await sleep(1500); // the apply's report reaches the provider
    await vm.setSshLink(false);
    const downAt = Date.now();
    fs.rmSync(hold); // the confirm dials now: QEMU accepts the TCP connection, the guest never answers
    expect(await vm.sshAnswers(3000)).toBe(false);
    // plugged back in after the deadline and the 5 s the revert may take
    const hostDeadline = deadline * 1000 + offsetMs;
    await sleep(hostDeadline + 8_000 - Date.now());
    const upAt = Date.now();
    const linkUpMs = await vm.setSshLink(true);
    const r = await upping;
    const out = r.stdout + r.stderr;
    console.log(
      `guest clock − this machine's ${(-offsetMs / 1000).toFixed(1)} s; link down ${((hostDeadline - downAt) / 1000).toFixed(1)} s before the deadline, ` +
        `set_link on ${((upAt - hostDeadline) / 1000).toFixed(1)} s after it, SSH answered ${linkUpMs} ms later\nunconfirmed apply, pulumi up output:\n${out}`,
    );
    expect(r.code).not.toBe(0);
    // the apply said when the host reverts (the deadline it armed), before the confirm dialed
    const said = /NicQueues "q": applied, not confirmed yet: .*If it fails: not confirmed: the host reverts at (\S+Z) \(UTC\)/.exec(out);
    expect(said?.[1]).toBe(utc(deadline));
    // the confirm got through once the link was back, after the revert: the host refused it
    expect(out).toContain("Process exited with status 7");
    const late = /not confirmed: the host (\S+) reverted this apply at (\S+Z) \(its confirm came too late\); the plan is held until it changes/.exec(out);
    expect(late).not.toBeNull();

    // the guest: the confirmed rings again, put back by the timer by deadline + 5 s
    expect(await rings()).toBe("1024 1024");
    const rec = (await vm.ssh(`cat ${STATE}/*.reverted`)).stdout; // (untrimmed: the last field, the keys not put back, is empty)
    const m = /^net-tuning-reverted v1\t(\d+)\t[0-9a-f]{64}\t([0-9a-f]+)\t\n$/.exec(rec);
    expect(m).not.toBeNull();
    const [revertedAt, token] = [Number(m![1]), m![2]];
    expect(late![2]).toBe(utc(revertedAt));
    expect(revertedAt).toBeGreaterThanOrEqual(deadline);
    expect(revertedAt - deadline).toBeLessThan(5); // the record is written after every value was set back and read back
    // the revert was the transient systemd timer (not the detached process), which fired: the journal has the timer's
    // start at arming and the service's start at the deadline; no confirm stopped it
    const journal = await sh(`journalctl --no-pager -q -o short-unix | grep -F -- '${token}' || true`);
    console.log(`the guest's journal for the revert of token ${token} (deadline ${deadline} = ${utc(deadline)}):\n${journal}`);
    const at = (re: RegExp) => Number(journal.split("\n").find((l) => re.test(l))?.split(" ")[0] ?? NaN);
    const fired = at(/ Started net-tuning-revert-\S+\.service\b/);
    const ended = at(/net-tuning-revert-\S+\.service: Deactivated successfully/);
    expect(fired).toBeGreaterThanOrEqual(deadline - 1);
    expect(ended).toBeGreaterThanOrEqual(fired);
    expect(journal).not.toMatch(/ Stopped net-tuning-revert-/);
    console.log(
      `revert: the timer started the reverter ${(fired - deadline).toFixed(2)} s after the deadline, it ended ${(ended - deadline).toFixed(2)} s after it; ` +
        `record written ${revertedAt - deadline} s after it (whole seconds)`,
    );
    // 2048 never persisted: the unit, its script and rc.local are the confirmed apply's; the journal of originals is
    // back as before; no pending directory or timer left; besides it, only the record of the revert
    expect(await persistence()).toBe(persisted);
    expect(await engineState()).toBe(state);
    expect(await sh(`ls -d ${STATE}/*.pending 2>/dev/null || true`)).toBe("");
    expect(await sh(`ls ${STATE} | grep -c '\\.reverted$' || true`)).toBe("1");
    expect(await sh("systemctl list-timers --all --no-legend 'net-tuning-revert-*' | wc -l")).toBe("0");
    // the guest saw the cut: systemd-networkd lost and regained the carrier of the SSH NIC
    const carrier = await sh(`journalctl --no-pager -q -o cat --since @${guestStart} -u systemd-networkd | grep -E '^${vm.iface.virtio}: (Lost|Gained) carrier' || true`);
    expect(carrier.split("\n")).toEqual([`${vm.iface.virtio}: Lost carrier`, `${vm.iface.virtio}: Gained carrier`]);

    // the next preview reports the revert and the hold
    const pv = await p!.preview();
    console.log(`preview after the revert:\n${pv.stdout}${pv.stderr}`);
    expect(pv.code).toBe(0);
    expect(pv.stdout + pv.stderr).toContain(
      `NicQueues "q": 127.0.0.1:${vm.port} reverted an unconfirmed apply at ${utc(revertedAt)} (UTC): its confirm did not arrive in time. This plan is that plan: it is held (up refuses it) until it changes`,
    );
    // the next up holds: no apply step (the live read proposes no repair for a held plan), the confirm refused again
    const held = await p!.up({ skipPreview: true });
    const heldOut = held.stdout + held.stderr;
    console.log(`up after the revert:\n${heldOut}`);
    expect(held.code).not.toBe(0);
    expect(heldOut).toContain("Process exited with status 7");
    expect(heldOut).toContain(`not confirmed: the host ${late![1]} reverted this apply at ${utc(revertedAt)} (its confirm came too late); the plan is held until it changes`);
    expect(heldOut).not.toMatch(/q-apply (creating|updating)/);
    expect(await rings()).toBe("1024 1024");
    expect(await sh(`ls -d ${STATE}/*.pending 2>/dev/null || true`)).toBe("");

    // a changed plan applies and is confirmed (the unit rewritten by the confirm); destroy gives the rings back
    await declare(p!, q(512));
    const again = await p!.up({ skipPreview: true });
    if (again.code !== 0) console.log(again.stdout + again.stderr);
    expect(again.code).toBe(0);
    expect(await rings()).toBe("512 512");
    expect(await persistence()).not.toBe(persisted);
    expect(await sh(`systemctl is-enabled net-tuning-nic-${i}.service`)).toBe("enabled");
    expect(await sh(`ls ${STATE} | grep -c 'reverted\\|pending' || true`)).toBe("0");
    const d = await p!.destroy();
    expect(d.code).toBe(0);
    expect(await rings()).toBe(orig);
    expect(await persistence()).toBe("-");
  });

  afterAll(async () => {
    if (!vm || !p) return;
    await vm.setSshLink(true).catch(() => undefined); // (after a failed test above)
    await p.destroy();
    p.remove();
  }, 300_000);
});
