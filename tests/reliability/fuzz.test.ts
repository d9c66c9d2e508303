/**
 * Property-based fuzzing (issue #8), fast-check, bounded runs.
 *
 * 1. Round trip through procps: inputs the sysctl validator accepts (random keys from a set that is writable in
 *    a network namespace, random values in the catalogue's ranges, rendered as numbers, decimal/hex strings with
 *    random whitespace, lists as arrays or text with any whitespace) render (planSysctls) to a sysctl.d file that `sysctl -p FILE` parses back to the same
 *    values — what sysctl echoes and what the kernel reads back. Safety: `sysctl -p` runs inside a lab host (own
 *    network namespace, /proc/sys read-only outside /proc/sys/net), on per-netns keys only; the originals are written
 *    back afterwards and the host snapshot must be byte-identical.
 *    Every generated input is one the preview accepts (a refusal fails the property), in every accepted form; the
 *    kernel must read back the value the user meant, whatever the form.
 * 2. Unknown (uncatalogued) keys: every accepted form (number, padded decimal, a list with any whitespace) reads back
 *    as meant.
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
import { procPath, readSysctl, snapshot } from "../../testkit/host";

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

/** Uncatalogued per-netns keys used by the second property: single integers, and one two-value key. */
const UNKNOWN_KEYS = ["net.ipv4.tcp_reordering", "net.ipv4.tcp_retries2"];
const UNKNOWN_PAIR = "net.ipv4.ping_group_range";
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
const ALL_KEYS = [...WRITABLE, ...UNKNOWN_KEYS, UNKNOWN_PAIR];

const ws = fc.constantFrom(" ", "  ", "\t", " \t ");
const pad = fc.constantFrom("", " ", "\t", "  ", "\t ");

/**
 * A value the user could write and the preview accepts, in one of the accepted forms, with what the kernel must
 * read back (its decimal meaning, values separated by single spaces). Forms: a number; decimal text with padding;
 * hex text (catalogued keys: the plan writes its decimal value); a list as an array or as text with any whitespace
 * (the kernel reads lists back tab-separated, so the host must compare them canonically).
 */
type Generated = { input: unknown; expected: string; form: string };
function valueFor(key: string): fc.Arbitrary<Generated> {
  const e = CATALOGUE[key];
  if (e.type === "string") {
    // reno is built in and always allowed: settable in any netns (cubic or bbr may not be allowed there)
    return fc.constantFrom("reno", " reno", "reno\t", "\t reno  ").map((input) => ({ input, expected: "reno", form: input === "reno" ? "name" : "padded name" }));
  }
  if (e.type === "multi") {
    const lo = key === "net.ipv4.ip_local_port_range" ? 1024 : e.elementMin ?? 1; // below 1024 the kernel refuses (warned at preview)
    const hi = Math.min(e.elementMax ?? 2147483647, 2147483647);
    return fc
      .tuple(fc.array(fc.integer({ min: lo, max: hi }), { minLength: e.arity!, maxLength: e.arity! }), fc.boolean(), fc.array(ws, { minLength: e.arity!, maxLength: e.arity! }), pad, pad)
      .map(([xs, asArray, seps, a, b]) => {
        const sorted = [...xs].sort((x, y) => x - y);
        const expected = sorted.join(" ");
        if (asArray) return { input: sorted, expected, form: "array" };
        return { input: a + sorted.map((x, i) => (i ? seps[i] : "") + String(x)).join("") + b, expected, form: "list text" };
      });
  }
  const min = e.min ?? 0;
  const max = e.max ?? 2147483647;
  // tcp_fastopen is a set of flags: only combinations of the documented ones are accepted.
  const number = key === "net.ipv4.tcp_fastopen"
    ? fc.subarray([0x1, 0x2, 0x4, 0x200, 0x400]).map((bits) => bits.reduce((x, y) => x | y, 0))
    : fc.integer({ min, max });
  return fc.tuple(number, fc.constantFrom("number", "decimal", "padded decimal", "hex"), pad, pad).map(([n, form, a, b]) => {
    const expected = String(n);
    if (form === "number" || (form === "hex" && n < 0)) return { input: n, expected, form: "number" };
    if (form === "decimal") return { input: String(n), expected, form };
    if (form === "padded decimal") return { input: `${a}${n}${b}`, expected, form };
    return { input: `${a}0x${n.toString(16)}${b}`, expected, form };
  });
}

