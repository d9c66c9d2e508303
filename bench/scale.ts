/** 3. Program scale: components vs bare Commands under setMocks, one child process per measurement, alternating. */
import * as fs from "fs";
import * as path from "path";
import { run } from "./lib";

export interface ScaleSample {
  variant: "components" | "bare" | "bare-same";
  hosts: number;
  repeat: number;
  ok: boolean;
  resources: number;
  wallMs: number;
  /** CPU time (user + system) of the evaluation, ms: less sensitive than wall time to the other load on the machine */
  cpuMs?: number;
  maxRssKB: number;
  rssBeforeKB: number;
  note?: string;
}

export async function scaleBench(opts: { hosts: number; repeats: number; timeoutMs: number; log: (s: string) => void }): Promise<ScaleSample[]> {
  const out: ScaleSample[] = [];
  const root = path.resolve(__dirname, "..");
  // the components as users run them: the compiled package as published (package.json "files": dist/ without its
  // source maps), copied to .bench-dist/ inside the repository (so that it resolves the same node_modules)
  const build = await run("npm", ["run", "build"], { cwd: root, timeoutMs: 300_000 });
  if (build.code !== 0) throw new Error(`scale: npm run build failed: ${build.stderr.slice(-2000)}`);
  fs.rmSync(path.join(root, ".bench-dist"), { recursive: true, force: true });
  fs.cpSync(path.join(root, "dist"), path.join(root, ".bench-dist"), { recursive: true, filter: (src) => !src.endsWith(".map") });
  opts.log("scale: built the package (npm run build) and copied dist/ without source maps to .bench-dist/ for the components variant");
  for (let rep = 0; rep < opts.repeats; rep++) {
    const all: ScaleSample["variant"][] = ["components", "bare", "bare-same"];
    const order = all.map((_, i) => all[(i + rep) % all.length]); // rotated per repeat
    for (const variant of order) {
      const r = await run(process.execPath, ["--expose-gc", "-r", "ts-node/register/transpile-only", "bench/scale-child.ts", variant, String(opts.hosts)], {
        cwd: root, timeoutMs: opts.timeoutMs, env: { ...process.env, NODE_OPTIONS: "", TS_NODE_PROJECT: path.join(root, "tsconfig.dev.json") },
      });
      const line = r.stdout.trim().split("\n").pop() ?? "";
      let s: ScaleSample;
      try {
        const j = JSON.parse(line) as Omit<ScaleSample, "repeat" | "ok">;
        s = { ...j, repeat: rep, ok: r.code === 0 };
      } catch {
        s = { variant, hosts: opts.hosts, repeat: rep, ok: false, resources: 0, wallMs: NaN, maxRssKB: NaN, rssBeforeKB: NaN, note: (r.stderr || r.stdout).slice(-2000) };
      }
      out.push(s);
      opts.log(`scale rep=${rep} ${variant} × ${opts.hosts}: ${s.ok ? "ok" : "FAILED"} ${(s.wallMs / 1000).toFixed(2)} s, ${s.resources} resources, peak RSS ${(s.maxRssKB / 1024).toFixed(0)} MB (before ${(s.rssBeforeKB / 1024).toFixed(0)} MB)${s.note ? `\n  ${s.note}` : ""}`);
    }
  }
  return out;
}
