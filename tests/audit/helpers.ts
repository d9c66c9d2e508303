/** Shared by the audit's lab tests: the CLI in-process, a known_hosts file for a lab, and counter-raising traffic. */
import * as fs from "fs";
import * as path from "path";
import { Lab, LabHost, STATE_ROOT } from "../../testkit/lab";
import { main } from "../../bin/net-tuning";

/** `net-tuning ARGV…` in-process: exit code, stdout, stderr. */
export async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { code, stdout, stderr };
}

/** Writes `file` with a known_hosts line per lab host (every host of a lab has the lab's one host key). */
export function writeKnownHosts(lab: Lab, file: string): string {
  const pub = fs.readFileSync(path.join(STATE_ROOT, lab.id, "keys", "host_ed25519_key.pub"), "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
  fs.writeFileSync(file, lab.hosts.map((h) => `${h.address} ${pub}\n`).join(""));
  return file;
}

async function root(h: LabHost, cmd: string): Promise<void> {
  const r = await h.exec(cmd, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`${h.name}: exit ${r.code}: ${r.stderr}`);
}

/** A listener with backlog 1 that never accepts, and a burst of `n` connects inside the host's namespace: ListenOverflows rises. */
export function overflowListener(h: LabHost, n = 40): Promise<void> {
  return root(h, `python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 5555)); s.listen(1)
cs = []
for i in range(${n}):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", 5555))
    except BlockingIOError: pass
    cs.append(c)
time.sleep(1.5)
'`);
}

/** `n` client sockets in TIME_WAIT (the client closes first) inside the host's namespace; they last 60 s. */
export function timeWaitSockets(h: LabHost, n: number): Promise<void> {
  return root(h, `python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 5556)); s.listen(16)
for i in range(${n}):
    c = socket.create_connection(("127.0.0.1", 5556)); a, _ = s.accept(); c.close(); a.recv(1); a.close()
'`);
}