/** Accepted sysctls (several keys, random forms) and what the kernel must read back for each. */
const sysctlInput = fc
  .uniqueArray(fc.constantFrom(...WRITABLE), { minLength: 1, maxLength: 8 })
  .chain((keys) => fc.tuple(...keys.map((k) => valueFor(k).map((g) => [k, g] as const))))
  .map((pairs) => ({
    sysctls: Object.fromEntries(pairs.map(([k, g]) => [k, g.input])) as Record<string, unknown>,
    expected: Object.fromEntries(pairs.map(([k, g]) => [k, g.expected])) as Record<string, string>,
    forms: pairs.map(([, g]) => g.form),
  }));

let originals = "";
async function saveOriginals(): Promise<void> {
  const r = await host.exec(ALL_KEYS.map((k) => `printf '%s\\t%s\\n' '${procPath(k)}' "$(cat ${procPath(k)})"`).join("; "));
  expect(r.code).toBe(0);
  originals = r.stdout;
}
async function restoreOriginals(): Promise<void> {
  const r = await host.exec(`while IFS="$(printf '\\t')" read -r p v; do printf '%s\\n' "$v" > "$p" || exit 1; done`, { stdin: originals });
  expect(r.code).toBe(0);
}

/** Loads a sysctl.d file with `sysctl -p` on the host; returns sysctl's exit status, its echo and the kernel's values. */
async function load(fileContent: string, keys: string[]): Promise<{ rc: string; stderr: string; echoed: string[]; readBack: Record<string, string> }> {
  const script = `f=$(mktemp /tmp/fuzz.XXXXXX) && cat > "$f" && sysctl -p "$f"; rc=$?; rm -f "$f"; echo "rc=$rc"; ` +
    keys.map((k) => `printf 'read %s = %s\\n' '${k}' "$(tr '\\t' ' ' < ${procPath(k)})"`).join("; ");
  const r = await host.exec(script, { stdin: fileContent });
  const lines = r.stdout.split("\n");
  return {
    rc: lines.find((l) => l.startsWith("rc=")) ?? "no rc",
    stderr: r.stderr,
    echoed: lines.filter((l) => /^[a-z]/.test(l) && !l.startsWith("read ") && !l.startsWith("rc=")),
    readBack: Object.fromEntries(lines.filter((l) => l.startsWith("read ")).map((l) => l.slice(5).split(" = ")).map(([k, v]) => [k, v.trim().split(/\s+/).join(" ")])),
  };
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
    const r = await host.exec(ALL_KEYS.map((k) => `test -w ${procPath(k)} || echo "not writable: ${k}"`).join("; "));
    expect(r.stdout).toBe("");
  });

  test("every generated input passes preview; its file makes sysctl -p echo, and the kernel read back, the intended values", async () => {
    const forms = new Set<string>();
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(sysctlInput, async ({ sysctls, expected, forms: f }) => {
        runs++;
        f.forEach((x) => forms.add(x));
        const plan = planSysctls({ owner, name: "x", sysctls }); // a refusal here fails the property: the generator makes only accepted forms
        expect(plan.values).toEqual(expected);
        const keys = Object.keys(plan.values); // the file's order
        const r = await load(plan.fileContent, keys);
        expect({ rc: r.rc, stderr: r.stderr }).toEqual({ rc: "rc=0", stderr: "" });
        expect(r.echoed).toEqual(keys.map((k) => `${k} = ${expected[k]}`));
        expect(r.readBack).toEqual(expected);
      }),
      { numRuns: 80, seed: 8008 },
    );
    expect(runs).toBe(80);
    // Every form reached the host.
    expect([...forms].sort()).toEqual(["array", "decimal", "hex", "list text", "name", "number", "padded decimal", "padded name"]);
  });

  test("uncatalogued keys: every accepted form (number, decimal text with padding, a list with any whitespace) reads back as meant", async () => {
    // The plan keeps an uncatalogued key's text (trimmed); the kernel parses it: the read-back is the canonical form.
    const single = fc.tuple(fc.constantFrom(...UNKNOWN_KEYS), fc.integer({ min: 3, max: 15 }), fc.constantFrom("number", "decimal", "padded"), pad, pad)
      .map(([k, n, form, a, b]) => ({ k, input: form === "number" ? n : form === "decimal" ? String(n) : `${a}${n}${b}`, expected: String(n), form }));
    const pair = fc.tuple(fc.integer({ min: 0, max: 2147483647 }), fc.integer({ min: 0, max: 2147483647 }), ws, pad, pad)
      .map(([x, y, sep, a, b]) => {
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        return { k: UNKNOWN_PAIR, input: `${a}${lo}${sep}${hi}${b}`, expected: `${lo} ${hi}`, form: "list text" };
      });
    const forms = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.oneof(single, pair), async ({ k, input, expected, form }) => {
        forms.add(form);
        const plan = planSysctls({ owner, name: "x", sysctls: { [k]: input } });
        const r = await load(plan.fileContent, [k]);
        expect({ key: k, input, rc: r.rc, stderr: r.stderr, kernel: r.readBack[k] }).toEqual({ key: k, input, rc: "rc=0", stderr: "", kernel: expected });
      }),
      { numRuns: 30, seed: 4242 },
    );
    expect([...forms].sort()).toEqual(["decimal", "list text", "number", "padded"]);
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
  | { kind: "sysctl"; name: string; project: string; stack: string; sysctls: Record<string, unknown>; expected: Record<string, string>; fileName?: string }
  | { kind: "nic"; name: string; project: string; stack: string; iface: string; txq?: number; features?: Record<string, boolean> };

