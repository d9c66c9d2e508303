# The sysctl kind of the fallback restore (after restore.sh): values in /proc/sys, our sysctl.d and modules-load files.
RK=sysctl
# the adoption part (restore-adopt-sysctl.sh, in the program of a plan that adopts) redefines a_dir and a_put: without
# it, a plan line "@adopted" is a bad line (exit 5), as a plan that adopts never gets this program
a_dir() { return 1; }
a_put() { :; }
k_dir() {
  a_dir "$1" && return
  case ${1#@file /etc/sysctl.d/} in *[!A-Za-z0-9._-]* | .* | "$1") return 1 ;; esac
}
k_ok() {
  case $1 in '' | [./-]* | *..* | *[!A-Za-z0-9._/:-]*) return 1 ;; esac
  case $2 in *[!A-Za-z0-9\ "$T"._:,+-]*) return 1 ;; esac
}
# p = the /proc/sys file of the key (sysctl(8): a key whose first separator is "." is dotted, "/" in it stands for
# "."); not the read builtin: /proc/sys answers only a read at offset 0
k_get() {
  case ${1#"${1%%[./]*}"} in
    .*) p=/proc/sys/$(printf %s "$1" | tr ./ /.) ;;
    *) p=/proc/sys/$1 ;;
  esac
  e=$2
  # absent only when the file is gone; an empty value is a value (the engine's read keeps it too)
  [ -e "$p" ] || return 1
  g=$(cat "$p" 2>&1) || { z="cannot read $p: $g"; return 2; }
}
k_set() { printf '%s\n' "$2" > "$p" || z=$(sysctl -w "$1=$2" 2>&1); }
k_files() {
  for f in /etc/sysctl.d/*.conf /etc/modules-load.d/pulumi-net-tuning-"$I".conf; do ! ours "$f" || rmf "$f"; done
  while read -r f; do ! ours "$f" || rmf "$f"; done < a
  a_put
}
