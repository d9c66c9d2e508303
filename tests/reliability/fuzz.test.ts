/**
 * Property-based fuzzing (issue #8), fast-check, bounded runs.
 *
 * 1. Round trip through procps: every input the sysctl validator accepts (random keys from a set that is writable in
 *    a network namespace, random values in the catalogue's ranges, rendered as numbers, decimal/hex strings with
 *    random whitespace or lists) renders (planSysctls) to a sysctl.d file that `sysctl -p FILE` parses back to the same
 *    values — what sysctl echoes and what the kernel reads back. Safety: `sysctl -p` runs inside a lab host (own
 *    network namespace, /proc/sys read-only outside /proc/sys/net), on per-netns keys only; the originals are written
 *    back afterwards and the host snapshot must be byte-identical.
 * 2. Unknown (uncatalogued) keys: accepted numeric text must also read back unchanged.
 * 3. Generated host programs run on a lab host with random accepted, nasty-but-valid inputs (resource/project/stack
 *    names, file names, unknown keys and values starting with "-", interface names such as "-h", "...", "a@b"): no stray
 *    files in /, /tmp, /root, no stray processes, and after destroy the host is byte-identical.
 */
import fc from "fast-check";
import { CATALOGUE } from "../../provider/sysctl/catalogue";
import { planSysctls } from "../../provider/sysctl/plan";
import { planNic } from "../../provider/nic/plan";
import { InputError } from "../../provider/errors";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { procPath, snapshot } from "../../testkit/host";

jest.setTimeout(600000);

let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "fuzz" });
  host = lab.hosts[0];
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

const owner = { label: "rel/fuzz/x", id: "rel.fuzz.x-00000000" };

/** Uncatalogued per-netns keys used by the second property. */
const UNKNOWN_KEYS = ["net.ipv4.tcp_reordering", "net.ipv4.tcp_retries2"];
/** Catalogued per-netns keys writable inside a lab host (checked in the first test). */
const WRITABLE = [
  "net.core.somaxconn", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_max_syn_backlog",
  "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_tw_reuse",
  "net.ipv4.tcp_syncookies", "net.ipv4.tcp_sack", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_window_scaling",
  "net.ipv4.tcp_mtu_probing", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_notsent_lowat", "net.ipv4.tcp_slow_start_after_idle",
  "net.ipv4.tcp_autocorking", "net.ipv4.tcp_max_tw_buckets", "net.ipv4.tcp_fastopen", "net.ipv4.tcp_ecn", "net.ipv4.tcp_syn_retries",
  "net.ipv4.tcp_synack_retries", "net.ipv4.udp_rmem_min", "net.ipv4.udp_wmem_min", "net.ipv4.tcp_no_metrics_save",
  "net.ipv4.tcp_moderate_rcvbuf", "net.ipv4.tcp_abort_on_overflow", "net.ipv4.ip_forward", "net.ipv4.tcp_congestion_control",
  "net.ipv4.tcp_adv_win_scale",
];
const path = procPath;

const ws = fc.constantFrom(" ", "  ", "\t", " \t ");
const pad = fc.constantFrom("", " ", "\t", "  ");

/** A value the user could write for a catalogued key, in one of the accepted shapes. */
function valueFor(key: string): fc.Arbitrary<unknown> {
  const e = CATALOGUE[key];
  if (e.type === "string") return fc.constant("reno"); // built in and never restricted: settable in any netns (cubic may not be allowed there)
  if (e.type === "multi") {
    const lo = key === "net.ipv4.ip_local_port_range" ? 1024 : e.elementMin ?? 1; // below 1024 the kernel refuses (warned at preview)
    const hi = Math.min(e.elementMax ?? 2147483647, 2147483647);
    return fc
      .tuple(fc.array(fc.integer({ min: lo, max: hi }), { minLength: e.arity!, maxLength: e.arity! }), fc.boolean(), fc.array(ws, { minLength: e.arity!, maxLength: e.arity! }), pad, pad)
      .map(([xs, asArray, seps, a, b]) => {
        const sorted = [...xs].sort((x, y) => x - y);
        return asArray ? sorted : a + sorted.map((x, i) => (i ? seps[i] : "") + String(x)).join("") + b;
      });
  }
  const min = e.min ?? 0;
  const max = e.max ?? 2147483647;
  return fc.tuple(fc.integer({ min, max }), fc.constantFrom("number", "decimal", "hex"), pad, pad).map(([n, form, a, b]) => {
    if (form === "number" || (form === "hex" && n < 0)) return n;
    if (form === "decimal") return `${a}${n}${b}`;
    return `${a}0x${n.toString(16)}${b}`;
  });
}

