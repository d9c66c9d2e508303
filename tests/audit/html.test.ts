/**
 * `net-tuning audit --html FILE` (issue #33): one self-contained page (chart.js inlined, no network), rendered in a
 * real headless Chromium (Debian's `chromium`): its fleet table names every host, and the charts chart.js drew hold
 * the counters of the JSON, host by host (the page writes each chart's data into #chart-data after drawing).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Lab, startLab } from "../../testkit/lab";
import { overflowListener, timeWaitSockets, writeKnownHosts } from "./helpers";
import { main } from "../../bin/net-tuning";
import { AuditDocument, CHART_COUNTERS } from "../../provider/audit/report";

jest.setTimeout(300_000);

let lab: Lab;
let dir: string;

beforeAll(async () => {
  lab = await startLab({ hosts: 3, tag: "audithtml" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-audit-html-"));
  // something to chart: an overflow on h1, TIME_WAIT sockets on h2
  await overflowListener(lab.hosts[1], 20);
  await timeWaitSockets(lab.hosts[2], 4);
});

afterAll(async () => {
  await lab?.stop();
});

function chromium(file: string): string {
  const r = spawnSync("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000", "--dump-dom", `file://${file}`], { encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) throw new Error(`chromium exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

function decode(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

describe("audit --html in headless Chromium", () => {
  it("renders the fleet table and one chart per reachable host holding the JSON's counters", async () => {
    const knownHosts = writeKnownHosts(lab, path.join(dir, "known_hosts"));
    const html = path.join(dir, "report.html");
    let stdout = "";
    const code = await main(["audit", ...lab.hosts.flatMap((h) => ["--host", `root@${h.address}`]), "-i", lab.hosts[0].root.keyPath, "--known-hosts", knownHosts, "--json", "--html", html],
      { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => true } });
    expect(code).toBe(0);
    const doc = JSON.parse(stdout) as AuditDocument;
    const page = fs.readFileSync(html, "utf8");
    expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href=/); // self-contained
    expect(page).toContain("Chart.js v4"); // chart.js's bundle inlined (its banner)

    const dom = chromium(html);
    const rows = [...dom.matchAll(/<tr><td>([^<]+)<\/td>/g)].map((m) => m[1]);
    expect(rows).toEqual(lab.hosts.map((h) => `root@${h.address}`));
    const data = /<pre id="chart-data">([^<]*)<\/pre>/.exec(dom);
    expect(data).not.toBeNull();
    const drawn = JSON.parse(decode(data![1])) as { name: string; labels: string[]; values: number[]; rendered: number }[];
    expect(drawn.map((d) => d.name)).toEqual(doc.hosts.map((h) => h.name));
    for (const [i, d] of drawn.entries()) {
      const counters = (doc.hosts[i] as unknown as { counters: Record<string, number> }).counters;
      expect(d.labels).toEqual(CHART_COUNTERS);
      expect(d.values).toEqual(CHART_COUNTERS.map((c) => counters[c] ?? 0));
      expect(d.rendered).toBe(CHART_COUNTERS.length); // a bar drawn per counter
    }
    expect(drawn[1].values[CHART_COUNTERS.indexOf("TcpExt.ListenOverflows")]).toBeGreaterThan(0);
    expect(drawn[2].values[CHART_COUNTERS.indexOf("sockets.timeWait")]).toBeGreaterThanOrEqual(4);
  });
});
