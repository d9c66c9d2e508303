/**
 * The files derived from the NIC spec (provider/nic/spec.ts) are what `npm run gen` writes: the args interfaces, the
 * plain value types, the host's name lists and the NicQueues argument table of docs/reference.md. A spec change without `npm run gen` fails here.
 * Also: what the generated files hold agrees with the spec and the schema (every setting, its range, its host name).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { drift, generated, NIC_ARGS_BEGIN, NIC_ARGS_END, NIC_ARGS_FILE } from "../../scripts/gen-spec";
import { nicSettingsSchema } from "../../provider/nic/schema";
import { FEATURE_SHORT_NAMES, HOST_PREFIX, NIC_GROUPS, NIC_SETTINGS, settingsOf } from "../../provider/nic/spec";

const REPO = path.resolve(__dirname, "../..");

test("the committed generated files are up to date (npm run gen)", () => {
  expect(drift()).toEqual([]);
});

test("the args interfaces: named, pulumi.Input fields, no any, no zod, a JSDoc line with the range on every field", () => {
  const text = generated()["components/nicArgs.generated.ts"];
  expect(text).not.toMatch(/zod|z\.infer/);
  const fields = text.split("\n").filter((l) => /^  \w+\??: /.test(l));
  // one field per setting, plus one per group object in NicSettingsArgs (link settings are top-level fields there)
  expect(fields.length).toBe(NIC_SETTINGS.length + 6);
  for (const f of fields) {
    expect(f).toMatch(/: pulumi\.Input<(number \| "max"|"all" \| number\[\]|"spread" \| number\[\]|number|boolean|Nic(Rings|Channels|Coalesce|Rps|IrqAffinity)|Record<string, pulumi\.Input<boolean>>)>;$/);
    expect(f).not.toMatch(/\bany\b/);
  }
  for (const s of NIC_SETTINGS.filter((x) => x.group !== "link")) expect(text).toContain(`${s.doc} Range: `);
});

test("the host's lists: every fixed-name setting and its maximum; the engine's nic kind uses them", () => {
  const sh = generated()["provider/host/sh/nicspec.sh"];
  for (const g of ["channels", "rings", "coalesce"] as const) {
    for (const s of settingsOf(g)) expect(sh).toContain(`${HOST_PREFIX[g]}${s.ethtool}`);
  }
  expect(sh).toContain("NN_MAX=1048576"); // rings
  expect(sh).toContain("generic-receive-offload) NN_ARG=gro ;;");
  const nic = fs.readFileSync(path.join(REPO, "provider/host/sh/nic.sh"), "utf8");
  // nic.sh no longer re-types the lists
  expect(nic).not.toMatch(/rx-usecs\|rx-frames/);
  expect(nic).not.toContain("generic-receive-offload) NN_ARG");
  expect(nic).not.toContain('"$NT_TMP/want.channel" "$NT_TMP/want.ring"');
});

test("the host refuses what the schema refuses: out-of-range and unknown @set values exit 5 (the lists run in dash)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nicspec-"));
  const script = path.join(dir, "t.sh");
  const nic = fs.readFileSync(path.join(REPO, "provider/host/sh/nic.sh"), "utf8");
  const setFn = nic.slice(nic.indexOf("nn_directive_set() {"), nic.indexOf("kind_directive() {"));
  fs.writeFileSync(
    script,
    [
      generated()["provider/host/sh/nicspec.sh"],
      'nt_die() { echo "die $1: $2"; exit "$1"; }',
      "nn_uint() { case \"$1\" in ''|*[!0-9]*) return 1 ;; esac; [ \"${#1}\" -le 10 ]; }",
      `NT_TMP=${dir}`,
      setFn,
      'nn_directive_set "$1"',
      "cat \"$NT_TMP/requested\"",
    ].join("\n"),
  );
  const run = (arg: string) => spawnSync("dash", [script, arg], { encoding: "utf8" });
  expect(run("ring.rx 5000000").status).toBe(5);
  expect(run("coalesce.rx-usecs 1000000000000").status).toBe(5);
  expect(run("coalesce.rx-usec 3").stdout).toContain("unknown coalescing parameter");
  expect(run("channel.combined 4097").status).toBe(5);
  expect(run("feature.gro maybe").status).toBe(5);
  const ok = run("ring.rx max");
  expect([ok.status, ok.stdout]).toEqual([0, "ring.rx\tmax\n"]);
  expect(run("coalesce.rx-usecs 4294967295").status).toBe(0);
  // the minima too (ring.rx 0 and txqueuelen 0 were accepted): every fixed-name setting with a range, at both ends
  expect(run("ring.rx 0").status).toBe(5);
  expect(run("txqueuelen 0").stdout).toContain("invalid value '0' for txqueuelen (1-1000000)");
  let sampled = 0;
  for (const g of NIC_GROUPS) {
    for (const st of settingsOf(g)) {
      if ((st.type !== "count" && st.type !== "ring") || st.min === undefined || st.max === undefined || st.arg === "flowEntriesPerQueue") continue;
      const key = HOST_PREFIX[g] ? `${HOST_PREFIX[g]}${st.ethtool}` : st.ethtool;
      expect([key, run(`${key} ${st.min}`).status, run(`${key} ${st.max}`).status, run(`${key} ${st.max + 1}`).status]).toEqual([key, 0, 0, 5]);
      if (st.min > 0) {
        expect([key, run(`${key} ${st.min - 1}`).status]).toEqual([key, 5]);
        sampled++;
      }
    }
  }
  expect(sampled).toBeGreaterThanOrEqual(5); // 4 rings and txqueuelen
  // and the same values through the schema
  expect(nicSettingsSchema.safeParse({ interface: "eth0", rings: { rx: 5000000 } }).success).toBe(false);
  expect(nicSettingsSchema.safeParse({ interface: "eth0", coalesce: { rxUsecs: 4294967295 } }).success).toBe(true);
  expect(nicSettingsSchema.safeParse({ interface: "eth0", rings: { rx: 0 } }).success).toBe(false);
  expect(nicSettingsSchema.safeParse({ interface: "eth0", txQueueLength: 0 }).success).toBe(false);
});

test("nic.sh types no feature long name: the boot script's ethtool -K short names come from the generated list", () => {
  const nic = fs.readFileSync(path.join(REPO, "provider/host/sh/nic.sh"), "utf8");
  for (const long of Object.values(FEATURE_SHORT_NAMES)) expect([long, nic.includes(long)]).toEqual([long, false]);
  // nn_boot_lines, run in dash with the generated lists: every short name, an unknown feature kept by its -k name
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nicboot-"));
  const fn = nic.slice(nic.indexOf("nn_boot_lines() {"), nic.indexOf("nn_boot_functions() {"));
  const desired = Object.values(FEATURE_SHORT_NAMES).map((l) => `eth0/feature.${l}\ton`);
  fs.writeFileSync(path.join(dir, "desired"), [...desired, "eth0/feature.rx-udp-gro-forwarding\toff", ""].join("\n"));
  const script = path.join(dir, "t.sh");
  fs.writeFileSync(script, [generated()["provider/host/sh/nicspec.sh"], `NT_TMP=${dir}`, "NT_TAB=$(printf '\\t')", fn, "nn_boot_lines"].join("\n"));
  const r = spawnSync("dash", [script], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.stdout.split("\n").filter(Boolean)).toEqual([
    ...Object.keys(FEATURE_SHORT_NAMES).map((short) => `nt_nic_run ethtool -K 'eth0' ${short} on`),
    "nt_nic_run ethtool -K 'eth0' rx-udp-gro-forwarding off",
  ]);
});

test("the reference's NicQueues table sits between its markers and names every setting; the README has no copy", () => {
  expect(NIC_ARGS_FILE).toBe("docs/reference.md");
  const page = fs.readFileSync(path.join(REPO, NIC_ARGS_FILE), "utf8");
  const a = page.indexOf(NIC_ARGS_BEGIN);
  const b = page.indexOf(NIC_ARGS_END);
  expect([a >= 0, b > a]).toEqual([true, true]);
  const table = page.slice(a, b);
  for (const s of NIC_SETTINGS) expect(table).toContain(`\`${s.arg}`);
  expect(Object.keys(generated())).toContain(NIC_ARGS_FILE);
  expect(Object.keys(generated())).not.toContain("README.md");
  expect(fs.readFileSync(path.join(REPO, "README.md"), "utf8")).not.toContain(NIC_ARGS_BEGIN);
});
