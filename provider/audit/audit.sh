# net-tuning audit (read-only; issue #33): sent on stdin to `/bin/sh -s` (or `sudo -n /bin/sh -s`) by
# provider/audit/program.ts, which puts NA_KEYS (one "key<TAB>/proc/sys path" line per catalogue key) before this
# text and the counter reader (provider/audit/counters.ts) and the live read (provider/host/programs.ts liveProgram)
# after it. Reads only: no file, directory, lock or temporary file is written anywhere; no value is set.
# Output: "net-tuning-audit v1", then sections, each opened by a line "@@<name>[ <arg>]"; parsed by program.ts.
# POSIX sh (dash, busybox ash, bash); tools: cat, awk, uname, ethtool (optional).
# shellcheck shell=sh
# shellcheck disable=SC2154 # NA_KEYS is assigned by the first lines of the program (provider/audit/program.ts)
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH
LC_ALL=C
export LC_ALL
NA_TAB='	'
NA_CONVERGED=/var/lib/pulumi-net-tuning-converged
printf 'net-tuning-audit v1\n'

na_line() { # FILE: its first line into NA_V (builtins only; sysfs and /proc/PID files, not /proc/sys); 1 when it cannot be read
  NA_V=''
  [ -r "$1" ] || return 1
  { IFS= read -r NA_V < "$1" || [ -n "$NA_V" ]; } 2>/dev/null
}

printf '@@host\n'
printf 'kernel\t%s\n' "$(uname -r 2>/dev/null)"
printf 'arch\t%s\n' "$(uname -m 2>/dev/null)"
na_line /proc/sys/kernel/hostname && printf 'hostname\t%s\n' "$NA_V"
printf 'uid\t%s\n' "$(id -u 2>/dev/null)"
na_cpus=0
while IFS= read -r na_l; do case "$na_l" in processor*) na_cpus=$((na_cpus + 1)) ;; esac; done < /proc/cpuinfo
printf 'cpus\t%s\n' "$na_cpus"
while IFS= read -r na_l; do
  # shellcheck disable=SC2086 # "MemTotal:  16384 kB" split into words on purpose (no pattern characters)
  case "$na_l" in MemTotal:* | MemAvailable:*) set -- $na_l; printf '%s\t%s\n' "${1%:}" "$2" ;; esac
done < /proc/meminfo
printf 'ethtool\t%s\n' "$(ethtool --version 2>/dev/null)"
printf 'sysctl\t%s\n' "$(sysctl --version 2>/dev/null | head -n 1)"
printf 'sh\t%s\n' "$(readlink /bin/sh 2>/dev/null)"
if [ -d /run/systemd/system ]; then printf 'init\tsystemd\n'; else printf 'init\tother\n'; fi

printf '@@os-release\n'
if [ -r /etc/os-release ]; then cat /etc/os-release; elif [ -r /usr/lib/os-release ]; then cat /usr/lib/os-release; fi

# Every catalogue key: "missing" (no /proc/sys file on this kernel or in this namespace), else "PATH:VALUE" from one
# grep (a /proc/sys value is read whole or not at all: the kernel's handlers answer a read at an offset with nothing,
# so the shell's byte-by-byte `read` would get the first character only). A key with neither line is unreadable.
printf '@@sysctl\n'
set --
while IFS="$NA_TAB" read -r na_k na_p; do
  [ -n "$na_k" ] || continue
  case "$na_p" in /proc/sys/net/*) ;; *) continue ;; esac
  if [ -e "$na_p" ]; then set -- "$@" "$na_p"; else printf 'missing\t%s\n' "$na_k"; fi
done <<EOF
$NA_KEYS
EOF
[ $# -gt 0 ] && grep -H '' -- "$@" 2>/dev/null
set --

# Every NIC but lo: sysfs facts, then ethtool's driver, channels, rings and offloads as printed.
for na_d in /sys/class/net/*; do
  na_if=${na_d##*/}
  [ "$na_if" = lo ] && continue
  [ -e "$na_d" ] || continue
  printf '@@nic %s\n' "$na_if"
  for na_f in speed mtu tx_queue_len operstate address; do na_line "$na_d/$na_f" && printf '%s\t%s\n' "$na_f" "$NA_V"; done
  na_rx=0; for na_q in "$na_d"/queues/rx-*; do [ -d "$na_q" ] && na_rx=$((na_rx + 1)); done
  na_tx=0; for na_q in "$na_d"/queues/tx-*; do [ -d "$na_q" ] && na_tx=$((na_tx + 1)); done
  printf 'queues\t%s %s\n' "$na_rx" "$na_tx"
  [ -e "$na_d/device" ] && printf 'physical\t1\n'
  for na_o in i l g k; do
    printf '@@ethtool-%s %s\n' "$na_o" "$na_if"
    ethtool -"$na_o" "$na_if" 2>&1
  done
