/**
 * A move to another address of the same machine whose new create dies (review 7, H3). The create of the new
 * generation writes the journal before its first change; until its commit (the journal write "after the commit")
 * that generation is pending (runtime.sh nt_journal_load): the older plan's restore must not treat it as "a newer
 * apply owns this machine". Each test: create at port 22, the move to port 2222 (other values) SIGKILLed after step
 * k (lab hook kill-after-step), then destroy (the old resource is the only one in state) → the true originals, the
 * host byte-identical (snapshot), by the installed engine and by the fallback program. A create killed after its
 * commit is the documented case (docs/internals.md "Reliability"): `up` again, then destroy restores.
 */
import { Stack, UpResult } from "../../testkit/harness";
import type { LabHost } from "../../testkit/lab";
import { stacksDestroyedAfterEach, useLab } from "../../testkit/jest";
import { ok, readSysctl as sysctl, snapshot } from "../../testkit/host";
import { engine } from "../../provider/host/engine";
import { clearHooks, setHooks } from "./hooks";
import { sysMoveProgram } from "./wiring";

jest.setTimeout(600000);

let h0: LabHost;
useLab("movefail", 1, async (hs) => {
  [h0] = hs;
  const r = await h0.exec("/usr/sbin/sshd -p 2222 -o PidFile=/run/sshd-2222.pid -f /etc/ssh/sshd_config -h /etc/ssh/ssh_host_ed25519_key");
  if (r.code !== 0) throw new Error(`second sshd: ${r.stderr}`);
}, () => clearHooks(h0));
const newStack = stacksDestroyedAfterEach("safety");

const E = engine();
const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_max_syn_backlog";
const at22 = () => sysMoveProgram("mf", h0.connection("root"), { sysctls: { [SOMAX]: 7801 } });
const at2222 = () => sysMoveProgram("mf", { ...h0.connection("root"), port: 2222 }, { sysctls: { [SOMAX]: 7802, [FIN]: 4121 } });
const header = async () => (await h0.exec("head -n 1 /var/lib/pulumi-net-tuning/sysctl/*.orig")).stdout.replace(/\n$/, "");
const committed = (h: string) => /^net-tuning-journal v2\t\S+\t([A-Za-z0-9-]+)$/.exec(h)?.[1];
const restoredBy = (r: UpResult) => r.runs.map((x) => /^restored-by\t(.*)$/m.exec(x.stdout ?? "")?.[1]).filter(Boolean);
const allOut = (r: UpResult) => r.runs.map((x) => `${x.stdout}\n${x.stderr}`).join("\n");

/** The move's create steps (hook "steps"), from a move that succeeds; the host is clean afterwards. */
let names: string[] = [];
beforeAll(async () => {
  const s = new Stack({ project: "safety", stack: "mf-count" });
  ok(await s.up(at22()));
  await h0.exec("rm -f /run/nt-steps");
  await setHooks(h0, ["steps /run/nt-steps"]);
  ok(await s.up(at2222()));
  await clearHooks(h0);
  ok(await s.destroy());
  names = (await h0.exec("cat /run/nt-steps")).stdout.trim().split("\n").map((l) => l.split(" ").slice(2).join(" "));
  console.log(`the move's create: ${names.map((n, i) => `${i + 1} ${n}`).join("; ")}`);
}, 300000);

/** Create at 22, the move killed after step k; returns the stack (old resource in state), the gen and the originals. */
async function killedMove(k: number) {
  const o = { [SOMAX]: await sysctl(h0, SOMAX), [FIN]: await sysctl(h0, FIN) };
  const before = await snapshot(h0);
  const stack = newStack(`mf-k${k}-${Math.random().toString(36).slice(2, 6)}`);
  ok(await stack.up(at22()));
  const g1 = committed(await header());
  expect(g1).toBeDefined();
  await setHooks(h0, [`kill-after-step ${k}`]);
  const moved = await stack.up(at2222());
  await clearHooks(h0);
  expect(moved.ok).toBe(false);
  return { stack, g1: g1!, o, before, h: await header() };
}

const commitStep = () => names.indexOf("journal after the commit") + 1;

