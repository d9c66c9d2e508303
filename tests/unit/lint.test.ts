/**
 * The copy-paste lint (issue #31): jscpd over provider/, components/ and bin/ (TypeScript and the sh sources; the
 * generated files and the assembled engine files left out), at least 6 lines and 30 tokens, finds no repeated block.
 * `npm run lint` runs the same check with its report.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const root = path.resolve(__dirname, "../..");

test("jscpd finds no block of 6 lines or more repeated in provider/, components/ or bin/", () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "nt-jscpd-"));
  try {
    const bin = path.join(root, "node_modules", "jscpd", "bin", "jscpd");
    const r = spawnSync(process.execPath, [bin, "--config", ".jscpd.json", "--reporters", "json", "--output", out, "--silent"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    const report = JSON.parse(fs.readFileSync(path.join(out, "jscpd-report.json"), "utf8")) as {
      statistics: { total: { sources: number } };
      duplicates: { firstFile: { name: string; start: number; end: number }; secondFile: { name: string; start: number; end: number } }[];
    };
    // it looked at the files (a wrong path would find nothing to repeat)
    expect(report.statistics.total.sources).toBeGreaterThan(40);
    const clones = report.duplicates.map((d) => `${path.relative(root, d.firstFile.name)}:${d.firstFile.start}-${d.firstFile.end} = ${path.relative(root, d.secondFile.name)}:${d.secondFile.start}-${d.secondFile.end}`);
    expect({ clones, status: r.status }).toEqual({ clones: [], status: 0 });
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test("control: the same settings find a block copied between two files (the lint can fail)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-jscpd-ctl-"));
  try {
    const block = Array.from({ length: 8 }, (_, i) => `export function f${i}(a: number, b: string): string {\n  return b.repeat(a + ${i}) + String(a * ${i});\n}`).join("\n");
    fs.mkdirSync(path.join(dir, "src"));
    fs.writeFileSync(path.join(dir, "src", "a.ts"), `${block}\n`);
    fs.writeFileSync(path.join(dir, "src", "b.ts"), `// another file\n${block}\n`);
    const cfg = JSON.parse(fs.readFileSync(path.join(root, ".jscpd.json"), "utf8")) as Record<string, unknown>;
    fs.writeFileSync(path.join(dir, ".jscpd.json"), JSON.stringify({ ...cfg, path: ["src"], gitignore: false }));
    spawnSync(process.execPath, [path.join(root, "node_modules", "jscpd", "bin", "jscpd"), "--config", ".jscpd.json", "--reporters", "json", "--output", "out", "--silent"], { cwd: dir, encoding: "utf8", timeout: 120_000 });
    const report = JSON.parse(fs.readFileSync(path.join(dir, "out", "jscpd-report.json"), "utf8")) as { duplicates: unknown[] };
    expect(report.duplicates.length).toBeGreaterThan(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
