/**
 * The 40-key sysctl change used by the fleet and host-cost benchmarks. Every key is per network namespace and was
 * checked writable in a lab host (value written, read back equal, original restored: see `verifyKeys`), and every
 * value differs from the lab's default so that each key really changes.
 */
import type { LabHost } from "../testkit/lab";
import { procPath } from "../testkit/host";

export const FILE_NAME = "90-bench.conf";
export const FILE_PATH = `/etc/sysctl.d/${FILE_NAME}`;

export const SYSCTLS: Record<string, string> = {
  "net.core.somaxconn": "8192",
  "net.ipv4.conf.all.accept_redirects": "0",
  "net.ipv4.conf.all.log_martians": "1",
  "net.ipv4.conf.all.rp_filter": "1",
  "net.ipv4.conf.all.send_redirects": "0",
  "net.ipv4.conf.default.accept_redirects": "0",
  "net.ipv4.conf.default.rp_filter": "1",
  "net.ipv4.icmp_ratelimit": "500",
  "net.ipv4.ip_default_ttl": "128",
  "net.ipv4.ip_local_port_range": "10000 65001",
  "net.ipv4.tcp_autocorking": "0",
  "net.ipv4.tcp_ecn": "1",
  "net.ipv4.tcp_fastopen": "3",
  "net.ipv4.tcp_frto": "0",
  "net.ipv4.tcp_keepalive_intvl": "30",
  "net.ipv4.tcp_keepalive_probes": "5",
  "net.ipv4.tcp_keepalive_time": "600",
  "net.ipv4.tcp_limit_output_bytes": "2097152",
  "net.ipv4.tcp_max_syn_backlog": "8192",
  "net.ipv4.tcp_max_tw_buckets": "200000",
  "net.ipv4.tcp_min_rtt_wlen": "120",
  "net.ipv4.tcp_mtu_probing": "1",
  "net.ipv4.tcp_no_metrics_save": "1",
  "net.ipv4.tcp_notsent_lowat": "131072",
  "net.ipv4.tcp_orphan_retries": "2",
  "net.ipv4.tcp_pacing_ss_ratio": "150",
  "net.ipv4.tcp_reordering": "5",
  "net.ipv4.tcp_retries2": "8",
  "net.ipv4.tcp_rmem": "4096 262144 16777216",
  "net.ipv4.tcp_slow_start_after_idle": "0",
  "net.ipv4.tcp_syn_retries": "4",
  "net.ipv4.tcp_synack_retries": "3",
  "net.ipv4.tcp_thin_linear_timeouts": "1",
  "net.ipv4.tcp_tw_reuse": "1",
  "net.ipv4.tcp_wmem": "4096 262144 16777216",
  "net.ipv6.conf.all.accept_ra": "0",
  "net.ipv6.conf.all.accept_redirects": "0",
  "net.ipv6.conf.default.accept_ra": "0",
  "net.ipv6.conf.default.accept_redirects": "0",
  "net.ipv4.udp_rmem_min": "8192",
};

/** NetTuning's input form: numbers, arrays for multi-value keys. */
export function netTuningSysctls(): Record<string, number | number[]> {
  const out: Record<string, number | number[]> = {};
  for (const [k, v] of Object.entries(SYSCTLS)) {
    const parts = v.split(" ").map(Number);
    out[k] = parts.length > 1 ? parts : parts[0];
  }
  return out;
}


/** Current values of the 40 keys on a host (whitespace collapsed). */
export async function readValues(host: LabHost): Promise<Record<string, string>> {
  const keys = Object.keys(SYSCTLS);
  const script = keys.map((k) => `tr '\\t' ' ' < ${procPath(k)}`).join("; ");
  const r = await host.exec(script, { timeoutMs: 60_000 });
  const lines = r.stdout.trim().split("\n");
  if (r.code !== 0 || lines.length !== keys.length) throw new Error(`cannot read sysctls on ${host.name}: ${r.stderr}`);
  return Object.fromEntries(keys.map((k, i) => [k, lines[i].trim().split(/\s+/).join(" ")]));
}

/** Writes each value, reads it back, restores the original: throws listing every key that is not writable as given. */
export async function verifyKeys(host: LabHost): Promise<void> {
  if (Object.keys(SYSCTLS).length !== 40) throw new Error(`expected 40 keys, have ${Object.keys(SYSCTLS).length}`);
  const orig = await readValues(host);
  const bad: string[] = [];
  for (const [k, v] of Object.entries(SYSCTLS)) {
    if (orig[k] === v) bad.push(`${k}: default already ${v}`);
    const p = procPath(k);
    const r = await host.exec(`echo '${v}' > ${p} && tr '\\t' ' ' < ${p}; printf '%s\\n' '${orig[k]}' > ${p}`);
    if (r.code !== 0 || r.stdout.trim().split(/\s+/).join(" ") !== v) bad.push(`${k}: wrote ${v}, read ${r.stdout.trim()} ${r.stderr.trim()}`);
  }
  if (bad.length) throw new Error(`sysctl keys not usable in a lab host:\n${bad.join("\n")}`);
}

/** Puts a host back to the given values and removes every trace of the three approaches (untimed, between runs). */
export async function resetHost(host: LabHost, orig: Record<string, string>): Promise<void> {
  const writes = Object.entries(orig).map(([k, v]) => `printf '%s\\n' '${v}' > ${procPath(k)}`).join("; ");
  const r = await host.exec(`${writes}; rm -f ${FILE_PATH}; rm -rf /var/lib/pulumi-net-tuning /root/.ansible /tmp/net-tuning-in.*`, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`reset of ${host.name} failed: ${r.stderr}`);
}
