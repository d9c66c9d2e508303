/**
 * Ansible side of the fleet benchmark: inventory from the lab hosts (root key), an ansible.cfg with
 * host_key_checking=False and defaults otherwise (forks=5, ControlMaster=auto/ControlPersist=60s, no pipelining),
 * and counting wrappers for ssh and sftp: every invocation of either opens exactly one SSH session (channel), through
 * its own TCP connection or a ControlMaster's, so the wrapper log = sessions per host. TCP connections (logins) are
 * counted separately from each host's sshd log ("Accepted publickey").
 */
import * as fs from "fs";
import * as path from "path";
import type { Lab, LabHost } from "../testkit/lab";
import { FILE_PATH, SYSCTLS } from "./keys";
import { run } from "./lib";

export type AnsibleVariant = "posix-sysctl" | "copy-reload";

export interface AnsibleRun {
  ms: number;
  ok: boolean;
  changedTotal: number;
  /** ssh/sftp invocations (= sessions) per host address */
  sessions: Record<string, number>;
  recap: string;
  output: string;
}

export class AnsibleBench {
  readonly dir: string;
  private n = 0;
  constructor(private readonly lab: Lab, private readonly hosts: LabHost[], baseDir: string) {
    this.dir = fs.mkdtempSync(path.join(baseDir, `ansible-${hosts.length}-`));
    const inv = [
      "[lab]",
      ...hosts.map((h) => `${h.name} ansible_host=${h.address} ansible_port=${h.port}`),
      "",
      "[lab:vars]",
      "ansible_user=root",
      `ansible_ssh_private_key_file=${hosts[0].root.keyPath}`,
      // the lab hosts run the machine's Debian python3; set explicitly (skips interpreter discovery: favours Ansible)
      "ansible_python_interpreter=/usr/bin/python3",
      "",
    ].join("\n");
    fs.writeFileSync(path.join(this.dir, "inventory.ini"), inv);
    for (const tool of ["ssh", "sftp"]) {
      fs.writeFileSync(
        path.join(this.dir, `count-${tool}`),
        `#!/bin/sh\nprintf '%s\\n' "${tool} $*" >> "$BENCH_SSH_LOG"\nexec /usr/bin/${tool} "$@"\n`,
        { mode: 0o755 },
      );
    }
    fs.writeFileSync(
      path.join(this.dir, "ansible.cfg"),
      [
        "[defaults]",
        "host_key_checking = False",
        "forks = 5",
        "retry_files_enabled = False",
        "",
        "[ssh_connection]",
        `ssh_executable = ${path.join(this.dir, "count-ssh")}`,
        `sftp_executable = ${path.join(this.dir, "count-sftp")}`,
        "",
      ].join("\n"),
    );
    const yamlDict = Object.entries(SYSCTLS).map(([k, v]) => `      ${k}: "${v}"`).join("\n");
    fs.writeFileSync(
      path.join(this.dir, "posix-sysctl.yml"),
      `- hosts: lab
  gather_facts: false
  vars:
    sysctls:
${yamlDict}
  tasks:
    - name: 40 sysctls, one module call each, persisted in ${FILE_PATH}
      ansible.posix.sysctl:
        name: "{{ item.key }}"
        value: "{{ item.value }}"
        sysctl_file: ${FILE_PATH}
      loop: "{{ sysctls | dict2items }}"
`,
    );
    const content = Object.entries(SYSCTLS).map(([k, v]) => `${k} = ${v}`).join("\n") + "\n";
    fs.writeFileSync(
      path.join(this.dir, "copy-reload.yml"),
      `- hosts: lab
  gather_facts: false
  tasks:
    - name: the sysctl.d file in one go
      ansible.builtin.copy:
        dest: ${FILE_PATH}
        mode: "0644"
        content: |
${content.split("\n").filter(Boolean).map((l) => `          ${l}`).join("\n")}
      notify: load it
  handlers:
    - name: load it
      ansible.builtin.command: sysctl -p ${FILE_PATH}
`,
    );
  }

  /** `forks`: Ansible's parallelism for this run (`--forks`); default the configuration's 5. */
  async play(variant: AnsibleVariant, timeoutMs: number, forks?: number): Promise<AnsibleRun> {
    const id = this.n++;
    const log = path.join(this.dir, `sessions-${id}.log`);
    const cp = path.join(this.dir, `cp-${id}`); // fresh ControlMaster dir: every run starts without open connections
    fs.mkdirSync(cp);
    fs.writeFileSync(log, "");
    const env: NodeJS.ProcessEnv = {
      PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      HOME: process.env.HOME ?? "/root",
      LANG: "C.UTF-8",
      ANSIBLE_CONFIG: path.join(this.dir, "ansible.cfg"),
      ANSIBLE_SSH_CONTROL_PATH_DIR: cp,
      ANSIBLE_LOCAL_TEMP: path.join(this.dir, "tmp"),
      ANSIBLE_NOCOLOR: "1",
      BENCH_SSH_LOG: log,
    };
    const r = await run("ansible-playbook", ["-i", path.join(this.dir, "inventory.ini"), ...(forks ? ["--forks", String(forks)] : []), path.join(this.dir, `${variant}.yml`)], {
      env, cwd: this.dir, timeoutMs,
    });
    // close the ControlPersist masters this run left (untimed), so they cost nothing during the next runs
    for (const s of fs.readdirSync(cp)) {
      await run("/usr/bin/ssh", ["-o", `ControlPath=${path.join(cp, s)}`, "-O", "exit", "x"], { timeoutMs: 10_000 });
    }
    const sessions: Record<string, number> = {};
    for (const h of this.hosts) sessions[h.address] = 0;
    for (const line of fs.readFileSync(log, "utf8").split("\n")) {
      if (!line) continue;
      const hit = this.hosts.find((h) => new RegExp(`(^|[\\s@\\[])${h.address.replace(/\./g, "\\.")}(\\]|[\\s:]|$)`).test(line));
      if (hit) sessions[hit.address]++;
    }
    const recapAt = r.stdout.lastIndexOf("PLAY RECAP");
    const recap = recapAt >= 0 ? r.stdout.slice(recapAt) : "";
    let changedTotal = 0;
    let failed = 0;
    let okHosts = 0;
    for (const m of recap.matchAll(/ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)/g)) {
      changedTotal += Number(m[2]);
      failed += Number(m[3]) + Number(m[4]);
      okHosts++;
    }
    const ok = r.code === 0 && !r.timedOut && failed === 0 && okHosts === this.hosts.length;
    return { ms: r.ms, ok, changedTotal, sessions, recap, output: ok ? "" : (r.stdout + r.stderr).slice(-4000) };
  }
}

/** "Accepted publickey" lines in each host's sshd log = authenticated TCP connections so far. */
export function sshdLogins(lab: Lab, hosts: LabHost[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const h of hosts) {
    const f = `/run/ntlab/${lab.id}/${h.name}/sshd.log`;
    let n = 0;
    try {
      for (const l of fs.readFileSync(f, "utf8").split("\n")) if (l.includes("Accepted publickey")) n++;
    } catch { n = NaN; }
    out[h.address] = n;
  }
  return out;
}