const sysctlInput = fc
  .uniqueArray(fc.constantFrom(...WRITABLE), { minLength: 1, maxLength: 8 })
  .chain((keys) => fc.tuple(...keys.map((k) => valueFor(k).map((v) => [k, v] as const))))
  .map((pairs) => Object.fromEntries(pairs) as Record<string, unknown>);

let originals = "";
async function saveOriginals(): Promise<void> {
  const r = await host.exec([...WRITABLE, ...UNKNOWN_KEYS].map((k) => `printf '%s\\t%s\\n' '${path(k)}' "$(cat ${path(k)})"`).join("; "));
  expect(r.code).toBe(0);
  originals = r.stdout;
}
async function restoreOriginals(): Promise<void> {
  const r = await host.exec(`while IFS="$(printf '\\t')" read -r p v; do printf '%s\\n' "$v" > "$p" || exit 1; done`, { stdin: originals });
  expect(r.code).toBe(0);
}

describe("sysctl -p round trip (inside a lab host's network namespace)", () => {
  let before: string;
  beforeAll(async () => {
    before = await snapshot(host);
    await saveOriginals();
  });
  afterAll(async () => {
    await restoreOriginals();
    expect(await snapshot(host)).toBe(before);
  });

  test("every key of the fuzzed set is per-netns and writable in a lab host", async () => {
    const r = await host.exec([...WRITABLE, ...UNKNOWN_KEYS].map((k) => `test -w ${path(k)} || echo "not writable: ${k}"`).join("; "));
    expect(r.stdout).toBe("");
  });

  test("accepted input → planSysctls file → sysctl -p echoes and the kernel reads back exactly the planned values", async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(sysctlInput, async (sysctls) => {
        let plan;
        try {
          plan = planSysctls({ owner, name: "x", sysctls });
        } catch (e) {
          if (e instanceof InputError) return; // refused: nothing to round-trip (the catalogue's own tests cover why)
          throw e;
        }
        accepted++;
        const keys = Object.keys(plan.values);
        const script = `f=$(mktemp /tmp/fuzz.XXXXXX) && cat > "$f" && sysctl -p "$f"; rc=$?; rm -f "$f"; echo "rc=$rc"; ` +
          keys.map((k) => `printf 'read %s = %s\\n' '${k}' "$(cat ${path(k)} | tr '\\t' ' ')"`).join("; ");
        const r = await host.exec(script, { stdin: plan.fileContent });
        const lines = r.stdout.split("\n");
        expect({ rc: lines.find((l) => l.startsWith("rc=")), stderr: r.stderr }).toEqual({ rc: "rc=0", stderr: "" });
        const echoed = lines.filter((l) => /^[a-z]/.test(l) && !l.startsWith("read ") && !l.startsWith("rc="));
        expect(echoed).toEqual(keys.map((k) => `${k} = ${plan.values[k]}`));
        const readBack = Object.fromEntries(lines.filter((l) => l.startsWith("read ")).map((l) => l.slice(5).split(" = ")).map(([k, v]) => [k, v.trim().split(/\s+/).join(" ")]));
        expect(readBack).toEqual(plan.values);
      }),
      { numRuns: 80, seed: 8008 },
    );
    expect(accepted).toBeGreaterThan(40);
  });

  test("unknown keys: accepted numeric text reads back unchanged (as it does for catalogued keys)", async () => {
    // net.ipv4.tcp_reordering and net.ipv4.tcp_retries2 are not catalogued; the kernel parses their text with base 0.
    const unknown = fc.tuple(
      fc.constantFrom(...UNKNOWN_KEYS),
      fc.integer({ min: 3, max: 15 }),
      fc.constantFrom("decimal", "leading-zero", "hex"),
    ).map(([k, n, form]) => ({ k, text: form === "decimal" ? String(n) : form === "hex" ? `0x${n.toString(16)}` : `0${n}` }));
    await fc.assert(
      fc.asyncProperty(unknown, async ({ k, text }) => {
        let plan;
        try {
          plan = planSysctls({ owner, name: "x", sysctls: { [k]: text } });
        } catch (e) {
          if (e instanceof InputError) return; // refusing "010" at preview (like catalogued keys) is fine
          throw e;
        }
        const r = await host.exec(`f=$(mktemp /tmp/fuzz.XXXXXX) && cat > "$f" && sysctl -q -p "$f"; rm -f "$f"; cat ${path(k)}`, { stdin: plan.fileContent });
        expect({ key: k, input: text, planned: plan.values[k], kernel: r.stdout.trim() }).toEqual({ key: k, input: text, planned: plan.values[k], kernel: plan.values[k] });
      }),
      { numRuns: 30, seed: 4242 },
    );
  });
});

// ------------------------------------------------------------------------------------------ remote programs

