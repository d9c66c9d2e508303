/**
 * `net-tuning diff --stack` and `audit --stack` (issue #33) against a stack applied by the real pulumi CLI
 * (testkit/cli, toolchain of scripts/pulumi-toolchain.sh) on a lab host: the hosts come from the export (the
 * components' non-secret `endpoint` output; the connection itself is secret), the declared values from the -apply
 * child's plan; a hand change on the host is a difference from the stack and drift since the last apply.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CliProject, explain, toolchain } from "../../testkit/cli";
import { Lab, startLab } from "../../testkit/lab";
import { cli, writeKnownHosts } from "./helpers";
import { projectOn } from "../cli/fixtures";
import { main } from "../../bin/net-tuning";

jest.setTimeout(900_000);

let lab: Lab;
let p: CliProject;
let dir: string;
let knownHosts: string;

const DECLARED = { "net.core.somaxconn": 8192, "net.ipv4.tcp_fin_timeout": 21, "net.ipv4.tcp_rmem": [4096, 131072, 8388608] };

beforeAll(async () => {
  toolchain(); // throws (the test fails) when the real CLI cannot be built
  lab = await startLab({ hosts: 1, tag: "auditstk" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-audit-stack-"));
  knownHosts = writeKnownHosts(lab, path.join(dir, "known_hosts"));
  p = await projectOn(lab.hosts[0], "ntaudit", "root", { web: { kind: "sysctl", args: { sysctls: DECLARED } } });
  const up = await p.up({ skipPreview: true });
  if (up.code !== 0) throw new Error(`pulumi up failed: ${explain(up)}`);
});

afterAll(async () => {
  if (p) await p.destroy().catch(() => undefined);
  await lab?.stop();
});

describe("net-tuning diff/audit --stack on a stack applied by the real pulumi CLI", () => {
  it("an export without --show-secrets names the host (endpoint output); no difference right after up; a hand change is a difference and drift", async () => {
    const h = lab.hosts[0];
    const { text, json } = await p.export(false);
    expect(text).not.toContain(h.root.privateKey.split("\n")[1]); // the key stays encrypted
    const nt = (json.deployment.resources ?? []).find((r: { type: string }) => r.type === "net-tuning:index:NetTuning") as { outputs: Record<string, unknown> };
    expect(nt.outputs.endpoint).toBe(`root@${h.address}:22`);
    const file = path.join(dir, "stack.json");
    fs.writeFileSync(file, text);
    const ssh = ["-i", h.root.keyPath, "--known-hosts", knownHosts];

    const clean = await cli("diff", "--stack", file, ...ssh);
    expect(clean.stderr).toBe("");
    expect(clean.stdout).toBe(`root@${h.address}:22: 0 differ from the stack, 3 as declared, 0 drifted since the last apply\n`);
    expect(clean.code).toBe(0);

    await h.exec("sysctl -q -w net.ipv4.tcp_fin_timeout=33");
    const changed = await cli("diff", "--stack", file, ...ssh);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain(`root@${h.address}:22: 1 differ from the stack, 2 as declared, 1 drifted since the last apply\n`);
    expect(changed.stdout).toContain("  net.ipv4.tcp_fin_timeout: declared 21, host 33\n");
    expect(changed.stdout).toContain("  drift (ntaudit/test/web): net.ipv4.tcp_fin_timeout 21 → 33\n"); // the record names the owner project/stack/name

    const asJson = await cli("diff", "--stack", file, ...ssh, "--json");
    const d = JSON.parse(asJson.stdout);
    expect(d.schema).toBe("net-tuning-diff/v1");
    expect(d.hosts[0].changed).toEqual([{ key: "net.ipv4.tcp_fin_timeout", declared: "21", host: "33" }]);

    const audit = await cli("audit", "--stack", file, ...ssh, "--json");
    expect(audit.code).toBe(1); // the declared-differs finding is an error
    const host = JSON.parse(audit.stdout).hosts[0];
    expect(host.declaredBy).toEqual(["web"]);
    expect(host.sysctls.filter((s: { declared?: string }) => s.declared !== undefined)).toEqual([
      expect.objectContaining({ key: "net.core.somaxconn", value: "8192", declared: "8192", status: "declared-match" }),
      expect.objectContaining({ key: "net.ipv4.tcp_fin_timeout", value: "33", declared: "21", status: "declared-differs" }),
      expect.objectContaining({ key: "net.ipv4.tcp_rmem", value: "4096 131072 8388608", declared: "4096 131072 8388608", status: "declared-match" }),
    ]);
    // --stack - reads the export from stdin
    let out = "";
    const code = await main(["diff", "--stack", "-", ...ssh], { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true }, readStdin: () => text });
    expect(code).toBe(1);
    expect(out).toBe(changed.stdout);
  });
});