const remoteSysctl: fc.Arbitrary<Remote> = fc
  .record({
    name: nastyName, project: nastyProjectStack, stack: nastyProjectStack, fileName: sysFileName,
    known: sysctlInput, extraKey: fc.option(unknownKey, { nil: undefined }), extraValue: unknownValue,
  })
  .map(({ name, project, stack, fileName, known, extraKey, extraValue }) => ({
    kind: "sysctl" as const, name, project, stack, fileName,
    sysctls: extraKey ? { ...known.sysctls, [extraKey]: extraValue } : known.sysctls,
    expected: known.expected,
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

/** The STRAY listing, polled (at most 3 s) until it matches: a closed session's sshd process exits asynchronously. */
async function strayNow(expected: string): Promise<string> {
  let now = "";
  for (let i = 0; i < 30; i++) {
    now = (await host.exec(STRAY)).stdout;
    if (now === expected) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return now;
}

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
          if (r.kind === "sysctl") return { applied: new NetTuning(r.name, { connection: host.connection(), sysctls: r.sysctls as never, fileName: r.fileName }).applied };
          return { applied: new NicQueues(r.name, { connection: host.connection(), interface: r.iface, txQueueLength: r.txq, features: r.features, persistence: "rc.local" }).applied };
        };
        const up = await stack.up(program);
        if (up.ok) {
          applied++;
          if (r.kind === "sysctl") {
            // The host program compared what it read back canonically: the report and the kernel hold the values meant.
            expect(up.outputs!.applied).toEqual(r.expected);
            const kernel: Record<string, string> = {};
            for (const k of Object.keys(r.expected)) kernel[k] = await readSysctl(host, k);
            expect(kernel).toEqual(r.expected);
          }
        } else expect(up.runs.map((x) => x.exitCode)).toEqual([2]); // refused by the preflight, never a crash (1/5) or a hang
        const d = await stack.destroy();
        expect(d.error).toBeUndefined();
        expect(await strayNow(stray)).toBe(stray);
        expect(await snapshot(host)).toBe(before);
      }),
      { numRuns: 40, seed: 1234, endOnFailure: true },
    );
    expect(runs).toBe(40);
    expect(applied).toBeGreaterThan(5);
  });
});