/** Nasty but valid: every one of these passes validation (checked by the generators' filter). */
const NASTY_NAMES = ["x", "-rf", "a b", "$HOME", "x;y", "`id`", "$(id)", "a'b\"c", "../..", "a\nb", "--help", "*", "%s%n", "\\", "é漢字"];
const nastyName = fc.oneof(fc.constantFrom(...NASTY_NAMES), fc.string({ minLength: 1, maxLength: 20 }));
const nastyProjectStack = fc.constantFrom("rel", "p-1", "a.b", "x_y");
const sysFileName = fc.constantFrom(undefined, "90-a.conf", "a..b.conf", "9-.-_.conf", "99-zz.conf.conf", "0.conf");
/** Values accepted for uncatalogued keys (absent on the host: the preflight refuses them, nothing changes). */
const unknownValue = fc.constantFrom("-w", "--system", "1 -p", "-a -r", ":", "+", "a,b", "-e kernel.panic", "x.y-z_1", "0x1f");
const unknownKey = fc.constantFrom("net.ipv4.nt_fuzz_missing", "net.ipv4.conf.all.nt-fuzz", "net.core.nt_fuzz/x", "net/ipv4/nt_fuzz");

type Remote =
  | { kind: "sysctl"; name: string; project: string; stack: string; sysctls: Record<string, unknown>; fileName?: string }
  | { kind: "nic"; name: string; project: string; stack: string; iface: string; txq?: number; features?: Record<string, boolean> };

const remoteSysctl: fc.Arbitrary<Remote> = fc
  .record({
    name: nastyName, project: nastyProjectStack, stack: nastyProjectStack, fileName: sysFileName,
    known: sysctlInput, extraKey: fc.option(unknownKey, { nil: undefined }), extraValue: unknownValue,
  })
  .map(({ name, project, stack, fileName, known, extraKey, extraValue }) => ({
    kind: "sysctl" as const, name, project, stack, fileName,
    sysctls: extraKey ? { ...known, [extraKey]: extraValue } : known,
  }));

const remoteNic: fc.Arbitrary<Remote> = fc
  .record({
    name: nastyName, project: nastyProjectStack, stack: nastyProjectStack,
    iface: fc.constantFrom("eth0", "eth0", "-h", "--help", "...", "a@b", "+x", "-s", "eth0.5"),
    txq: fc.option(fc.integer({ min: 1, max: 1000000 }), { nil: undefined }),
    features: fc.option(fc.dictionary(fc.constantFrom("gro", "tso", "gso", "rx-gro-list", "-x", "a-b_c"), fc.boolean(), { maxKeys: 3 }), { nil: undefined }),
  })
  .map((r) => ({ kind: "nic" as const, ...r }));

function accepted(r: Remote): boolean {
  const o = { label: `${r.project}/${r.stack}/${r.name}`, id: "x-00000000" };
  try {
    if (r.kind === "sysctl") planSysctls({ owner: o, name: r.name, sysctls: r.sysctls, fileName: r.fileName });
    else planNic({ owner: o, name: r.name, interface: r.iface, txQueueLength: r.txq, features: r.features, persistence: "rc.local" });
    return true;
  } catch (e) {
    if (e instanceof InputError) return false;
    throw e;
  }
}

/** /, /tmp, /root, /var/tmp, /dev/shm listings and the process list (minus our own probe). */
const STRAY = `ls -A / /tmp /root /var/tmp /dev/shm /etc/sysctl.d /usr/local 2>&1; ps -eo comm= | grep -v -x -e ps -e sh -e grep -e sort -e ls | sort`;

describe("host programs with random nasty-but-valid inputs execute nothing taken from a value", () => {
  test("random NetTuning and NicQueues inputs: no stray files or processes; destroy leaves the host byte-identical", async () => {
    const before = await snapshot(host);
    const stray = (await host.exec(STRAY)).stdout;
    let runs = 0;
    let applied = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(remoteSysctl, remoteNic).filter(accepted), async (r) => {
        runs++;
        const stack = new Stack({ project: r.project, stack: r.stack });
        const program = () => {
          if (r.kind === "sysctl") new NetTuning(r.name, { connection: host.connection(), sysctls: r.sysctls as never, fileName: r.fileName });
          else new NicQueues(r.name, { connection: host.connection(), interface: r.iface, txQueueLength: r.txq, features: r.features, persistence: "rc.local" });
        };
        const up = await stack.up(program);
        if (up.ok) applied++;
        else expect(up.runs.map((x) => x.exitCode)).toEqual([2]); // refused by the preflight, never a crash (1/5) or a hang
        const d = await stack.destroy();
        expect(d.error).toBeUndefined();
        expect((await host.exec(STRAY)).stdout).toBe(stray);
        expect(await snapshot(host)).toBe(before);
      }),
      { numRuns: 40, seed: 1234, endOnFailure: true },
    );
    expect(runs).toBe(40);
    expect(applied).toBeGreaterThan(5);
  });
});
