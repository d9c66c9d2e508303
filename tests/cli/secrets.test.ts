/**
 * Secret sysctl values under the real `pulumi` CLI (issue #32 item 6): the catalogue's secret key
 * (net.ipv4.tcp_fastopen_key, given as a plain string) and a value given as a Pulumi secret
 * (`pulumi.secret(7213)` for net.ipv4.tcp_keepalive_time) are searched for, through preview, up, an unchanged up and
 * destroy, in everything a user or another user of the host can read:
 * - the CLI's output of each command (the diff, the live preview's messages, the engine's messages);
 * - `pulumi stack export` without --show-secrets, with each gzip+base64 restore plan in it decoded first;
 * - `pulumi stack output` (the `applied`/`previous` outputs are secrets);
 * - the host's world-readable files (the converged record keeps a sha256 of the Pulumi secret and nothing of the
 *   fastopen key, whose /proc/sys file only root reads; the sysctl.d file is 0600).
 * The host's original fastopen key (random at boot: itself a secret, kept as the original) is searched for too.
 * Control: with --show-secrets the export does hold both values (the search can find them).
 */
import { gunzipSync } from "zlib";
import { CliProject, explain, providerLabel, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { Declared, fileOf, projectOn, values } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
useLab("clisecret", 1, async (hs) => {
  toolchain();
  host = hs[0];
});

const KEY = "net.ipv4.tcp_fastopen_key";
const KEEP = "net.ipv4.tcp_keepalive_time";
const FASTOPEN = "0badc0de-5ec12e75-7a11fa11-c0ffee42";
const KEEP_VALUE = 7213;
const FILE = "/etc/sysctl.d/90-net-tuning-sec.conf";

/** The text with every base64 run that gunzips decoded and appended (the -restore stdin of a larger plan is gzip+base64). */
function decoded(text: string): string {
  const out = [text];
  for (const m of text.matchAll(/[A-Za-z0-9+/]{40,}={0,2}/g)) {
    try {
      out.push(gunzipSync(Buffer.from(m[0], "base64")).toString("utf8"));
    } catch {
      /* not gzip */
    }
  }
  return out.join("\n");
}

describe(`secret sysctl values, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject;
  let original: string;
  const secrets = (): string[] => [FASTOPEN, original, `${KEEP} = ${KEEP_VALUE}`, `${KEEP}\t${KEEP_VALUE}`, `"${KEEP_VALUE}"`];
  const found = (text: string): string[] => secrets().filter((s) => decoded(text).includes(s));
  const declared: Record<string, Declared> = {
    sec: { kind: "sysctl", args: { sysctls: { [KEY]: FASTOPEN, "net.core.somaxconn": 8192 }, fileName: "90-net-tuning-sec.conf" }, secrets: { [`sysctls.${KEEP}`]: KEEP_VALUE } },
  };
  const logs: string[] = [];

  beforeAll(async () => {
    original = (await values(host, [KEY]))[KEY];
    expect(original).toMatch(/^[0-9a-f]{8}-/);
    p = await projectOn(host, "ntsecret", "root", declared);
  });

  test("preview, up and an unchanged up: the values reach the host; no output, log or state shows them", async () => {
    const pv = await p.preview({ diff: true });
    expect([pv.code, pv.code === 0 ? "" : explain(pv)]).toEqual([0, ""]);
    logs.push(pv.stdout + pv.stderr);
    // the live preview names the secret keys with "(secret)" and shows the other values
    expect(pv.stdout + pv.stderr).toContain(`${KEY}: (secret) → (secret)`);
    expect(pv.stdout + pv.stderr).toContain(`${KEEP}: (secret) → (secret)`);
    expect(pv.stdout + pv.stderr).toMatch(/net\.core\.somaxconn: \d+ → 8192/);
    const up = await p.up();
    expect([up.code, up.code === 0 ? "" : explain(up)]).toEqual([0, ""]);
    logs.push(up.stdout + up.stderr);
    const again = await p.up();
    expect(again.code).toBe(0);
    logs.push(again.stdout + again.stderr);
    // the host holds both values (the search below is not vacuous)
    expect(await values(host, [KEY, KEEP])).toEqual({ [KEY]: FASTOPEN, [KEEP]: String(KEEP_VALUE) });
    for (const l of logs) expect(found(l)).toEqual([]);
  });

  test("the state without --show-secrets holds neither value, nor the original key; with it, it does (control)", async () => {
    const plain = await p.export(false);
    expect(found(plain.text)).toEqual([]);
    const shown = await p.export(true);
    expect(decoded(shown.text)).toContain(FASTOPEN);
    expect(decoded(shown.text)).toContain(original);
    // the apply's stdin, stdout and stderr and the restore's stdin are stored encrypted
    const children = (plain.json.deployment.resources ?? []).filter((r) => r.type === "command:remote:Command");
    expect(children.map((r) => r.urn.replace(/.*::/, "")).sort()).toEqual(["sec-apply", "sec-restore"]);
    const isSecret = (v: unknown) => typeof v === "object" && v !== null && "ciphertext" in (v as object);
    const apply = children.find((r) => r.urn.endsWith("::sec-apply"))!;
    expect([isSecret(apply.inputs?.stdin), isSecret(apply.outputs?.stdout), isSecret(apply.outputs?.stdin)]).toEqual([true, true, true]);
    const restore = children.find((r) => r.urn.endsWith("::sec-restore"))!;
    expect(isSecret(restore.inputs?.stdin)).toBe(true);
    const outs = await p.outputs(false);
    expect(found(JSON.stringify(outs))).toEqual([]);
    expect(JSON.stringify(outs)).toContain("[secret]");
  });

  test("on the host: the file is 0600, no world-readable file holds a value, the record keeps a sha256", async () => {
    const mode = await host.exec(`stat -c %a ${FILE}`);
    expect(mode.stdout.trim()).toBe("600");
    expect(await fileOf(host, FILE)).toContain(`${KEY} = ${FASTOPEN}`);
    const world = await host.exec(
      "find /etc/sysctl.d /etc/sysctl.conf /var/lib/pulumi-net-tuning-converged /tmp /run -xdev -type f -perm -o=r -exec grep -l -F -e " +
        `'${FASTOPEN}' -e '${original}' -e '${KEEP} = ${KEEP_VALUE}' {} + 2>/dev/null; true`,
    );
    expect(world.stdout.trim()).toBe("");
    // the record: the Pulumi secret as its sha256; the fastopen key (its /proc/sys file is 0600) not at all
    const record = await host.exec("cat /var/lib/pulumi-net-tuning-converged/*");
    expect(record.stdout).toMatch(new RegExp(`^value\\t${KEEP.replace(/\./g, "\\.")}\\t#sha256:[0-9a-f]{64}$`, "m"));
    expect(record.stdout).toMatch(new RegExp(`^unknown\\t${KEY.replace(/\./g, "\\.")}$`, "m"));
  });

  test("destroy puts the original key back; its output shows no value", async () => {
    const d = await p.destroy();
    expect([d.code, d.code === 0 ? "" : explain(d)]).toEqual([0, ""]);
    expect(found(d.stdout + d.stderr)).toEqual([]);
    expect((await values(host, [KEY]))[KEY]).toBe(original);
    expect(await fileOf(host, FILE)).toBeNull();
    p.remove();
  });
});

