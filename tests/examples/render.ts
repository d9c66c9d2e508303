/** Text helpers shared by the demo, the README excerpt generator and the example tests. */

/** The reviewable part of an apply Command's stdin: the plan lines before the host program (`@program`). */
export function planPart(stdin: unknown): string {
  const s = String(stdin ?? "");
  const i = s.indexOf("\n@program\n");
  if (i >= 0) return s.slice(0, i) + "\n";
  return s.endsWith("\n") ? s : s + "\n";
}

/**
 * A line diff (longest common subsequence) in the shape `pulumi preview --diff` shows a multi-line string input:
 * unchanged lines prefixed "  ", removed "- ", added "+ ". `context` = unchanged lines kept around each change
 * (the rest collapse to one "  …" line); Infinity keeps them all.
 */
export function lineDiff(before: string, after: string, context = 2): string[] {
  const a = before.replace(/\n$/, "").split("\n");
  const b = after.replace(/\n$/, "").split("\n");
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: Array<{ tag: " " | "-" | "+"; text: string }> = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push({ tag: " ", text: a[i] }); i++; j++; }
    else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) { out.push({ tag: "-", text: a[i] }); i++; }
    else { out.push({ tag: "+", text: b[j] }); j++; }
  }
  const keep = out.map((l, k) => l.tag !== " " || out.slice(Math.max(0, k - context), k + context + 1).some((x) => x.tag !== " "));
  const lines: string[] = [];
  out.forEach((l, k) => {
    if (keep[k]) lines.push(`${l.tag} ${l.text}`);
    else if (lines[lines.length - 1] !== "  …") lines.push("  …");
  });
  return lines;
}

/** A plain-text table: first row is the header; columns padded to their widest cell. */
export function table(rows: string[][], indent = "  "): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  const fmt = (r: string[]) => indent + r.map((cell, c) => (cell ?? "").padEnd(widths[c])).join("  ").trimEnd();
  return [fmt(rows[0]), indent + widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(fmt)].join("\n");
}
