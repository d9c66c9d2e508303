/**
 * Issue #32 item 14: a bad value that reaches a resource through an Output is one error for that resource (it was the
 * same error 16 times for a NetTuning, 9 for a NicQueues: every child, the engine delivery and every registered output
 * derived from the rejected plan rejected on its own). Run in a plain Node process under the SDK's mocks
 * (fixtures/oneError/program.ts), which counts every unhandled rejection as jest or the language host would see it.
 */
import { spawnSync } from "child_process";
import * as path from "path";

interface Run {
  rejections: number;
  distinctObjects: number;
  messages: string[];
  paths: string[][];
  registered: string[];
  logs: string[];
}
function run(cases: string[], opts: { preview?: boolean; live?: boolean } = {}): Run {
  // (the SDK's exit hook may complain about promises still active when the program exits: its stdout is what counts)
  const r = spawnSync(
    process.execPath,
    [require.resolve("ts-node/dist/bin"), "--transpile-only", "-P", "tsconfig.dev.json", path.join(__dirname, "fixtures/oneError/program.ts"), JSON.stringify(cases), opts.preview ? "preview" : "update"],
    { cwd: path.join(__dirname, "../.."), encoding: "utf8", env: { ...process.env, NET_TUNING_LIVE_PREVIEW: opts.live ? "1" : "0" }, timeout: 120_000 },
  );
  const line = r.stdout.trim().split("\n").find((l) => l.startsWith("{\"rejections\""));
  if (!line) throw new Error(`the program printed no result: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line) as Run;
}
const children = (r: Run, prefix: string) => r.registered.filter((x) => x.startsWith("command:") && (x.includes(`::${prefix}-`) || x.includes("net-tuning-engine")));

jest.setTimeout(180_000);

test("three resources with a bad value each (rings, range, misspelt key), one valid: one error per bad resource, nothing registered for them", () => {
  const r = run(["nic-rings", "sysctl-range", "sysctl-typo", "valid"]);
  expect(r.rejections).toBe(3);
  expect(r.distinctObjects).toBe(3);
  // each message is the resource's own, not wrapped in the SDK's "error serializing property" prefixes
  expect(r.messages.sort()).toEqual([
    expect.stringMatching(/^NetTuning "bad1": 1 invalid input:\n {2}- net\.core\.somaxconn = -5 is out of range/),
    expect.stringMatching(/^NetTuning "bad2": 1 invalid input:\n {2}- net\.core\.somaxcon = 4096 is not a catalogued key; it looks like net\.core\.somaxconn/),
    expect.stringMatching(/^NicQueues "bad0": 1 invalid input:\n {2}- rings\.rx must be an integer from 1 to \d+/),
  ]);
  // no child Command and no engine copy for the bad ones (nothing can reach a host); the valid one has its children
  expect(r.registered.filter((x) => /::bad\d-(apply|restore)$/.test(x))).toEqual([]);
  expect(r.registered).toEqual(expect.arrayContaining(["command:remote:Command::good3-apply", "command:remote:Command::good3-restore"]));
  expect(children(r, "good3").length).toBeGreaterThanOrEqual(3);
  expect(r.registered.filter((x) => x.startsWith("command:remote:CopyToRemote"))).toHaveLength(1); // the valid one's address only
});

describe("item 11c: what the live read shows the host would refuse fails the preview, as up would", () => {
  test("a declared key this kernel does not have: the preview fails with the preflight's words, nothing registered", () => {
    const r = run(["sysctl-missing", "valid"], { preview: true, live: true });
    expect(r.messages).toEqual([
      'NetTuning "bad0": 1 invalid input:\n  - these keys do not exist on this kernel (6.1.0-test): net.core.zz_absent — check the spelling, the kernel version, or load the module that provides them',
    ]);
    // (net.netfilter.nf_conntrack_max needs the nf_conntrack module the apply loads first: left to the host)
    expect(r.registered.filter((x) => /::bad0-(apply|restore)$/.test(x))).toEqual([]);
    expect(r.registered).toEqual(expect.arrayContaining(["command:remote:Command::good1-apply", "command:remote:Command::good1-restore"]));
  });
  test("rings and channels above the driver's maximum: the preview fails with the preflight's words; \"max\" and values within pass", () => {
    const r = run(["nic-over-max", "nic-within-max"], { preview: true, live: true });
    expect(r.messages).toEqual([
      'NicQueues "bad0": 2 invalid inputs:\n' +
        "  - channels.combined 9 exceeds eth0 maximum 8 (driver fakenic, ethtool -l eth0); use at most 8\n" +
        '  - rings.rx 4096 exceeds eth0 maximum 1024 (driver fakenic, ethtool -g eth0); use at most 1024 or "max"',
    ]);
    expect(r.registered.filter((x) => /::bad0-(apply|restore)$/.test(x))).toEqual([]);
    expect(r.registered).toEqual(expect.arrayContaining(["command:remote:Command::good1-apply", "command:remote:Command::good1-restore"]));
  });
  test("a host key the read refused (issue #32): the resource fails at preview with the read's words at connection.hostKey, nothing registered", () => {
    const r = run(["hostkey-refused", "nic-hostkey-refused", "valid"], { preview: true, live: true });
    expect(r.messages.sort()).toEqual([
      'NetTuning "bad0": 1 invalid input:\n  - connection.hostKey does not match 198.18.31.0:22: the host presented ssh-ed25519 SHA256:presented, connection.hostKey is ssh-ed25519 SHA256:given.',
      'NicQueues "bad1": 1 invalid input:\n  - connection.hostKey does not match 198.18.31.1:22: the host presented ssh-ed25519 SHA256:presented, connection.hostKey is ssh-ed25519 SHA256:given.',
    ]);
    expect(r.paths).toEqual([["connection.hostKey"], ["connection.hostKey"]]);
    expect(r.registered.filter((x) => /::bad[01]-(apply|restore)$/.test(x))).toEqual([]);
    expect(r.registered).toEqual(expect.arrayContaining(["command:remote:Command::good2-apply", "command:remote:Command::good2-restore"]));
  });
  test("live previews off: the preview passes and says the host's own checks are still to come", () => {
    const r = run(["sysctl-missing-off"], { preview: true, live: true });
    expect(r.rejections).toBe(0);
    expect(r.logs).toContain('info: NetTuning "off0": live preview off (livePreview: false): the preview shows the plan only; the host\'s own checks (keys this kernel has, driver limits, boot-time overrides) run at `pulumi up`, before anything changes');
    expect(r.registered).toEqual(expect.arrayContaining(["command:remote:Command::off0-apply"]));
  });
});
