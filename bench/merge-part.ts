/**
 * Merges one part of another bench run into bench/results/latest.json and re-renders latest.md:
 *   npx ts-node --transpile-only -P tsconfig.dev.json bench/merge-part.ts <part: state|scale|cost> <other latest.json> "<note>"
 * For a part re-measured after a code change (BENCH_OUT=/tmp/x BENCH_PARTS=state npm run bench); the note says so.
 */
import * as fs from "fs";
import * as path from "path";
import type { BenchResults } from "./index";
import { report } from "./report";

const [part, other, note] = process.argv.slice(2);
if (!["state", "scale", "cost"].includes(part) || !other || !note) throw new Error("usage: merge-part <state|scale|cost> <other latest.json> <note>");
const file = path.join(__dirname, "results", "latest.json");
const res = JSON.parse(fs.readFileSync(file, "utf8")) as BenchResults;
const src = JSON.parse(fs.readFileSync(other, "utf8")) as BenchResults;
(res as unknown as Record<string, unknown>)[part] = (src as unknown as Record<string, unknown>)[part];
res.notes = [...(res.notes ?? []), `${note} (part "${part}" from the run of ${src.startedAt})`];
res.log = [...res.log, `--- part "${part}" merged from the run of ${src.startedAt}:`, ...src.log];
fs.writeFileSync(file, JSON.stringify(res, null, 2) + "\n");
const { markdown, ratios } = report(res);
fs.writeFileSync(path.join(__dirname, "results", "latest.md"), markdown);
console.log(ratios);
