/**
 * An error in what the user declared, found before anything on a host changes.
 * `problems` lists every problem found (not just the first), each naming the input, the value and the fix.
 */
export class InputError extends Error {
  readonly problems: string[];
  constructor(resource: string, problems: string[]) {
    super(
      `${resource}: ${problems.length} invalid input${problems.length === 1 ? "" : "s"}:\n` +
        problems.map((p) => `  - ${p}`).join("\n"),
    );
    this.name = "InputError";
    this.problems = problems;
  }
}
