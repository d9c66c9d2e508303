/**
 * NetTuning on a full Debian guest (systemd, default sshd): host-wide keys, boot-time loading, module loading at
 * boot, boot-order conflicts, and rollback from Pulumi state — across real reboots.
 */
import { Stack } from "../../testkit/harness";
import { ensureImage, startVm, VmHost } from "../../testkit/vm";
import { get as getOn, netTuningLifecycle, ok, sysctlProgram, timingLine } from "./lifecycle";

jest.setTimeout(900_000);
let vm: VmHost;
const startedMs = Date.now();
let testsStartMs = 0;
beforeAll(async () => {
  await ensureImage("bookworm");
  vm = await startVm({ suite: "bookworm" });
  testsStartMs = Date.now();
}, 1_800_000);
afterAll(async () => {
  await vm?.stop();
  // eslint-disable-next-line no-console
  console.log(timingLine(vm, "netTuning.vm.test.ts", startedMs, testsStartMs));
}, 60_000);
const get = (key: string) => getOn(vm, key);
const program = (name: string, args: Parameters<typeof sysctlProgram>[2]) => sysctlProgram(() => vm, name, args);

describe("lifecycle (shared with the bullseye and trixie suites)", () => netTuningLifecycle(() => vm));

test("fs.file-max below systemd's LONG_MAX is flagged: a preview warning and a host warning", async () => {
  const cur = await get("fs.file-max");
  const stack = new Stack({ project: "vm", stack: "filemax" });
  const r = ok(await stack.up(program("fm", { sysctls: { "fs.file-max": 1000000 } })));
  const warnings = (r.outputs!.warnings as string[]).join("\n");
  expect(warnings).toMatch(/fs\.file-max/);
  // systemd sets fs.file-max to LONG_MAX at boot: the declared 1000000 lowers it, and both warnings say so
  expect(BigInt(cur)).toBeGreaterThan(1000000n);
  expect(warnings).toContain(`LOWERS the current ${cur}`);
  ok(await stack.destroy());
  expect(await get("fs.file-max")).toBe(cur);
});
