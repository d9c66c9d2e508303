/**
 * One reader, two implementations (issue #34): the engine's counter extraction (provider/host/sh/counters.sh, the awk
 * generated from provider/counters/sources.ts, run as nt_gate_read runs it) and the audit's parseCounters()
 * (provider/audit/counters.ts, over renderCounterSh's raw text) give the same value for every name the gate takes,
 * read on a real lab host in one shell run: every /proc/net/netstat and /proc/net/snmp field, softnet.*,
 * sockets.timeWait (with TIME_WAIT sockets made for it), conntrack.* when the module is loaded, and every `ethtool -S`
 * statistic of the host's eth0. softnet_stat is the machine's (not the network namespace's), so its counters may tick
 * between the two reads: they may differ by a little, nothing else may.
 */
import * as fs from "fs";
import * as path from "path";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { parseCounters, renderCounterSh } from "../../provider/audit/counters";
import { gateName, gateNames } from "../../provider/counters/gate";
import { renderCountersSh } from "../../provider/counters/sources";

jest.setTimeout(120_000);
let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "vcount" });
  host = lab.hosts[0];
});
afterAll(async () => lab?.stop());

test("the committed counters.sh is what sources.ts renders", () => {
  expect(fs.readFileSync(path.join(__dirname, "../../provider/host/sh/counters.sh"), "utf8")).toBe(renderCountersSh());
});

test("the engine's awk and parseCounters() agree on every name the gate takes, on a lab host", async () => {
  // TIME_WAIT sockets: connections closed by the client side first
  await host.exec(`python3 -c '
import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(16)
for i in range(5):
    c = socket.create_connection(l.getsockname()); s, _ = l.accept(); c.close(); s.close()
'`);
  const raw = await host.exec(renderCounterSh(["eth0"]));
  expect(raw.code).toBe(0);
  const ts = parseCounters(raw.stdout);
  const names = [...gateNames().filter((n) => n in ts), ...Object.keys(ts).filter((n) => n.startsWith("ethtool.eth0."))];
  // every fixed name the gate takes, read on this host (the kernel of this machine: the table's own)
  for (const n of ["TcpExt.ListenOverflows", "Tcp.RetransSegs", "Udp.RcvbufErrors", "softnet.dropped", "softnet.time_squeeze", "sockets.timeWait"]) expect(names).toContain(n);
  expect(names.filter((n) => n.startsWith("ethtool.")).length).toBeGreaterThan(3);
  for (const n of names) expect("problem" in gateName(n, { kind: "sysctl" })).toBe(false);
  const spec = names.map((n) => `${n}\tincrease\t0\n`).join("");
  // as nt_gate_read runs it: the generated counters.sh, its files, `ethtool -S` piped in
  const script = `${renderCountersSh()}
set -- -v phase=before -v spec=/tmp/vc.spec "$NT_COUNTERS_AWK" /tmp/vc.spec
files=''
while IFS= read -r n; do nt_counter_files "\${n%%	*}" && for f in $NT_CF; do case " $files " in *" $f "*) ;; *) files="$files $f" ;; esac; done; done < /tmp/vc.spec
for f in $files; do [ -r "$f" ] && set -- "$@" "$f"; done
{ printf '@@counters ethtool %s\\n' eth0; ethtool -S eth0 2>/dev/null; } | awk "$@" -
`;
  expect((await host.exec("cat > /tmp/vc.spec", { stdin: spec })).code).toBe(0);
  const sh = await host.exec(script);
  expect(sh.stderr).toBe("");
  expect(sh.code).toBe(0);
  const awk: Record<string, number> = {};
  const missing: string[] = [];
  for (const l of sh.stdout.split("\n").filter(Boolean)) {
    const [t, n, v] = l.split("\t");
    if (t === "v") awk[n] = Number(v);
    else missing.push(n);
  }
  expect(missing).toEqual([]);
  expect(Object.keys(awk).sort()).toEqual([...names].sort());
  const differ = names.filter((n) => (n.startsWith("softnet.") || n === "conntrack.fill" ? Math.abs(awk[n] - ts[n]) > Math.max(1e-6, ts[n] * 0.01 + 50) : awk[n] !== ts[n]));
  expect(differ.map((n) => `${n}: awk ${awk[n]}, parseCounters ${ts[n]}`)).toEqual([]);
  expect(ts["sockets.timeWait"]).toBeGreaterThanOrEqual(5);
  console.log(`names compared: ${names.length} (${names.filter((n) => n.startsWith("ethtool.")).length} ethtool -S statistics of eth0)`);
});
