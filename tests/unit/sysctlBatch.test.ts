/**
 * kind_get_many (one awk for a batch of /proc/sys reads) maps each key to its file itself: it must read exactly the
 * file nts_path names (the shell's mapping, used by kind_get), for dotted keys, slash keys, a "/" standing for a "."
 * inside a component, and keys with stray separators, whose file exists or not (not a directory: mawk stops at a
 * directory, before and after this change alike). Run locally under each shell.
 */
import { runSh, SHELLS } from "../../testkit/localsh";

const KEYS = [
  "net.ipv4.ip_forward", "net/ipv4/ip_forward", "kernel.ostype", "kernel/ostype", "net.core.somaxconn",
  "net.ipv4.ip_forward.", "net.ipv4.ip_forward..", "net.ipv4/ip_forward", ".kernel.ostype",
  "kernel..ostype", "net.ipv4.conf.lo.rp_filter", "net.ipv4.conf.lo/.rp_filter", "fs.file-max", "no.such.key",
];

describe.each(SHELLS)("kind_get_many against kind_get (%s)", (shell) => {
  test("the same files read, the same values, unreadable keys left out", () => {
    const script = `. "$1/sysctlspec.sh"; . "$1/sysctl.sh"
      for k in ${KEYS.map((k) => `'${k}'`).join(" ")}; do printf '%s\\t-\\n' "$k"; done > "$NT_TMP/in"
      kind_get_many "$NT_TMP/in" "$NT_TMP/out"; printf 'status %s\\n' "$?"
      while IFS= read -r l; do printf 'many\\t%s\\n' "$l"; done < "$NT_TMP/out"
      printf 'captured %s\\n' "$(printf '%s' "$NT_GM" | wc -l)"
      for k in ${KEYS.map((k) => `'${k}'`).join(" ")}; do nts_path "$k"; [ -f "$NTS_PATH" ] && kind_get "$k" && printf 'one\\t%s\\t%s\\n' "$k" "$NT_GOT"; done; true`;
    const out = runSh(script, { shell }).trim().split("\n");
    const many = out.filter((l) => l.startsWith("many\t")).map((l) => l.slice(5));
    const one = out.filter((l) => l.startsWith("one\t")).map((l) => l.slice(4));
    expect(out[0]).toBe("status 0");
    expect(many).toEqual(one);
    // the mapping is not vacuous: dotted and slash forms, the trailing "." the shell drops, the lo/ component
    expect(many.map((l) => l.split("\t")[0])).toEqual(expect.arrayContaining(["net.ipv4.ip_forward", "net/ipv4/ip_forward", "net.ipv4.ip_forward.", "kernel.ostype", "kernel/ostype"]));
    expect(many.map((l) => l.split("\t")[0])).not.toContain("net.ipv4.ip_forward..");
    expect(many.map((l) => l.split("\t")[0])).not.toContain("no.such.key");
    expect(out).toContain(`captured ${many.length - 1}`); // NT_GM = OUT's text without its final newline
  });
});
