/**
 * Live read on real lab hosts (issue #13 groundwork): the read-only program over one SSH session reads the values
 * and files as root, as a sudo user and as a plain user without sudo, changes nothing on the host, and a closed
 * port gives a reason within the bound.
 */
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot } from "../../testkit/host";
import { readOverSsh } from "../../provider/live/ssh";
import { LIVE_READ_COMMAND, parseLiveRead, renderLiveRead } from "../../provider/live/read";

jest.setTimeout(120_000);
let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "live" });
  host = lab.hosts[0];
});
afterAll(async () => lab?.stop());

const KEYS = ["net.core.somaxconn", "net.ipv4.tcp_rmem", "net.ipv4.tcp_fin_timeout", "net.core.rmem_max", "net.ipv4.tcp_fastopen_key"];
const FILE = "/etc/sysctl.d/90-live.conf"; // on the host during the read: the read leaves it alone

describe("live read", () => {
  test.each(["root", "sudo", "plain"] as const)("as %s: the values the product's read program reports, host unchanged", async (who) => {
    await host.exec(`printf 'net.core.somaxconn = 1234\\n' > ${FILE}; echo 1234 > /proc/sys/net/core/somaxconn`);
    const before = await snapshot(host);
    const stdin = renderLiveRead([{ kind: "sysctl", ownerId: "p.s.live-12345678", keys: [...KEYS, "net.core.no_such_key"] }]);
    const r = await readOverSsh(host.connection(who), LIVE_READ_COMMAND, stdin);
    if (!r.ok) throw new Error(r.reason);
    expect(r.code).toBe(0);
    const live = parseLiveRead(r.stdout)["p.s.live-12345678"];
    expect(live.recordState).toBe("none");
    expect(live.values["net.core.somaxconn"]).toBe("1234");
    const rmem = (await host.exec("cat /proc/sys/net/ipv4/tcp_rmem")).stdout.trim().split(/\s+/).join(" ");
    expect(live.values["net.ipv4.tcp_rmem"]).toBe(rmem);
    expect(live.missing).toEqual(["net.core.no_such_key"]);
    // tcp_fastopen_key is 0600: readable by root only; as a non-root user it is reported, not guessed.
    if (who === "root") expect(live.values["net.ipv4.tcp_fastopen_key"]).toMatch(/^[0-9a-f-]+$/);
    else expect(live.unreadable).toEqual(["net.ipv4.tcp_fastopen_key"]);
    expect(await snapshot(host)).toBe(before);
  });

  test("a closed port gives the endpoint and reason, within the bound", async () => {
    const t0 = Date.now();
    const r = await readOverSsh({ ...host.connection(), port: 1 }, "/bin/sh -s", "echo hi\n", 3000);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(`${host.address}:1: connection refused`);
    expect(Date.now() - t0).toBeLessThan(3500);
  });

  test("a refused login names the user, never the key", async () => {
    const conn = { ...host.connection("plain"), user: "nosuchuser" };
    const r = await readOverSsh(conn, "/bin/sh -s", "echo hi\n", 8000);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toContain("login as nosuchuser refused");
      expect(r.reason).not.toContain(conn.privateKey.slice(40, 80));
    }
  });
});
