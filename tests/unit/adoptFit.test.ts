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
import { adoptedBytes, WEB_SYSCTL_CONF_LINES } from "../adopt/fixtures";

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

const report = (files: [string, "file" | "lines", Buffer][], tools: string) =>
  [
    "net-tuning-report v1",
    "generation\taaef1b41-47bd-45b1",
    "same-as-plan\t1",
    "previous-values\t4096",
    ...files.map(([p, how, b], i) => `adopted.${i + 1}\t${p}\t${how}\t644\t0:0\t1709618828.123456789\t${b.length}\t${b.toString("base64")}`),
    "end",
    `host\t${tools}`,
  ].join("\n");

async function run(files: [string, "file" | "lines", Buffer][], tools = "gzip base64"): Promise<{ stdin: string; warnings: string[] }> {
  const warn = jest.spyOn(pulumi.log, "warn");
  try {
    const r = await capture(
      () => {
        new NetTuning("edge", { connection, sysctls: { [KEY]: 8192 }, adopt: files.map(([p]) => (p.startsWith("/etc/sysctl.d/") ? p.slice(14) : p)) });
      },
      { outputsOf: (x) => (x.name === "edge-apply" ? { stdout: report(files, tools), stderr: "" } : undefined) },
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
  // sysctl.conf's bytes gzip'd (the host has gzip), exactly the file once gunzip'd
  expect(plain).toContain(`@adopted /etc/sysctl.conf\tlines\t644\t0:0\t1709618828.123456789\t${conf.length}\n@adopted-gzip H4sI`);
  expect(adoptedBytes(plain).get("/etc/sysctl.conf")).toEqual(conf);
  expect(plain).not.toMatch(/^@adopted-data /m);
  // the record stays (the restore puts it back from the journal), without data
  expect(plain).toContain(`@adopted /etc/sysctl.d/99-hk-net-tuning.conf\tfile\t644\t0:0\t1709618828.123456789\t4096\n# --- end of adopted files ---\n`);
  expect(warnings.filter((w) => w.includes("kept only in the host's journal"))).toEqual([
    expect.stringMatching(/^NetTuning "edge": the adopted \/etc\/sysctl\.d\/99-hk-net-tuning\.conf \(4096 bytes\) is kept only in the host's journal \(\/var\/lib\/pulumi-net-tuning\/sysctl\/net-tuning\.test\.edge-[0-9a-f]{8}\.adopted\/\), not in Pulumi state: with its bytes the -restore input would exceed 8192 bytes\./),
  ]);
});

test("a small adopted file stays in state, gzip'd, no warning; on a host without gzip the plain stdin leaves it no room", async () => {
  const small = Buffer.from(`${KEY} = 4096\n`);
  const gz = await run([["/etc/sysctl.d/99-hk-net-tuning.conf", "file", small]]);
  expect(adoptedBytes(readRestoreStdin(gz.stdin)).get("/etc/sysctl.d/99-hk-net-tuning.conf")).toEqual(small);
  expect(gz.warnings.filter((w) => w.includes("kept only in the host's journal"))).toEqual([]);
  // no gzip on the host: nothing compressed, the adopting fallback program alone is 7.9 KB: the record stays, the
  // bytes are journal-only and the warning says so. Even so the plain stdin is over 8 KiB (8,430 B): the documented
  // exception for hosts without gzip (ARCHITECTURE.md "State per host"), which no fitting can avoid
  const plain = await run([["/etc/sysctl.d/99-hk-net-tuning.conf", "file", small]], "base64");
  expect(Buffer.byteLength(plain.stdin)).toBeGreaterThan(STRING_INPUT_MAX);
  expect(Buffer.byteLength(plain.stdin)).toBeLessThan(8600);
  expect(plain.stdin).toContain(`@adopted /etc/sysctl.d/99-hk-net-tuning.conf\tfile\t644\t0:0\t1709618828.123456789\t${small.length}\n# --- end of adopted files ---\n`);
  expect(plain.warnings.filter((w) => w.includes("kept only in the host's journal"))).toEqual([expect.stringContaining("the adopted /etc/sysctl.d/99-hk-net-tuning.conf (26 bytes)")]);
});

test("the articles' hand file and a commented sysctl.conf (the lab's adopt case): both keep their bytes in state once gzip'd", async () => {
  const { conf } = handFiles();
  const hk = Buffer.from(`# hand tuning (the articles' file)\n${"net.ipv4.tcp_fin_timeout = 30\nnet.ipv4.tcp_tw_reuse = 1\n".repeat(6)}`);
  const { stdin, warnings } = await run([["/etc/sysctl.conf", "lines", conf], ["/etc/sysctl.d/99-hk-net-tuning.conf", "file", hk]]);
  expect(Buffer.byteLength(stdin)).toBeLessThanOrEqual(STRING_INPUT_MAX);
  const plain = readRestoreStdin(stdin);
  expect(adoptedBytes(plain).get("/etc/sysctl.conf")).toEqual(conf);
  expect(adoptedBytes(plain).get("/etc/sysctl.d/99-hk-net-tuning.conf")).toEqual(hk);
  expect(warnings.filter((w) => w.includes("kept only in the host's journal"))).toEqual([]);
});
