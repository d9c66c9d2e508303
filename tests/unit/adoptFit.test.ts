/**
 * A NetTuning that adopts files keeps their bytes in Pulumi state only while its -restore stdin stays within 8 KiB
 * (issue #12: no string input of a child over 8 KiB): the component, under setMocks, with the report a host prints
 * after adopting a 4 KiB sysctl.d file and a 2.8 KB /etc/sysctl.conf. The file left out keeps its record (put back
 * from the host's journal) and a warning names it; a small adopted file stays in state with no warning.
 */
import { createHash } from "crypto";
import * as pulumi from "@pulumi/pulumi";
import { NetTuning } from "../../components/netTuning";
import { readRestoreStdin } from "../../provider/host/programs";
import { STRING_INPUT_MAX } from "../../provider/sysctl/adopt";
import { capture } from "../../testkit/harness";
import { WEB_SYSCTL_CONF_LINES } from "../adopt/fixtures";

const KEY = "net.core.somaxconn";
const connection = { host: "198.51.100.7", user: "root", privateKey: "KEY" };

/** The 4 KiB hand file and the sysctl.conf of tests/unit/programs.test.ts's size fixtures. */
function handFiles(): { file: Buffer; conf: Buffer } {
  let hand = "# hand tuning of the edge fleet, loaded with sysctl --system\n\n";
  // varied lines (a hash chain), as compressible as a hand file's notes, not a repeated pattern
  let h = "edge";
  for (let n = 0; Buffer.byteLength(hand) < 4096; n++) {
    h = createHash("sha256").update(h).digest("hex");
    hand += `# ${h.slice(0, 24)} tuned on ${h.slice(24, 32)} (ticket ${parseInt(h.slice(32, 38), 16)})\n`;
  }
  let head = "# /etc/sysctl.conf: system variables, read by sysctl -p and at boot\n";
  for (let n = 0; head.length < 2300; n++) head += `#net.ipv4.conf.eth${n}.rp_filter = 1  # example ${n}, disabled\n`;
  return { file: Buffer.from(hand).subarray(0, 4096), conf: Buffer.from(head + WEB_SYSCTL_CONF_LINES) };
}

const report = (files: [string, "file" | "lines", Buffer][]) =>
  [
    "net-tuning-report v1",
    "generation\taaef1b41-47bd-45b1",
    "same-as-plan\t1",
    "previous-values\t4096",
    ...files.map(([p, how, b], i) => `adopted.${i + 1}\t${p}\t${how}\t644\t0:0\t1709618828.123456789\t${b.length}\t${b.toString("base64")}`),
    "end",
    "host\tgzip base64",
  ].join("\n");

async function run(files: [string, "file" | "lines", Buffer][]): Promise<{ stdin: string; warnings: string[] }> {
  const warn = jest.spyOn(pulumi.log, "warn");
  try {
    const r = await capture(
      () => {
        new NetTuning("edge", { connection, sysctls: { [KEY]: 8192 }, adopt: files.map(([p]) => (p.startsWith("/etc/sysctl.d/") ? p.slice(14) : p)) });
      },
      { outputsOf: (x) => (x.name === "edge-apply" ? { stdout: report(files), stderr: "" } : undefined) },
    );
    if (r.error) throw r.error;
    const stdin = String(r.resources.find((x) => x.name === "edge-restore")!.inputs.stdin);
    return { stdin, warnings: warn.mock.calls.map((c) => String(c[0])) };
  } finally {
    warn.mockRestore();
  }
}

test("a 4 KiB sysctl.d file and a 2.8 KB sysctl.conf: sysctl.conf in state, the other file journal-only with a warning, the stdin within 8 KiB", async () => {
  const { file, conf } = handFiles();
  const { stdin, warnings } = await run([["/etc/sysctl.conf", "lines", conf], ["/etc/sysctl.d/99-hk-net-tuning.conf", "file", file]]);
  expect(Buffer.byteLength(stdin)).toBeLessThanOrEqual(STRING_INPUT_MAX);
  const plain = readRestoreStdin(stdin);
  expect(plain).toContain(`@adopted /etc/sysctl.conf\tlines\t644\t0:0\t1709618828.123456789\t${conf.length}\n@adopted-data ${conf.toString("base64").slice(0, 76)}\n`);
  // the record stays (the restore puts it back from the journal), without data
  expect(plain).toContain(`@adopted /etc/sysctl.d/99-hk-net-tuning.conf\tfile\t644\t0:0\t1709618828.123456789\t4096\n# --- end of adopted files ---\n`);
  expect(warnings.filter((w) => w.includes("kept only in the host's journal"))).toEqual([
    expect.stringMatching(/^NetTuning "edge": the adopted \/etc\/sysctl\.d\/99-hk-net-tuning\.conf \(4096 bytes\) is kept only in the host's journal \(\/var\/lib\/pulumi-net-tuning\/sysctl\/net-tuning\.test\.edge-[0-9a-f]{8}\.adopted\/\), not in Pulumi state: with its bytes the -restore input would exceed 8192 bytes\./),
  ]);
});

test("a small adopted file stays in state, no warning", async () => {
  const small = Buffer.from(`${KEY} = 4096\n`);
  const { stdin, warnings } = await run([["/etc/sysctl.d/99-hk-net-tuning.conf", "file", small]]);
  expect(readRestoreStdin(stdin)).toContain(`@adopted-data ${small.toString("base64")}\n`);
  expect(warnings.filter((w) => w.includes("kept only in the host's journal"))).toEqual([]);
});
