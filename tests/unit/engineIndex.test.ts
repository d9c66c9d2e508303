/**
 * The engine's in-memory index (provider/host/sh/runtime.sh, ARCHITECTURE.md "Apply cost"), run in dash, bash --posix
 * and busybox ash: nt_get answers as nt_lookup reads the file, before and after indexing, for duplicate keys, keys that
 * share a variable name and values with blanks; an NTQ_* variable of the caller's environment is never taken for an
 * index slot (nor evaluated); nt_want buffers only while the plan is read; nts_path maps keys as sysctl(8) does.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { SH_DIR, SHELLS } from "../../testkit/localsh";

describe.each(SHELLS)("the engine's index (%s)", (shell) => {
  const run = (script: string, files: Record<string, string> = {}, env: Record<string, string> = {}) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "engine-index-"));
    try {
      for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(tmp, name), text);
      const [cmd, ...args] = shell.split(" ");
      const r = execFileSync(cmd, [...args, "-c", `. "$1/runtime.sh"; . "$1/sysctlspec.sh"; . "$1/sysctl.sh"; NT_TMP="$2"; NT_HOSTNAME=h; ${script} 2>&1`, "t", SH_DIR, tmp], {
        encoding: "utf8",
        env: { ...process.env, ...env },
      });
      return { out: r, files: Object.fromEntries(fs.readdirSync(tmp).map((f) => [f, fs.readFileSync(path.join(tmp, f), "utf8")])) };
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  };
  // duplicate key (the first value wins), two keys with one variable name (a-b / a_b: the file stays unindexed),
  // blanks inside a value, a key the index cannot encode
  const live = "net.a\t1\nnet.b\t2 3\nnet.a\t9\nx y\t4\n";
  const colliding = "net.a-b\t1\nnet.a_b\t2\n";
  const keys = ["net.a", "net.b", "x y", "net.c", "net.a-b", "net.a_b", ""];
  const probe = (name: string) =>
    keys.map((k) => `if nt_get ${name} '${k}'; then echo "get ${name} [${k}] = [$NT_FOUND]"; else echo "get ${name} [${k}] absent"; fi; ` +
      `if nt_lookup "$NT_TMP/${name}" '${k}'; then echo "lookup ${name} [${k}] = [$NT_FOUND]"; else echo "lookup ${name} [${k}] absent"; fi`).join("; ");

  test("nt_get = nt_lookup reading the file, before and after nt_index (duplicates, shared variable names, blanks)", () => {
    const { out } = run(`${probe("live")}; ${probe("pair")}; nt_index live; nt_index pair; echo indexed; ${probe("live")}; ${probe("pair")}`, { live, pair: colliding });
    const [before, after] = out.split("indexed\n");
    expect(after).toBe(before); // the index answers as the file does
    expect(before).toContain("get live [net.a] = [1]\n");
    expect(before).toContain("get live [net.b] = [2 3]\n");
    expect(before).toContain("get live [net.c] absent\n");
    expect(before).toContain("get pair [net.a_b] = [2]\n");
    for (const line of before.trim().split("\n").filter((l) => l.startsWith("get "))) {
      expect(before).toContain(line.replace(/^get /, "lookup ") + "\n"); // nt_get and nt_lookup agree on every key
    }
  });

  test("NTQ_* from the caller's environment is neither a slot nor evaluated, before or after indexing", () => {
    const env = { NTQ_live: "x-}$(echo INJECTED)${y", NTQ_got: "y-}$(echo INJECTED)${y" };
    const { out } = run(`nt_get live net.a && echo "found $NT_FOUND"; : > "$NT_TMP/got"; nt_index_put got net.a 7; nt_index live; nt_get live net.a && echo "indexed $NT_FOUND"`, { live }, env);
    expect(out).not.toContain("INJECTED");
    expect(out).toBe("found 1\nindexed 1\n");
  });

  test("nt_index_put keeps an indexed file's lookups in step; unindexed, it changes nothing", () => {
    const { out } = run(`: > "$NT_TMP/j"; nt_index_put j k.1 v; nt_get j k.1 || echo "absent (not indexed)"; nt_index j; printf 'k.1\\tv\\nk.1\\tw\\n' >> "$NT_TMP/j"; nt_index_put j k.1 v; nt_index_put j k.1 w; nt_get j k.1 && echo "indexed $NT_FOUND"; nt_lines j; printf '%s' "$NT_LINES"`);
    expect(out).toBe("absent (not indexed)\nindexed v\nk.1\tv\nk.1\tw\n");
  });

  test("nt_want: buffered while nt_read_stdin reads the plan, written at once otherwise", () => {
    const plan = "@net-tuning v1\n@kind sysctl\n@owner p/s/n\n@owner-id p.s.n\n@file /etc/sysctl.d/90-x.conf\n@content\nnet.a = 1\nnet.b = 2 3\n";
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "engine-want-"));
    try {
      fs.writeFileSync(path.join(tmp, "plan"), plan);
      const [cmd, ...args] = shell.split(" ");
      const out = execFileSync(cmd, [...args, "-c", `. "$1/runtime.sh"; . "$1/sysctlspec.sh"; . "$1/sysctl.sh"; NT_TMP="$2"; NT_HOSTNAME=h; : > "$NT_TMP/desired"; nt_index desired; nt_read_stdin < "$2/plan"; cat "$NT_TMP/desired"; echo --; nt_want net.c 4; cat "$NT_TMP/desired"; nt_get desired net.c && echo "indexed $NT_FOUND"`, "t", SH_DIR, tmp], { encoding: "utf8" });
      expect(out).toBe("net.a\t1\nnet.b\t2 3\n--\nnet.a\t1\nnet.b\t2 3\nnet.c\t4\nindexed 4\n");
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  test("nts_path: dots are separators, a \"/\" in a dotted key is a literal dot, a slashed key is a path", () => {
    const { out } = run(`for k in net.core.somaxconn kernel a..b .a net.ipv4.conf.eth0/100.rp_filter net/ipv4/conf/all/rp_filter; do nts_path "$k"; echo "$k $NTS_PATH"; done`);
    expect(out).toBe([
      "net.core.somaxconn /proc/sys/net/core/somaxconn",
      "kernel /proc/sys/kernel",
      "a..b /proc/sys/a//b",
      ".a /proc/sys//a",
      "net.ipv4.conf.eth0/100.rp_filter /proc/sys/net/ipv4/conf/eth0.100/rp_filter",
      "net/ipv4/conf/all/rp_filter /proc/sys/net/ipv4/conf/all/rp_filter",
    ].join("\n") + "\n");
  });
});