test("the move's create has a pending journal write, changes and a commit (the steps the tests below target)", () => {
  expect(names[0]).toBe("journal before the changes");
  expect(names).toEqual(expect.arrayContaining([`set ${SOMAX}`, `set ${FIN}`, "journal after the commit"]));
  expect(commitStep()).toBeGreaterThan(3);
});

describe("killed before its commit: destroy restores the true originals (installed engine)", () => {
  // every step before the commit: k = 1 .. commit - 1 (the number is known only in beforeAll: a loop inside one test)
  test("each step k before the commit", async () => {
    const table: string[] = [];
    expect(commitStep()).toBeGreaterThan(3); // (never an empty loop)
    for (let k = 1; k < commitStep(); k++) {
      const { stack, g1, o, before, h } = await killedMove(k);
      if (names.slice(0, k).includes(`set ${SOMAX}`)) expect(await sysctl(h0, SOMAX)).toBe("7802"); // the dead create changed it
      const d = ok(await stack.destroy());
      expect(allOut(d)).not.toMatch(/restore skipped|not restoring anything/);
      expect(restoredBy(d)).toEqual([`engine ${E.fileName}`]);
      expect({ [SOMAX]: await sysctl(h0, SOMAX), [FIN]: await sysctl(h0, FIN) }).toEqual(o);
      expect(await snapshot(h0)).toBe(before);
      // the new generation was pending over g1 (the LAST field, as every fallback reads it, stayed g1)
      expect(h).toMatch(new RegExp(`^net-tuning-journal v2\\t\\S+\\tpending:[A-Za-z0-9-]+\\t${g1}$`));
      table.push(`k=${k} after "${names[k - 1]}": destroy restored`);
    }
    console.log(table.join("\n"));
  });
});

describe("killed before its commit, the installed engine gone: the fallback restores too", () => {
  test.each([1, 0])("k = %s (0: the last step before the commit)", async (kk) => {
    const k = kk || commitStep() - 1;
    const { stack, g1, o, before, h } = await killedMove(k);
    expect((await h0.exec(`rm -f /usr/local/lib/pulumi-net-tuning/${E.fileName}`)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(allOut(d)).not.toMatch(/restore skipped/);
    expect(restoredBy(d)).toEqual(["fallback"]);
    expect({ [SOMAX]: await sysctl(h0, SOMAX), [FIN]: await sysctl(h0, FIN) }).toEqual(o);
    expect(await snapshot(h0)).toBe(before);
    expect(h).toMatch(new RegExp(`\\tpending:[A-Za-z0-9-]+\\t${g1}$`));
  });
});

test("killed before its commit, then up again: the retried move commits, the old restore skips, destroy restores", async () => {
  const { stack, g1, o, before } = await killedMove(1);
  const up = ok(await stack.up(at2222()));
  expect(allOut(up)).toMatch(/not restoring anything on \S+: a newer apply of this resource \(generation \S+\) took this machine over/);
  const g3 = committed(await header());
  expect(g3).toBeDefined();
  expect(g3).not.toBe(g1);
  expect(await sysctl(h0, SOMAX)).toBe("7802");
  expect(await sysctl(h0, FIN)).toBe("4121");
  expect(up.outputs!.previous).toEqual(o); // the true originals, from the journal
  ok(await stack.destroy());
  expect({ [SOMAX]: await sysctl(h0, SOMAX), [FIN]: await sysctl(h0, FIN) }).toEqual(o);
  expect(await snapshot(h0)).toBe(before);
});

test("killed after its commit (the session lost, state knows only the old resource): up, then destroy restores", async () => {
  const { stack, g1, o, before, h } = await killedMove(commitStep());
  const g2 = committed(h);
  expect(g2).toBeDefined();
  expect(g2).not.toBe(g1); // committed: the machine is the new generation's
  ok(await stack.up(at2222()));
  ok(await stack.destroy());
  expect({ [SOMAX]: await sysctl(h0, SOMAX), [FIN]: await sysctl(h0, FIN) }).toEqual(o);
  expect(await snapshot(h0)).toBe(before);
});
