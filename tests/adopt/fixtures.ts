/**
 * The source articles' hand-tuning, verbatim, and the commands that put it on a host (issue #16).
 * Seed 000 ("完整配置清单（可粘贴）"): /etc/sysctl.d/99-hk-net-tuning.conf loaded with `sysctl --system`, and
 * /etc/rc.d/rc.local with ethtool / ip link / RPS lines and the `for q in …` loop. Seed 001: /etc/sysctl.conf lines
 * loaded with `sysctl -p` (the article's text lost its line breaks; they are put back at each "#" and setting).
 */
import { gunzipSync } from "zlib";

/**
 * The adopted files' bytes a restore plan carries (Pulumi state), by path: `@adopted-data` lines are base64 of the
 * file, `@adopted-gzip` lines base64 of it gzip'd (provider/sysctl/adopt.ts renderAdoptedRestore). A record without
 * data (the file kept in the host's journal only) maps to undefined.
 */
export function adoptedBytes(plan: string): Map<string, Buffer | undefined> {
  const out = new Map<string, Buffer | undefined>();
  for (const block of plan.split("\n@adopted ").slice(1)) {
    const [rec, ...rest] = block.split("\n");
    const tag = rest[0]?.startsWith("@adopted-gzip ") ? "@adopted-gzip " : "@adopted-data ";
    const end = rest.findIndex((l) => !l.startsWith(tag));
    const lines = rest.slice(0, end < 0 ? rest.length : end).map((l) => l.slice(tag.length));
    const raw = Buffer.from(lines.join(""), "base64");
    out.set(rec.split("\t")[0], lines.length === 0 ? undefined : tag === "@adopted-gzip " ? gunzipSync(raw) : raw);
  }
  return out;
}

/** /etc/sysctl.d/99-hk-net-tuning.conf of seed 000, byte for byte as the article lists it. */
export const HK_CONF = `# ====== 上限与窗口 ======
net.core.rmem_max = 268435456
net.core.wmem_max = 268435456
net.core.rmem_default = 262144
net.core.wmem_default = 262144
net.ipv4.tcp_rmem = 4096 16777216 134217728
net.ipv4.tcp_wmem = 4096 16777216 134217728

# ====== 队列与握手 ======
net.core.netdev_max_backlog = 250000
net.core.somaxconn = 65535
net.ipv4.tcp_max_syn_backlog = 262144

# ====== 现代 TCP 特性 ======
net.ipv4.tcp_window_scaling = 1
net.ipv4.tcp_sack = 1
net.ipv4.tcp_timestamps = 1
net.ipv4.tcp_mtu_probing = 1

# ====== 端口/存活 ======
net.ipv4.ip_local_port_range = 10000 65535
net.ipv4.tcp_fin_timeout = 15
`;
export const HK_PATH = "/etc/sysctl.d/99-hk-net-tuning.conf";

/** Every setting of HK_CONF as key → value (whitespace collapsed, as the kernel compares). */
export const HK_VALUES: Record<string, string> = Object.fromEntries(
  HK_CONF.split("\n")
    .filter((l) => /=/.test(l) && !l.startsWith("#"))
    .map((l) => l.split("=").map((s) => s.trim().replace(/\s+/g, " ")) as [string, string]),
);

/**
 * Keys of HK_CONF that a lab host (a network namespace) cannot set: read-only there (core r/wmem) or absent
 * (netdev_max_backlog). The VM (initial namespace) sets all of them.
 */
export const HOST_WIDE = ["net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default", "net.core.netdev_max_backlog"];

/** The article's own commands: write the file (heredoc), then load it. `pattern`: limit `sysctl --system` (lab: net.* only). */
export function writeHkConf(content = HK_CONF, pattern?: string): string {
  return `cat > ${HK_PATH} <<'EOF'\n${content}EOF\nsysctl --system${pattern ? ` --pattern '${pattern}'` : ""} >/dev/null 2>&1; true`;
}

/** Seed 001's /etc/sysctl.conf lines (its network section; fs.file-max is a machine-wide key: left out in the lab). */
export const WEB_SYSCTL_CONF_LINES = `# /etc/sysctl.conf
# 1. 监听队列最大长度（默认128太小）
net.core.somaxconn=65535
# 2. SYN队列长度
net.ipv4.tcp_max_syn_backlog=65535
# 4. TIME_WAIT状态的socket数量（按需调整）
net.ipv4.tcp_max_tw_buckets=200000
# 5. TIME_WAIT复用（仅限客户端发起连接时）
net.ipv4.tcp_tw_reuse=1
# 6. 开启SYN cookies防护
net.ipv4.tcp_syncookies=1
# 7. 减少FIN_WAIT2状态时间
net.ipv4.tcp_fin_timeout=30
`;

/** /etc/rc.d/rc.local of seed 000 (the NIC part), byte for byte; `iface` replaces eth0 where the test NIC differs. */
export function hkRcLocal(iface = "eth0"): string {
  return `#!/bin/bash
# NIC 队列与 offload
ethtool -G eth0 rx 4096 tx 4096
ip link set dev eth0 txqueuelen 10000
ethtool -K eth0 lro off gro on gso on tso on
ethtool -C eth0 rx-usecs 8

# RPS/RFS（按需）
echo 32768 > /proc/sys/net/core/rps_sock_flow_entries
for q in /sys/class/net/eth0/queues/rx-*; do
  echo ffffffff > $q/rps_cpus
  echo 4096 > $q/rps_flow_cnt
done
`.replace(/eth0/g, iface);
}

/** Our values for every key of the article's file, each different from the hand value (the lab uses its netns keys). */
export const OURS: Record<string, string | number> = {
  "net.core.rmem_max": 134217728,
  "net.core.wmem_max": 134217728,
  "net.core.rmem_default": 212992,
  "net.core.wmem_default": 212992,
  "net.ipv4.tcp_rmem": "4096 262144 67108864",
  "net.ipv4.tcp_wmem": "4096 262144 67108864",
  "net.core.netdev_max_backlog": 100000,
  "net.core.somaxconn": 32768,
  "net.ipv4.tcp_max_syn_backlog": 131072,
  "net.ipv4.tcp_window_scaling": 1,
  "net.ipv4.tcp_sack": 1,
  "net.ipv4.tcp_timestamps": 1,
  "net.ipv4.tcp_mtu_probing": 2,
  "net.ipv4.ip_local_port_range": "20000 60999",
  "net.ipv4.tcp_fin_timeout": 20,
};
export const norm = (v: string | number) => String(v).trim().split(/\s+/).join(" ");
