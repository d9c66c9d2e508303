/**
 * An apply that exited 0 and printed nothing (an engine truncated on the host: its functions load, nothing runs) is
 * not a success: outside a preview the component fails, naming the child and the recovery, so the -restore child
 * keeps the originals it stored. During a preview an empty or unknown stdout is the empty report, as before.
 */
import { reportOf } from "../../components/common";

const EMPTY = { applied: {}, previous: {}, warnings: [], extra: {} };

test("preview: unknown or empty stdout is the empty report", () => {
  expect(reportOf(undefined, "web-apply", true)).toEqual(EMPTY);
  expect(reportOf("", "web-apply", true)).toEqual(EMPTY);
});

test("an update or create that printed nothing fails, naming the child, the engine file and the recovery", () => {
  expect(() => reportOf("", "web-apply", false)).toThrow(
    "pulumi-net-tuning: web-apply exited 0 but printed no report, so nothing was recorded: the engine installed on the host " +
      "(/usr/local/lib/pulumi-net-tuning/engine-<sha256>.sh, named by the @engine line of its stdin) is probably damaged. " +
      "Remove that file on the host, then run `pulumi up --replace <URN of web-apply>`",
  );
  // a report that is there but incomplete (a run cut short) is refused by the parser, as before
  expect(() => reportOf("net-tuning-report v1\napplied\tk\tv\n", "web-apply", false)).toThrow(/not a complete report/);
  expect(reportOf("net-tuning-report v1\nend\n", "web-apply", false)).toEqual(EMPTY);
});
