/**
 * Child process of the program-scale benchmark (one measurement per process, so peak RSS is that of one run):
 *   node -r ts-node/register/transpile-only bench/scale-child.ts <components|bare|bare-same> <hosts>
 * Evaluates the program under the harness's setMocks `capture` and prints one JSON line:
 * { variant, hosts, resources, wallMs, maxRssKB, rssBeforeKB }.
 * components: per host one NetTuning (the 40 keys) + one NicQueues (features, txqueuelen, RPS, rc.local).
 * bare: per host the same four command:remote:Command resources without the components (and without the engine
 * deliveries): the same command lines and the same plan-only stdin texts (the restore's stdin cut before its
 * "@program", in its plain form), taken from a one-host components evaluation done before the clock starts, made distinct per host so
 * that nothing is shared that the components would not share.
 * Every `-apply` Command gets, as its stdout, the report the engine printed for the same resource on a lab host
 * (bench/fixtures/reports.json: originals, generation, "host gzip base64"), so each restore stdin holds the originals
 * and the gzip|base64 program as after a real create.
 * bare-same: the bare Commands plus, per host, the resources the components add (the engine delivery, a CopyToRemote
 * of the engine file shared by both resources, and two empty ComponentResources as the Commands' parents): the SDK's
 * own cost of the same resource graph, without validation, rendering or Output chains.
 */
import * as async_hooks from "async_hooks";
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { capture } from "../testkit/harness";
import { netTuningSysctls } from "./keys";
import * as fs from "fs";
import * as path from "path";
import * as v8 from "v8";

/**
 * The package as users run it: the compiled JavaScript as published, without source maps (.bench-dist/, which
 * bench/scale.ts builds and copies first), loaded by a TypeScript program (this file) under ts-node as Pulumi runs one;
 * SCALE_LIB=source loads the TypeScript sources instead, SCALE_LIB=dist the built dist/ with its maps (for profiling).
 */
const LIB = process.env.SCALE_LIB === "source" ? ".." : process.env.SCALE_LIB === "dist" ? "../dist" : "../.bench-dist";
/* eslint-disable @typescript-eslint/no-var-requires */
const { NetTuning } = require(`${LIB}/components/netTuning`) as typeof import("../components/netTuning");
const { NicQueues } = require(`${LIB}/components/nicQueues`) as typeof import("../components/nicQueues");
const { engine, enginePath } = require(`${LIB}/provider/host/engine`) as typeof import("../provider/host/engine");
const { readRestoreStdin } = require(`${LIB}/provider/host/programs`) as typeof import("../provider/host/programs");
/* eslint-enable @typescript-eslint/no-var-requires */

const REPORTS = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", "reports.json"), "utf8")) as { sysctl: string; nic: string };
/** The host's answer to each -apply Command (its stdout), by child name. */
const outputsOf = (r: { name: string; type: string }) =>
  r.type === "command:remote:Command" && r.name.endsWith("-apply") ? { stdout: r.name.endsWith("-nic-apply") ? REPORTS.nic : REPORTS.sysctl, stderr: "" } : undefined;

const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n".repeat(5) + "-----END OPENSSH PRIVATE KEY-----\n";
const conn = (i: number) => ({ host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 22, user: "root", privateKey: KEY });

/**
 * Profiling hooks (not part of the method; inert unless set). The evaluation under mocks runs as one chain of
 * microtasks (no timer fires), so they count custom-resource registrations: SCALE_MEM_EVERY=<n> logs RSS and heap to
 * stderr every n registrations; SCALE_HEAP_SNAPSHOT_AT=<n> writes a heap snapshot (v8.writeHeapSnapshot, to
 * SCALE_HEAP_SNAPSHOT or the working directory) at the n-th.
 */
function profiled(f: typeof outputsOf): typeof outputsOf {
  const every = Number(process.env.SCALE_MEM_EVERY ?? 0);
  const snapAt = Number(process.env.SCALE_HEAP_SNAPSHOT_AT ?? 0);
  if (!every && !snapAt) return f;
  let n = 0;
  return (r) => {
    n++;
    if (every && n % every === 0) {
      const m = process.memoryUsage();
      process.stderr.write(`registrations ${n}: rss ${Math.round(m.rss / 1048576)} MB, heap used ${Math.round(m.heapUsed / 1048576)} MB\n`);
    }
    if (n === snapAt) process.stderr.write(`heap snapshot ${v8.writeHeapSnapshot(process.env.SCALE_HEAP_SNAPSHOT)}\n`);
    return f(r);
  };
}

