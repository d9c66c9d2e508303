# The nic kind of the fallback restore (after restore.sh): ethtool settings, txqueuelen, RPS/RFS, IRQ affinity,
# rps_sock_flow_entries; our unit (and its links), boot script, rc.local block. The plan's `@feature-args` gives the
# ethtool -K name (NAME=ARG) of each feature among the originals whose name ethtool -k shows differs.
RK=nic
N=''
F=''
# the adoption part (restore-adopt-nic.sh, in the program of a plan that adopted rc.local lines) redefines a_put
a_put() { :; }
k_dir() {
  case $1 in
    '@interface '*) N=${1#* }; case $N in '' | . | .. | *[!A-Za-z0-9._@+-]*) return 1 ;; esac; [ ${#N} -le 15 ] ;;
    '@feature-args '*) F=${1#* }; case $F in *[!a-z0-9=\ -]*) return 1 ;; esac ;;
    *) return 1 ;;
  esac
}
# a key of this interface (a group the kind does not know reads as absent: a warning), or the host-wide one
k_ok() {
  case $1 in
    net.core.rps_sock_flow_entries | "$N"/txqueuelen) ;;
    "$N"/[a-z]*.*) case ${1#"$N"/*.} in '' | *[!a-z0-9_-]*) return 1 ;; esac ;;
    *) return 1 ;;
  esac
  case $2 in -) case $1 in */r[pf]s.*) ;; *) return 1 ;; esac ;; '' | -* | *[!A-Za-z0-9,.-]*) return 1 ;; esac
}
# M = a CPU mask as compared: lowercase hex without commas and leading zeros
k_mask() { M=$(echo "$1" | sed 'y/ABCDEF/abcdef/;s/,//g;s/^0*//;s/^$/0/'); }
# k_eth OPT: g = the setting ${s#*.} in `ethtool OPT` (-g/-l: the current settings; -c: "Adaptive RX: off  TX: off",
# "rx-frame-low" of some versions; "n/a" = not supported), ethtool 4.8-6.x text output; 1 = ethtool missing or failed
# on an interface that exists (z says which)
k_eth() {
  ethtool "$1" "$N" > t || {
    z="ethtool $1 $N failed (exit $?)"
    case $z in *127?) z="ethtool is not installed" ;; esac
    [ ! -d /sys/class/net/"$N" ]
    return
  }
  g=$(awk -v f="${s#*.}" -v o="$1" '
    /^Current hardware/ { c = 1 }
    /:/ {
      k = $0; sub(/:.*/, "", k); sub(/^[ \t]+/, "", k); k = tolower(k); gsub(/ /, "-", k); sub(/-frame-/, "-frames-", k)
      if (k == "adaptive-rx" && f == "adaptive-tx") { print $5; exit }
      sub(/^[^:]*:[ \t]*/, "")
      if (k == f && (c || o !~ /[gl]/)) { print $1; exit }
    }' t)
}
# a queue that does not exist reads as "-" (channels may have removed it); "-" of a queue that exists means 0;
# 2 = cannot be read now (k_eth)
k_get() {
  s=${1#"$N"/}
  q=/sys/class/net/$N/queues/${s#*.}
  e=$2
  g=
  case $s in
    net.core.*) g=$(cat /proc/sys/net/core/rps_sock_flow_entries) ;;
    channel.*) k_eth -l || return 2 ;;
    ring.*) k_eth -g || return 2 ;;
    feature.*) k_eth -k || return 2 ;;
    coalesce.*) k_eth -c || return 2 ;;
    txqueuelen) g=$(cat "/sys/class/net/$N/tx_queue_len") ;;
    rps.*) [ -d "$q" ] && g=$(cat "$q/rps_cpus") && k_mask "$g" && g=$M ;;
    rfs.*) [ -d "$q" ] && g=$(cat "$q/rps_flow_cnt") ;;
    irq.*) g=$(cat "/proc/irq/${s#*.}/smp_affinity") && k_mask "$g" && g=$M ;;
  esac
  case $s in
    r?s.*) if [ ! -d "$q" ]; then g=-; elif [ "$e" = - ]; then e=0; fi ;;
  esac
  case $s$e in rps.*[!-] | irq.*) k_mask "$e"; e=$M ;; esac
  [ -n "$g" ] && [ "$g" != n/a ]
}
# k_run OPT [NAME]: ethtool OPT IF NAME VALUE; old ethtool's "no … parameters changed" (exit 80, or 1 for -L) is success
k_run() {
  z=$(ethtool "$1" "$N" "${2:-${s#*.}}" "$v" 2>&1) && return 0
  c=$?
  case $z in *"no "*" parameters changed"*) return 0 ;; esac
  [ $c = 80 ]
}
k_put() { printf '%s\n' "$v" > "$1"; }
# (s and q: set by k_get of the same key)
k_set() {
  v=$2
  [ "$v" != - ] || v=0
  case $s in
    net.core.*) k_put /proc/sys/net/core/rps_sock_flow_entries ;;
    channel.*) k_run -L ;;
    ring.*) k_run -G ;;
    feature.*)
      a=${s#*.}
      for P in $F; do [ "${P%=*}" != "$a" ] || a=${P#*=}; done
      k_run -K "$a" ;;
    coalesce.*) k_run -C ;;
    txqueuelen) z=$(ip link set dev "$N" txqueuelen "$v" 2>&1) ;;
    rps.*) k_put "$q/rps_cpus" ;;
    rfs.*) k_put "$q/rps_flow_cnt" ;;
    irq.*) k_put "/proc/irq/${s#*.}/smp_affinity" ;;
  esac
}
# k_unit UNIT: an own unit goes with its .wants links (the device's .wants directory when left empty)
k_unit() {
  ours "$1" || return 0
  for f in /etc/systemd/system/*.wants/"${1##*/}"; do
    [ ! -L "$f" ] || rmf "$f"
    case $f in */sys-subsystem-net-devices-*) rmdir "${f%/*}" ;; esac
  done
  rmf "$1"
  u=1
}
# k_rc RC.LOCAL: our block goes; rc.local as before it: gone if we created it, else its mode (the current one when
# not recorded) and time when unchanged; every byte outside the block kept, a missing final newline too (l: the last
# byte when not a newline)
k_rc() {
  : > r
  [ -f "$1" ] && grep -qxF "$b" "$1" || return 0
  l=$(tail -c 1 "$1")
  p=$(awk -v b="$b" -v e="# END pulumi-net-tuning $O $N" -v l="${l:+1}" '
    $0 == b { s = 1 }
    !s { if (q) print "" > "r"; printf "%s", $0 > "r"; q = NR }
    s && sub(/^# rc.local before this block: /, "") { print }
    $0 == e { s = 0; n = 1 }
    END { if (q && (!l || q < NR)) print "" > "r"; exit !n }' "$1") || x 1 "no END line of '$b' in $1: fix it by hand, then run the delete again"
  if [ "$p" = absent ] && printf '#!/bin/sh -e\nexit 0\n' | cmp -s - r; then rmf "$1"; else
    f=${p#mode }
    f=${f%%,*}
    case $f in [0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) ;; *) f= ;; esac
    a=${1%/*}/.rc.local.net-tuning-new
    { cp -p "$1" "$a" && cat r > "$a" && { [ -z "$f" ] || chmod "$f" "$a"; } && mv -f "$a" "$1" && ! grep -qxF "$b" "$1"; } || { rm -f "$a"; x 1 "values restored, but cannot write $1"; }
    case $p in *", cksum "*", modified "*)
      f=${p#*, cksum }
      [ "$(cksum < "$1")" != "${f%%, modified *}" ] || touch -d "${p#*, modified }" "$1" ;;
    esac
  fi
}
k_files() {
  [ -n "$N" ] || x 5 "no @interface"
  u=0
  b="# BEGIN pulumi-net-tuning $O $N"
  r=/etc/rc.local
  [ ! -d /etc/rc.d ] || r=/etc/rc.d/rc.local
  [ ! -L $r ] || r=$(readlink -f $r)
  k_rc "$r"
  k_unit "/etc/systemd/system/net-tuning-nic-$(printf %s "$N" | tr @+ __).service"
  f=/usr/local/libexec/net-tuning/nic-$N.sh
  ! ours "$f" || rmf "$f"
  # the journal's artefacts: a unit, script or rc.local of an earlier run under another name or path
  while read -r f; do
    case $f in */rc.local) [ "$f" = "$r" ] || k_rc "$f" ;; *.service) k_unit "$f" ;; *) ! ours "$f" || rmf "$f" ;; esac
  done < a
  a_put
  [ $u = 0 ] || [ ! -d /run/systemd/system ] || systemctl daemon-reload || w "systemctl daemon-reload failed on $H"
}
