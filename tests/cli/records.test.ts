/**
 * The host's record of the last apply, trusted only for what it says (issue #32 item 3), under the real `pulumi` CLI
 * on a lab host as root:
 * - a record removed by hand: the preview says so and proposes an update, `up` applies in one session and records
 *   again, the next `up` opens no apply session (it opened none before: the token stayed "0", the host differed);
 * - a host put back to an older state (an image or backup taken at the previous plan: its values and its record):
 *   the record names another plan than the declared one, so the preview proposes an update and `up` applies the
 *   declared plan (before: the record matched the host, no drift, 0 sessions, the host kept the old values while the
 *   state and the preview's "will change" said otherwise).
 */
import { CliProject, clearSessions, countKinds, explain, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { declare, Declared, projectOn, values } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
useLab("clirecord", 1, async (hs) => {
  toolchain();
  host = hs[0];
  await logSessions(host);
});

const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const RECORDS = "/var/lib/pulumi-net-tuning-converged";
const args = (fin: number): Record<string, Declared> => ({ rec: { kind: "sysctl", args: { sysctls: { [SOMAX]: 8192, [FIN]: fin } } } });

describe(`records of the last apply, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject;
  const up = async () => {
    await clearSessions(host);
    const r = await p.up({ skipPreview: true });
    expect([r.code, r.code === 0 ? "" : explain(r)]).toEqual([0, ""]);
    return countKinds(await sessions(host));
  };

  beforeAll(async () => {
    p = await projectOn(host, "ntrecord", "root", args(21));
    expect(await up()).toEqual({ "live-read": 1, sftp: 1, apply: 1 });
  });
  afterAll(async () => {
    const d = await p?.destroy();
    if (d && d.code !== 0) throw new Error(explain(d));
    p?.remove();
  });

  test("a record removed by hand: the preview says so and proposes the update; up applies once; then nothing to do", async () => {
    expect((await host.exec(`rm -f ${RECORDS}/*`)).code).toBe(0);
    await host.exec(`sysctl -qw ${FIN}=33`); // and a value changed: no record to compare it with
    const pv = await p.preview();
    expect(pv.code).toBe(0);
    expect(pv.stdout + pv.stderr).toContain(`the record of this resource's last apply is gone from the host (${RECORDS}), its journal of originals is there: pulumi up applies it in full`);
    expect(pv.stdout).toMatch(/~ 2 to update/); // -apply, and -restore whose stdin comes from its report
    expect(await up()).toEqual({ "live-read": 1, apply: 1 });
    expect(await values(host, [FIN])).toEqual({ [FIN]: "21" });
    expect((await host.exec(`ls ${RECORDS}`)).stdout.trim()).not.toBe("");
    expect(await up()).toEqual({ "live-read": 1 });
  });

  test("a host put back to the previous plan's image (values and record): the preview proposes the update, up applies the declared plan", async () => {
    const saved = await host.exec(`cat ${RECORDS}/*`);
    const file = (await host.exec(`ls ${RECORDS}`)).stdout.trim();
    await declare(p, args(25));
    expect(await up()).toEqual({ "live-read": 1, apply: 1 });
    expect(await values(host, [FIN])).toEqual({ [FIN]: "25" });
    // the image: the old value, the old file content and the old record
    await host.exec(`sysctl -qw ${FIN}=21 && sed -i 's/^${FIN} = 25$/${FIN} = 21/' /etc/sysctl.d/90-net-tuning-rec.conf`);
    await host.exec(`cat > ${RECORDS}/${file} <<'EOF'\n${saved.stdout}EOF`);
    const pv = await p.preview();
    expect(pv.code).toBe(0);
    expect(pv.stdout + pv.stderr).toContain(`${FIN}: 21 → 25`);
    expect(pv.stdout).toMatch(/~ 2 to update/);
    expect(await up()).toEqual({ "live-read": 1, apply: 1 });
    expect(await values(host, [FIN])).toEqual({ [FIN]: "25" });
    expect(await up()).toEqual({ "live-read": 1 });
  });
});