async function main(): Promise<void> {
  const [variant, hostsArg] = process.argv.slice(2);
  const hosts = Number(hostsArg);
  if (!["components", "bare", "bare-same"].includes(variant) || !(hosts >= 1 && hosts <= 100_000)) throw new Error("usage: scale-child <components|bare> <hosts>");
  const sysctls = netTuningSysctls();
  const components = (n: number) => () => {
    for (let i = 0; i < n; i++) {
      const connection = conn(i);
      new NetTuning(`h${i}`, { connection, sysctls, fileName: "90-bench.conf" });
      new NicQueues(`h${i}-nic`, { connection, interface: "eth0", features: { gro: true }, txQueueLength: 5000, rps: { cpus: "all", flowEntriesPerQueue: 4096 }, persistence: "rc.local" });
    }
  };
  // Both variants load the same modules and run one warm-up evaluation (one host) before the clock starts.
  const one = await capture(components(1), { project: "bench", stack: "scale", outputsOf });
  if (one.error) throw one.error;
  const templates = one.resources
    .filter((r) => r.type === "command:remote:Command")
    .map((r) => ({ name: r.name.replace(/^h0/, ""), create: r.inputs.create, update: r.inputs.update, delete: r.inputs.delete, stdin: readRestoreStdin(String(r.inputs.stdin ?? "")).split("\n@program\n")[0] + "\n", restore: r.name.endsWith("-restore") }));
  if (templates.length !== 4) throw new Error(`expected 4 commands per host, got ${templates.length}`);
  // the engine deliveries: one per host, shared by both resources (a stack-level resource, components/delivery.ts)
  const copies = one.resources.filter((r) => r.type === "command:remote:CopyToRemote").map((r) => ({ remotePath: String(r.inputs.remotePath) }));
  if (copies.length !== 1) throw new Error(`expected 1 engine delivery per host, got ${copies.length}`);
  const file = enginePath(engine());
  const bare = (n: number, same: boolean) => () => {
    for (let i = 0; i < n; i++) {
      const connection = conn(i);
      const parents = new Map<string, pulumi.ComponentResource>();
      if (same) {
        for (const c of ["", "-nic"]) parents.set(c, new pulumi.ComponentResource(c ? "net-tuning:index:NicQueues" : "net-tuning:index:NetTuning", `h${i}${c}`, {}));
        for (const c of copies) new command.remote.CopyToRemote(`net-tuning-engine-h${i}`, { connection, source: new pulumi.asset.FileAsset(file), remotePath: c.remotePath });
      }
      for (const t of templates) {
        const parent = parents.get(t.name.startsWith("-nic") ? "-nic" : "");
        new command.remote.Command(`h${i}${t.name}`, {
          connection,
          create: t.create as string | undefined,
          update: t.update as string | undefined,
          delete: t.delete as string | undefined,
          stdin: `${t.stdin}# h${i}\n`,
          // as the components give them: a delete-only command has no previous output to add
          ...(t.restore ? {} : { addPreviousOutputInEnv: false }),
          logging: "stderr",
        }, parent ? { parent } : undefined);
      }
    }
  };
  // Profiling hook (inert unless set; it slows the run, so its figures are not the method's): SCALE_COUNT=1 counts,
  // over the measured evaluation, the SDK's debuggablePromise calls (each captures a stack trace) and every promise
  // created (async_hooks), printed to stderr: `node -r ts-node/register/transpile-only bench/scale-child.ts <variant> 10`.
  const counts = process.env.SCALE_COUNT ? countSdkPromises() : undefined;
  if (global.gc) global.gc();
  const cpu0 = process.cpuUsage();
  const rssBeforeKB = Math.round(process.memoryUsage().rss / 1024);
  const t0 = process.hrtime.bigint();
  const r = await capture(variant === "components" ? components(hosts) : bare(hosts, variant === "bare-same"), { project: "bench", stack: "scale", outputsOf: profiled(outputsOf) });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (counts) process.stderr.write(`${variant} × ${hosts}: ${counts.stop()}\n`);
  if (r.error) throw r.error;
  const maxRssKB = process.resourceUsage().maxRSS;
  // profiling hook (inert unless set): a heap snapshot of what the evaluation retains once it is over
  if (process.env.SCALE_HEAP_SNAPSHOT_END) process.stderr.write(`heap snapshot ${v8.writeHeapSnapshot(process.env.SCALE_HEAP_SNAPSHOT_END)}\n`);
  const c = process.cpuUsage(cpu0);
  const cpuMs = (c.user + c.system) / 1000;
  // Profiling/verification hook (not part of the method): SCALE_DUMP=<file> writes every registered resource (inputs,
  // outputs, dependencies, options), sorted by URN, after the measurement, to compare a change byte for byte.
  if (process.env.SCALE_DUMP) {
    const rows = r.resources
      .map((x) => ({ urn: x.urn, type: x.type, parent: x.parent, inputs: x.inputs, secretInputs: x.secretInputs, outputs: x.outputs, dependencies: [...x.dependencies].sort(), propertyDependencies: Object.fromEntries(Object.entries(x.propertyDependencies).sort().map(([k, v]) => [k, [...v].sort()])), options: { ...x.options, dependsOn: [...x.options.dependsOn].sort() } }))
      .sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
    fs.writeFileSync(process.env.SCALE_DUMP, rows.map((x) => JSON.stringify(x)).join("\n") + "\n");
  }
  process.stdout.write(JSON.stringify({ variant, hosts, resources: r.resources.length, wallMs, cpuMs, maxRssKB, rssBeforeKB }) + "\n");
}

/** Starts counting the SDK's debuggablePromise calls and all promises; stop() ends it and returns the counts. */
function countSdkPromises(): { stop(): string } {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const debuggable = require("@pulumi/pulumi/runtime/debuggable") as { debuggablePromise: (...a: unknown[]) => unknown };
  const original = debuggable.debuggablePromise;
  let traced = 0;
  let promises = 0;
  // the SDK's modules call it as a property of this exports object, so replacing the property reaches every call
  debuggable.debuggablePromise = (...a: unknown[]) => (traced++, original(...a));
  const hook = async_hooks.createHook({ init: (_id, type) => void (type === "PROMISE" && promises++) }).enable();
  return {
    stop() {
      hook.disable();
      debuggable.debuggablePromise = original;
      return `debuggablePromise (a stack trace each) ${traced}, promises ${promises}`;
    },
  };
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