done

# The files the boot's sysctl loading reads, in the order systemd-sysctl and `sysctl --system` apply them: the first
# file of a name wins over the same name in a later directory; /etc/sysctl.conf last (provider/host/sh/sysctl.sh
# nts_boot_conflicts reads them in the same order).
na_seen=' '
for na_dir in /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
  [ -d "$na_dir" ] || continue
  for na_f in "$na_dir"/*.conf; do
    [ -e "$na_f" ] || [ -L "$na_f" ] || continue
    na_b=${na_f##*/}
    case "$na_seen" in *" $na_b "*) printf '@@bootfile-shadowed %s\n' "$na_f"; continue ;; esac
    na_seen="$na_seen$na_b "
    if [ -L "$na_f" ] && [ "$(readlink "$na_f")" = /dev/null ]; then printf '@@bootfile-masked %s\n' "$na_f"; continue; fi
    if [ -r "$na_f" ]; then printf '@@bootfile %s\n' "$na_f"; cat "$na_f"; printf '\n'
    else printf '@@bootfile-unreadable %s\n' "$na_f"; fi
  done
done
if [ -r /etc/sysctl.conf ]; then printf '@@bootfile %s\n' /etc/sysctl.conf; cat /etc/sysctl.conf; printf '\n'; fi
if [ -e /etc/rc.local ]; then printf '@@rclocal\n'; [ -r /etc/rc.local ] && grep -n 'pulumi-net-tuning\|ethtool\|sysctl' /etc/rc.local; fi

# irqbalance: running, and the IRQs and CPUs it is told to leave alone.
printf '@@irqbalance\n'
for na_p in /proc/[0-9]*; do
  na_line "$na_p/comm" && [ "$NA_V" = irqbalance ] && { printf 'running\t%s\n' "${na_p#/proc/}"; break; }
done
for na_f in /etc/default/irqbalance /etc/sysconfig/irqbalance; do
  [ -r "$na_f" ] && grep -E '^[[:space:]]*(IRQBALANCE_BANNED_CPUS|IRQBALANCE_BANNED_CPULIST|IRQBALANCE_ARGS|OPTIONS)=' "$na_f" | sed "s|^|$na_f\t|"
done

# The engine's records of the last successful apply (world-readable): the live read after the counters reads every
# recorded key and file again (the same getters and digests as the apply), which gives the drift.
printf '@@records\n'
NT_LIVE_REQ=''
if [ -d "$NA_CONVERGED" ]; then
  for na_f in "$NA_CONVERGED"/*; do
    [ -f "$na_f" ] || continue
    na_id=${na_f##*/}
    case "$na_id" in '' | *[!A-Za-z0-9._-]*) continue ;; esac
    if [ ! -r "$na_f" ]; then printf 'unreadable\t%s\n' "$na_id"; continue; fi
    # nic records name keys "IF/what"; sysctl records dotted keys
    na_kind=sysctl
    while IFS="$NA_TAB" read -r na_t na_k _; do
      case "$na_t" in value | unknown) case "$na_k" in */*) na_kind=nic ;; esac; break ;; esac
    done < "$na_f"
    printf 'record\t%s\t%s\n' "$na_id" "$na_kind"
    NT_LIVE_REQ="$NT_LIVE_REQ$na_kind$NA_TAB$na_id$NA_TAB
"
  done
fi
NT_LIVE_REQ=${NT_LIVE_REQ%"
"}
