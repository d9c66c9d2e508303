# The nic kind of the fallback restore (after restore.sh and the NIC spec's NN_FEATURE_ARGS): ethtool settings,
# txqueuelen, RPS/RFS, IRQ affinity, rps_sock_flow_entries; our unit (and its links), boot script, rc.local block.
RK=nic
N=''
k_dir() {
  case $1 in
    '@interface '*) N=${1#* }; case $N in '' | . | .. | *[!A-Za-z0-9._@+-]*) return 1 ;; esac; [ ${#N} -le 15 ] ;;
    *) return 1 ;;
  esac
}
k_ok() {
  s=${1#"$N"/}
  case $1 in
    net.core.rps_sock_flow_entries) ;;
    "$N"/*)
      case $s in txqueuelen | channel.* | ring.* | feature.* | coalesce.*) ;; r[pf]s.rx-[0-9]* | irq.[0-9]*) s=${s#*[sq].} ;; *) return 1 ;; esac
      case ${s#*.} in '' | *[!a-z0-9_-]*) return 1 ;; rx-*[!0-9]* | [0-9]*[!0-9]*) return 1 ;; esac ;;
    *) return 1 ;;
  esac
  case $2 in -) case $1 in */r[pf]s.*) ;; *) return 1 ;; esac ;; '' | -* | *[!A-Za-z0-9,.-]*) return 1 ;; esac
}
# M = a CPU mask as compared: lowercase hex without commas and leading zeros
k_mask() { M=$(printf '%s\n' "$1" | sed 'y/ABCDEF/abcdef/;s/,//g;s/^0*//;s/^$/0/'); }
# k_eth OPT FIELD: g = FIELD of `ethtool OPT` (the current settings of -g/-l; -c's "Adaptive RX: off  TX: off" and
# "rx-frame-low" of ethtool 4.8-6.x; "n/a" = not supported)
k_eth() {
  g=$(ethtool "$1" "$N" 2> /dev/null | awk -v f="$2" -v o="$1" '
    /^Current hardware/ { c = 1 }
    /:/ {
      k = $0; sub(/:.*/, "", k); sub(/^[ \t]+/, "", k); k = tolower(k); gsub(/ /, "-", k); sub(/-frame-/, "-frames-", k)
      v = $0; sub(/^[^:]*:[ \t]*/, "", v); split(v, a, " ")
      if (k == "adaptive-rx" && f == "adaptive-tx") { print $5; exit }
      if (k == f && (c || o !~ /[gl]/)) { print a[1]; exit }
    }')
}
k_get() {
  g=
  s=${1#"$N"/}; q=/sys/class/net/$N/queues/${s#*.}
  case $s in
    net.core.*) g=$(cat /proc/sys/net/core/rps_sock_flow_entries) ;;
    channel.*) k_eth -l "${s#*.}" ;;
    ring.*) k_eth -g "${s#*.}" ;;
    feature.*) k_eth -k "${s#*.}" ;;
    coalesce.*) k_eth -c "${s#*.}" ;;
    txqueuelen) g=$(cat "/sys/class/net/$N/tx_queue_len") ;;
    r?s.*) [ -d "$q" ] || { g=-; return 0; } ;;
  esac 2> /dev/null
  case $s in
    rps.*) g=$(cat "$q/rps_cpus") && k_mask "$g" && g=$M ;;
    rfs.*) g=$(cat "$q/rps_flow_cnt") ;;
    irq.*) g=$(cat "/proc/irq/${s#*.}/smp_affinity") && k_mask "$g" && g=$M ;;
  esac 2> /dev/null
  [ -n "$g" ] && [ "$g" != n/a ]
}
k_exp() {
  e=$2; s=${1#"$N"/}
  case $s in r?s.*) [ "$e" != - ] || [ ! -d "/sys/class/net/$N/queues/${s#*.}" ] || e=0 ;; esac
  case $s in rps.* | irq.*) [ "$e" = - ] || { k_mask "$e"; e=$M; } ;; esac
}
# k_run OPT NAME VALUE: ethtool; old ethtool's "no … parameters changed" (exit 80, or 1 for -L) is success
k_run() {
  z=$(ethtool "$1" "$N" "$2" "$3" 2>&1) && return 0
  c=$?
  case $z in *"no "*" parameters changed"*) return 0 ;; esac
  [ $c = 80 ]
}
k_put() { { printf '%s\n' "$2" > "$1"; } 2> /dev/null || { z="writing '$2' to $1 failed"; false; }; }
k_set() {
  s=${1#"$N"/}; v=$2; [ "$v" != - ] || v=0; q=/sys/class/net/$N/queues/${s#*.}
  case $s in
    net.core.*) k_put /proc/sys/net/core/rps_sock_flow_entries "$v" ;;
    channel.*) k_run -L "${s#*.}" "$v" ;;
    ring.*) k_run -G "${s#*.}" "$v" ;;
    feature.*)
      a=${s#*.}
      for P in $NN_FEATURE_ARGS; do [ "${P%=*}" != "$a" ] || a=${P#*=}; done
      k_run -K "$a" "$v" ;;
    coalesce.*) k_run -C "${s#*.}" "$v" ;;
    txqueuelen) z=$(ip link set dev "$N" txqueuelen "$v" 2>&1) ;;
    rps.*) k_put "$q/rps_cpus" "$v" ;;
    rfs.*) k_put "$q/rps_flow_cnt" "$v" ;;
    irq.*) k_put "/proc/irq/${s#*.}/smp_affinity" "$v" ;;
  esac
}
# k_unit UNIT: an own unit goes with its .wants links (the device's .wants directory when left empty)
k_unit() {
  ours "$1" || return 0
  for f in /etc/systemd/system/*.wants/"${1##*/}"; do
    [ ! -L "$f" ] || rmf "$f"
    case $f in */sys-subsystem-net-devices-*) rmdir "${f%/*}" 2> /dev/null ;; esac
  done
  rmf "$1"
  u=1
}
k_files() {
  [ -n "$N" ] || x 5 "plan has no @interface"
  u=0
  k_unit "/etc/systemd/system/net-tuning-nic-$(printf %s "$N" | tr @+ __).service"
  f=/usr/local/libexec/net-tuning/nic-$N.sh
  ! ours "$f" || rmf "$f"
  while IFS= read -r f; do
    case $f in */rc.local) ;; *.service) k_unit "$f" ;; *) ! ours "$f" || rmf "$f" ;; esac
  done < "$D/a"
  # our rc.local block, and rc.local as it was before it (gone if we created it; its mode, and its time when unchanged)
  r=/etc/rc.local
  [ ! -d /etc/rc.d ] || r=/etc/rc.d/rc.local
  [ ! -L $r ] || r=$(readlink -f $r)
  b="# BEGIN pulumi-net-tuning $O $N"
  if [ -f "$r" ] && grep -qxF "$b" "$r"; then
    grep -qxF "# END pulumi-net-tuning $O $N" "$r" || x 1 "$r on $H has the line '$b' without its END line: fix it by hand, then run the delete again"
    p=$(awk -v b="$b" '$0 == b { s = 1 } s && sub(/^# rc.local before this block: /, "") { print; exit }' "$r")
    awk -v b="$b" -v e="# END pulumi-net-tuning $O $N" '$0 == b { s = 1 } !s; $0 == e { s = 0 }' "$r" > "$D/r" || x 1 "cannot read $r on $H"
    if [ "$p" = absent ] && printf '#!/bin/sh -e\nexit 0\n' | cmp -s - "$D/r"; then rmf "$r"; else
      f=${p#mode }; f=${f%%,*}
      case $f in [0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) ;; *) f=755 ;; esac
      a=${r%/*}/.rc.local.net-tuning-new
      { cat "$D/r" > "$a" && chmod "$f" "$a" && mv -f "$a" "$r" && ! grep -qxF "$b" "$r"; } || { rm -f "$a"; x 1 "cannot write $r on $H after the values were restored: run the delete again"; }
      case $p in *", cksum "*", modified "*)
        f=${p#*, cksum }
        [ "$(cksum < "$r")" != "${f%%, modified *}" ] || touch -d "${p#*, modified }" "$r" ;;
      esac
    fi
  fi
  [ $u = 0 ] || [ ! -d /run/systemd/system ] || systemctl daemon-reload || w "systemctl daemon-reload failed on $H after removing the unit"
}
