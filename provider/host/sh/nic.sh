# pulumi-net-tuning: the nic kind (NicQueues). Sourced after runtime.sh.
# Keys: IF/channel.X, IF/ring.X, IF/feature.NAME, IF/coalesce.NAME, IF/txqueuelen, IF/rps.rx-N, IF/rfs.rx-N,
# IF/irq.N and net.core.rps_sock_flow_entries. ethtool's TEXT output is parsed (no --json before 5.8/6.2).
# A queue that does not exist (yet) reads as '-': channels may add or remove queues before RPS is applied.
NN_IF=''
NN_PERSIST=auto
NN_MODE=none
NN_RPS_CPUS=''
NN_RPS_FLOW=''
NN_RPS_BELOW=0
NN_IRQ_CPUS=''
NN_DRIVER=''
NN_LINKED=0
# The characters an original may have to be stored in Pulumi state (provider/nic/plan.ts ORIG_VALUE; compared by
# tests/unit/origChars.test.ts): a setting whose value on the host has any other is refused before anything changes.
NT_ORIG_CHARS='A-Za-z0-9 ,._:-'
NN_UNIT=''
NN_SCRIPT=''
NN_WANTS=''
NN_DEV=''
NN_DEVWANTS=''
NN_NEW_W=1
NN_NEW_D=1
NN_RCLOCAL=''
NN_PRIOR=absent
NN_TOUCH=''
NN_SYS=/sys/class/net
NN_CPU=/sys/devices/system/cpu
NN_INTERRUPTS=/proc/interrupts

# Interface names as NicQueues accepts them: 1-15 of [A-Za-z0-9._@+-], not "." or "..".
nn_valid_if() {
  case "$1" in ''|.|..|*[!A-Za-z0-9._@+-]*) return 1 ;; esac
  [ "${#1}" -le 15 ]
}
nn_uint() { case "$1" in ''|*[!0-9]*) return 1 ;; esac; [ "${#1}" -le 10 ]; }
nn_cpulist_ok() { case "$1" in ''|*[!0-9,-]*|,*|*,|*,,*) return 1 ;; esac; return 0; }

# @set KEY VALUE of an apply plan: validated against the NIC spec's lists (nicspec.sh), added to the requested settings.
nn_directive_set() {
  nn_k=${1%% *}; nn_v=${1#* }
  nn_spec "$nn_k" || case "$nn_k" in
    coalesce.*) nt_die 5 "unknown coalescing parameter '$nn_k'" ;;
    *) nt_die 5 "unknown nic setting '$nn_k'" ;;
  esac
  case "$nn_k" in feature.*) case "${nn_k#feature.}" in ''|*[!a-z0-9_-]*) nt_die 5 "invalid feature name '$nn_k'" ;; esac ;; esac
  case "$NN_CLASS:$nn_v" in
    onoff:on|onoff:off|ring:max) ;;
    onoff:*) nt_die 5 "invalid value '$nn_v' for $nn_k" ;;
    *) { nn_uint "$nn_v" && [ "$nn_v" -ge "$NN_MIN" ] && [ "$nn_v" -le "$NN_MAX" ]; } || nt_die 5 "invalid value '$nn_v' for $nn_k ($NN_MIN-$NN_MAX)" ;;
  esac
  printf '%s\t%s\n' "$nn_k" "$nn_v" >> "$NT_TMP/requested"
}

kind_directive() {
  case "$1" in
    interface) nn_valid_if "$2" || nt_die 5 "invalid interface name '$2'"; NN_IF=$2 ;;
    feature-args) ;; # a restore plan's -K names for the fallback restore (the engine has nn_feature_arg)
    *) command -v nn_apply_directive >/dev/null 2>&1 && nn_apply_directive "$1" "$2" || return 1 ;;
  esac
  return 0
}

# The directives only an apply plan has (a restore plan names the interface only).
nn_apply_directive() {
  case "$1" in
    persistence) case "$2" in systemd|rc.local|none|auto) NN_PERSIST=$2 ;; *) return 1 ;; esac ;;
    set) nn_directive_set "$2" ;;
    rps-cpus) [ "$2" = all ] || nn_cpulist_ok "$2" || nt_die 5 "invalid CPU list '$2'"; NN_RPS_CPUS=$2 ;;
    rps-flow-cnt) nn_uint "$2" || nt_die 5 "invalid rps_flow_cnt '$2'"; NN_RPS_FLOW=$2 ;;
    rps-only-below-cpus) case "$2" in 0|1) NN_RPS_BELOW=$2 ;; *) return 1 ;; esac ;;
    irq-cpus) [ "$2" = spread ] || nn_cpulist_ok "$2" || nt_die 5 "invalid CPU list '$2'"; NN_IRQ_CPUS=$2 ;;
    boot-override) case "$2" in error|warn|ignore) NN_BOOT=$2 ;; *) return 1 ;; esac ;;
    adopt-rc) nn_rc_adopt_directive "$1" "$2" ;;
    *) return 1 ;;
  esac
  return 0
}

kind_content() { nt_die 5 "a nic plan has no @content"; }

# ---------------------------------------------------------------------------------------- parsers
# nn_pt OPT TEXT: NN_PARSED = TEXT, what `ethtool OPT` printed (-g, -l, -k or -c), as "key<TAB>value" lines, in the
# shell (no process); nn_parse_sections (-g, -l), nn_parse_features (-k) and nn_parse_coalesce (-c) are the same as
# filters, stdin to stdout (the live read pipes ethtool into them). Formats of ethtool 4.8 (ioctl) through 6.x
# (netlink): "RX:\t\t4096", "n/a" for unsupported values, "Adaptive RX: off  TX: off", "name: on [fixed]",
# "rx-frame-low" shown for the -C argument "rx-frames-low". Keys and values: what comes before and after a line's
# first ":", the value without the blanks (spaces, tabs) around it.
#   -g, -l  max.rx, cur.rx, max.rx-mini, …, max.combined, cur.other: the lines after "Pre-set maximums:" and
#           "Current hardware settings:", the name in lowercase with its spaces as "-"
#   -k      name<TAB>on|off<TAB>1 when [fixed] else 0 (sub-features too: indented, given unindented), for the lines
#           whose value starts with the word on or off
#   -c      adaptive-rx, adaptive-tx, cqe-mode-rx, cqe-mode-tx (the words of their lines), and every line named with
#           [a-z][a-z0-9-]* (the -C argument names: "-frame-low"/"-frame-high" as "-frames-…")
nn_pt() {
  NN_PARSED='' nnp_s='' nnp_o=$1
  nnp_ifs=$IFS; IFS=$NT_NL; set -f
  for nnp_l in $2; do
    case $nnp_l in *:*) ;; *) continue ;; esac
    case $nnp_o$nnp_l in
      -[gl]'Pre-set maximums:'*) nnp_s=max.; continue ;;
      -[gl]'Current hardware settings:'*) nnp_s=cur.; continue ;;
      -k'Features for '* | -c'Coalesce parameters for '*) continue ;;
      -k*) nnp_l=${nnp_l#"${nnp_l%%[! 	]*}"} ;;
      -c'Adaptive RX:'* | -c'CQE mode RX:'*)
        IFS=' 	'
        # shellcheck disable=SC2086 # its words
        set -- $nnp_l
        IFS=$NT_NL
        case $nnp_l in
          A*) NN_PARSED=${NN_PARSED}adaptive-rx$NT_TAB${3-}${NT_NL}adaptive-tx$NT_TAB${5-}$NT_NL ;;
          *) NN_PARSED=${NN_PARSED}cqe-mode-rx$NT_TAB${4-}${NT_NL}cqe-mode-tx$NT_TAB${6-}$NT_NL ;;
        esac
        continue ;;
      -c[a-z]*) ;;
      -c*) continue ;;
      *) [ -n "$nnp_s" ] || continue ;;
    esac
    nnp_k=${nnp_l%%:*}; nnp_v=${nnp_l#*:}
    nnp_v=${nnp_v#"${nnp_v%%[! 	]*}"}
    case $nnp_o in
      -k)
        case $nnp_v in on | on[\ \	]*) nnp_w=on ;; off | off[\ \	]*) nnp_w=off ;; *) continue ;; esac
        case $nnp_v in *'[fixed]'*) nnp_w=$nnp_w${NT_TAB}1 ;; *) nnp_w=$nnp_w${NT_TAB}0 ;; esac
        NN_PARSED=$NN_PARSED$nnp_k$NT_TAB$nnp_w$NT_NL; continue ;;
      -c) case $nnp_k in *[!a-z0-9-]*) continue ;; *-frame-low | *-frame-high) nnp_k=${nnp_k%%-frame-*}-frames-${nnp_k#*-frame-} ;; esac ;;
      *) case $nnp_k in *[A-Z\ ]*) nn_lower "$nnp_k"; nnp_k=$NN_LOW ;; esac ;;
    esac
    NN_PARSED=$NN_PARSED$nnp_s$nnp_k$NT_TAB${nnp_v%"${nnp_v##*[! 	]}"}$NT_NL
  done
  IFS=$nnp_ifs; set +f
}

# nn_lower TEXT: NN_LOW = TEXT with A-Z in lowercase (the letter after it in NN_AZ) and every space as "-"
NN_AZ=AaBbCcDdEeFfGgHhIiJjKkLlMmNnOoPpQqRrSsTtUuVvWwXxYyZz
nn_lower() {
  NN_LOW='' nnw_r=$1
  while [ -n "$nnw_r" ]; do
    nnw_c=${nnw_r%"${nnw_r#?}"}; nnw_r=${nnw_r#?}
    case $nnw_c in ' ') nnw_c=- ;; [A-Z]) nnw_c=${NN_AZ#*"$nnw_c"}; nnw_c=${nnw_c%"${nnw_c#?}"} ;; esac
    NN_LOW=$NN_LOW$nnw_c
  done
}

# The filters: stdin (whole lines, and a last line without its newline) parsed by nn_pt OPT, printed
nn_parse_stdin() {
  nnp_t=''
  while IFS= read -r nnp_l || [ -n "$nnp_l" ]; do nnp_t=$nnp_t$nnp_l$NT_NL; done
  nn_pt "$1" "$nnp_t"
  printf '%s' "$NN_PARSED"
}
nn_parse_sections() { nn_parse_stdin -g; }
nn_parse_features() { nn_parse_stdin -k; }
nn_parse_coalesce() { nn_parse_stdin -c; }

# ethtool -i: the driver name (for messages): the first word after "driver:" (one process: the shell parses)
nn_driver() {
  NN_DRIVER=''
  nn_di=$(ethtool -i "$1" 2>/dev/null) || nn_di=''
  nn_ifs=$IFS; IFS=$NT_NL; set -f
  for nn_l in $nn_di; do
    # shellcheck disable=SC2086 # the words after "driver:"
    case $nn_l in driver:*) IFS=' 	'; set -- ${nn_l#driver:}; NN_DRIVER=${1:-}; break ;; esac
  done
  IFS=$nn_ifs; set +f
  [ -n "$NN_DRIVER" ] || NN_DRIVER=unknown
}

# nn_feature_arg (the -K argument of a feature) is in nicspec.sh, generated from the NIC spec.

# ------------------------------------------------------------------------------------- CPU masks
# Masks are kept in one canonical form: lowercase hex, no leading zeros, comma-separated 32-bit words,
# most significant first ("3", "1,ffffffff"). The kernel accepts it and reads back zero-padded words.

# nn_cpulist_expand LIST: one CPU number per line ("0-3,8" -> 0 1 2 3 8)
nn_cpulist_expand() {
  printf '%s\n' "$1" | awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); lo = r[1] + 0; hi = (n > 1) ? r[2] + 0 : lo; for (c = lo; c <= hi; c++) print c } }'
}

# nn_cpulist_shell LIST: for a plain LIST (every item N or N-M, decimal without leading zeros, at most 4 digits) in
# the shell: NN_NCPU = the number of CPUs as nn_cpulist_expand prints them (a CPU named twice counts twice), NN_MASK =
# the canonical mask of its CPUs (hex digits of 4 CPUs each, then nn_mask_norm); 1 for any other list (awk does those)
nn_cpulist_shell() {
  NN_NCPU=0 NN_MASK=0 nncp_top=-1 nncp_pass=1
  while [ "$nncp_pass" -le 2 ]; do
    nncp_r=$1,
    while [ -n "$nncp_r" ]; do
      nncp_i=${nncp_r%%,*}; nncp_r=${nncp_r#*,}
      case $nncp_i in *-*) nncp_a=${nncp_i%%-*} nncp_b=${nncp_i#*-} ;; *) nncp_a=$nncp_i nncp_b=$nncp_i ;; esac
      for nncp_n in "$nncp_a" "$nncp_b"; do
        case $nncp_n in 0 | [1-9] | [1-9][0-9] | [1-9][0-9][0-9] | [1-9][0-9][0-9][0-9]) ;; *) return 1 ;; esac
      done
      [ "$nncp_b" -ge "$nncp_a" ] || continue
      if [ "$nncp_pass" = 1 ]; then
        NN_NCPU=$((NN_NCPU + nncp_b - nncp_a + 1))
        [ $((nncp_b / 4)) -le "$nncp_top" ] || nncp_top=$((nncp_b / 4))
        continue
      fi
      # the bits of CPUs a..b in each hex digit d (CPUs 4d..4d+3)
      nncp_d=$((nncp_a / 4))
      while [ "$nncp_d" -le $((nncp_b / 4)) ]; do
        nncp_f=$((nncp_a - 4 * nncp_d)); [ "$nncp_f" -ge 0 ] || nncp_f=0
        nncp_t=$((nncp_b - 4 * nncp_d)); [ "$nncp_t" -le 3 ] || nncp_t=3
        eval "nncp_x$nncp_d=\$((nncp_x$nncp_d | (((1 << (nncp_t - nncp_f + 1)) - 1) << nncp_f)))"
        nncp_d=$((nncp_d + 1))
      done
    done
    if [ "$nncp_pass" = 1 ]; then
      nncp_d=0; while [ "$nncp_d" -le "$nncp_top" ]; do eval "nncp_x$nncp_d=0"; nncp_d=$((nncp_d + 1)); done
    fi
    nncp_pass=$((nncp_pass + 1))
  done
  nncp_h=0 nncp_d=$nncp_top
  while [ "$nncp_d" -ge 0 ]; do
    eval "nncp_v=\$nncp_x$nncp_d"
    # shellcheck disable=SC2154 # nncp_v is assigned by the eval
    case $nncp_v in 10) nncp_v=a ;; 11) nncp_v=b ;; 12) nncp_v=c ;; 13) nncp_v=d ;; 14) nncp_v=e ;; 15) nncp_v=f ;; esac
    nncp_h=$nncp_h$nncp_v; nncp_d=$((nncp_d - 1))
  done
  nn_mask_norm "$nncp_h"; NN_MASK=$NN_NORM
}

# nn_mask_of LIST: NN_MASK = the canonical mask of the CPUs in LIST; nn_cpu_count LIST: NN_NCPU = how many CPUs
# nn_cpulist_expand prints for LIST. In the shell for a plain list (nn_cpulist_shell), else awk.
nn_mask_of() { nn_cpulist_shell "$1" || NN_MASK=$(nn_mask_awk "$1"); }
nn_cpu_count() { nn_cpulist_shell "$1" || NN_NCPU=$(nn_cpulist_expand "$1" | wc -l); }

# nn_mask_from_list LIST: prints the canonical mask of the CPUs in LIST
nn_mask_from_list() { nn_mask_of "$1"; printf '%s\n' "$NN_MASK"; }
nn_mask_awk() {
  nn_cpulist_expand "$1" | awk '
    BEGIN { max = 0 }
    { c = $1 + 0; if (!(c in seen)) { seen[c] = 1; w = int(c / 32); word[w] += 2 ^ (c % 32); if (w > max) max = w } }
    function hex(v, pad) { s = sprintf("%04x%04x", int(v / 65536), v % 65536); if (!pad) { sub(/^0+/, "", s); if (s == "") s = "0" } return s }
    END {
      top = -1
      for (w = max; w >= 0; w--) if (word[w] + 0 > 0) { top = w; break }
      if (top < 0) { print "0"; exit }
      s = hex(word[top] + 0, 0)
      for (w = top - 1; w >= 0; w--) s = s "," hex(word[w] + 0, 1)
      print s
    }'
}

# nn_mask_norm MASK: NN_NORM = the canonical form of a mask as the kernel prints it ("00000000,00000003" -> "3")
nn_mask_norm() {
  # In the shell for a plain mask of hex digits and commas (no process; the same output), else awk.
  case $1 in *[!0-9A-Fa-f,]* | '') ;; *)
    nnm_h=$1 nnm_o=''
    while [ -n "$nnm_h" ]; do
      nnm_c=${nnm_h%"${nnm_h#?}"}; nnm_h=${nnm_h#?}
      case $nnm_c in ,) continue ;; A) nnm_c=a ;; B) nnm_c=b ;; C) nnm_c=c ;; D) nnm_c=d ;; E) nnm_c=e ;; F) nnm_c=f ;; esac
      [ -z "$nnm_o" ] && [ "$nnm_c" = 0 ] && continue
      nnm_o=$nnm_o$nnm_c
    done
    [ -n "$nnm_o" ] || { NN_NORM=0; return 0; }
    nnm_h=''
    while [ "${#nnm_o}" -gt 8 ]; do nnm_h=,${nnm_o#"${nnm_o%????????}"}$nnm_h; nnm_o=${nnm_o%????????}; done
    NN_NORM=$nnm_o$nnm_h; return 0 ;;
  esac
  NN_NORM=$(printf '%s\n' "$1" | awk '{
    h = tolower($0); gsub(/[^0-9a-f]/, "", h); sub(/^0+/, "", h)
    if (h == "") { print "0"; exit }
    out = ""
    while (length(h) > 8) { out = "," substr(h, length(h) - 7) out; h = substr(h, 1, length(h) - 8) }
    print h out
  }')
}

# nn_cpus_outside LIST ALLOWED: the CPUs of LIST not in ALLOWED (both kernel cpulist syntax), space-separated
nn_cpus_outside() {
  { nn_cpulist_expand "$2" | sed 's/^/a /'; nn_cpulist_expand "$1" | sed 's/^/w /'; } |
    awk '$1 == "a" { ok[$2] = 1; next } !($2 in ok) && !($2 in done) { done[$2] = 1; printf "%s%s", sep, $2; sep = " " } END { print "" }'
}


# ------------------------------------------------------------------------------------ get / set
nn_split_key() { # KEY -> NN_KIF (interface or ''), NN_SUB
  case "$1" in
    net.core.*) NN_KIF=''; NN_SUB=$1 ;;
    */*) NN_KIF=${1%%/*}; NN_SUB=${1#*/} ;;
    *) NN_KIF=''; NN_SUB=$1 ;;
  esac
}

# nn_ethtool OPT IF [ERRFILE]: NN_ET = `ethtool OPT IF` (-g, -l, -k or -c) parsed (nn_pt), its stderr in ERRFILE
# (default: none). ONE ethtool process per option and interface for every read until an ethtool set on that interface
# (kind_set calls nn_ethtool_forget): the preflight's answer is the snapshot's, a value read back after a set is the
# report's. 1 when ethtool fails (NN_ETS = its exit status; a failure is not kept).
NNE_IF_g='' NNE_IF_l='' NNE_IF_k='' NNE_IF_c=''
nn_ethtool() {
  nne_o=${1#-}
  eval "nne_at=\$NNE_IF_$nne_o"
  # shellcheck disable=SC2154 # nne_at is assigned by the eval
  if [ -n "$2" ] && [ "$nne_at" = "$2" ]; then eval "NN_ET=\$NNE_OUT_$nne_o"; return 0; fi
  NN_ETS=0
  nne_t=$(ethtool "$1" "$2" 2>"${3:-/dev/null}") || NN_ETS=$?
  [ "$NN_ETS" = 0 ] || return 1
  nn_pt "$1" "$nne_t"; NN_ET=$NN_PARSED
  eval "NNE_IF_$nne_o=\$2 NNE_OUT_$nne_o=\$NN_ET"
}
# shellcheck disable=SC2034 # read through eval (nn_ethtool)
nn_ethtool_forget() { NNE_IF_g='' NNE_IF_l='' NNE_IF_k='' NNE_IF_c=''; }

# nn_field TEXT NAME: NN_F = the rest of the first line of TEXT (nn_pt lines) whose first field is NAME (its second
# field and after); 1 when no line has it
nn_field() {
  NN_F=''
  nnf_ifs=$IFS; IFS=$NT_NL; set -f
  for nnf_l in $1; do
    case $nnf_l in "$2$NT_TAB"*) NN_F=${nnf_l#"$2$NT_TAB"}; IFS=$nnf_ifs; set +f; return 0 ;; "$2") IFS=$nnf_ifs; set +f; return 0 ;; esac
  done
  IFS=$nnf_ifs; set +f
  return 1
}

# nn_ethtool_value OPT IF FIELD: sets NT_GOT to FIELD of `ethtool OPT IF` (nn_ethtool: one process per option and
# interface until a set); 1 = absent (no such interface, or ethtool shows no such field or "n/a"), 2 = ethtool missing
# or failed on an existing interface (NT_ERR says which)
nn_ethtool_value() {
  NT_GOT=''
  nn_ethtool "$1" "$2" || {
    [ -d "$NN_SYS/$2" ] || return 1
    NT_ERR="ethtool $1 $2 failed (exit $NN_ETS)"
    [ "$NN_ETS" != 127 ] || NT_ERR="ethtool is not installed (install the ethtool package)"
    return 2
  }
  nn_field "$NN_ET" "$3" && NT_GOT=${NN_F%%"$NT_TAB"*}
  [ -n "$NT_GOT" ] && [ "$NT_GOT" != n/a ]
}

# nn_cat FILE: NT_GOT = its first line (as `$(cat FILE)` for the one-line files of sysfs and /proc/irq, which answer
# the read builtin's byte-wise reads at any offset; /proc/sys does not), no process; 1 when it cannot be read
nn_cat() {
  NT_GOT=''
  IFS= read -r NT_GOT 2>/dev/null < "$1" || [ -n "$NT_GOT" ] || [ -r "$1" ]
}

kind_get() {
  NT_GOT=''
  nn_split_key "$1"
  case "$NN_SUB" in
    net.core.rps_sock_flow_entries)
      [ -r /proc/sys/net/core/rps_sock_flow_entries ] || return 1
      NT_GOT=$(cat /proc/sys/net/core/rps_sock_flow_entries 2>/dev/null) ;;
    channel.*) nn_ethtool_value -l "$NN_KIF" "cur.${NN_SUB#channel.}"; return ;;
    ring.*) nn_ethtool_value -g "$NN_KIF" "cur.${NN_SUB#ring.}"; return ;;
    feature.*) nn_ethtool_value -k "$NN_KIF" "${NN_SUB#feature.}"; return ;;
    coalesce.*) nn_ethtool_value -c "$NN_KIF" "${NN_SUB#coalesce.}"; return ;;
    txqueuelen) nn_cat "$NN_SYS/$NN_KIF/tx_queue_len" ;;
    rps.rx-*|rfs.rx-*)
      nn_q=$NN_SYS/$NN_KIF/queues/${NN_SUB#r?s.}
      if [ ! -d "$nn_q" ]; then NT_GOT=-; return 0; fi
      case "$NN_SUB" in
        # a mask file never reads empty: an empty read is a failed one (not the mask 0)
        rps.*) { nn_cat "$nn_q/rps_cpus" && [ -n "$NT_GOT" ]; } || return 1; nn_mask_norm "$NT_GOT"; NT_GOT=$NN_NORM ;;
        *) nn_cat "$nn_q/rps_flow_cnt" ;;
      esac ;;
    irq.*)
      { nn_cat "/proc/irq/${NN_SUB#irq.}/smp_affinity" && [ -n "$NT_GOT" ]; } || return 1
      nn_mask_norm "$NT_GOT"; NT_GOT=$NN_NORM ;;
    *) return 1 ;;
  esac
  [ -n "$NT_GOT" ]
}

# nn_live_ethtool KEY: the live read of a ring, channel, feature or coalescing key (engine operation "live"): what the
# preflight's nn_check_limits, nn_check_features and nn_check_coalesce compare, so the preview refuses what they refuse
# (components/live.ts, with provider/host/messages.ts nicRefusals). Per key: "value<TAB>KEY<TAB>current" (or
# "unreadable<TAB>KEY"); a ring or channel also "max<TAB>KEY<TAB>maximum" as ethtool shows it ("n/a", or empty when it
# shows none); a feature or coalescing parameter "shown<TAB>KEY<TAB>text" ("on [fixed]", "n/a", …) or, when ethtool
# does not list it, "absent<TAB>KEY". Per interface and group whose ethtool fails on an existing interface:
# "unsupported<TAB>IF<TAB>group<TAB>what it said on stderr" (every key of it unreadable). Once per interface
# "driver<TAB>IF<TAB>name" where a message may name it (rings, channels, coalescing; a group refused, a feature absent
# or [fixed]). ONE `ethtool -g|-l|-k|-c` piped into one parse per interface and group, whatever the number of keys (its
# stderr captured by the same command substitution), and at most one `ethtool -i`. 1 when KEY is none of these.
NNL_DRIVERS=''
nn_live_ethtool() {
  nn_split_key "$1"
  [ -n "$NN_KIF" ] || return 1
  nnl_g=${NN_SUB%%.*}; nnl_n=${NN_SUB#*.}
  case $nnl_g in
    ring | channel) nn_limit_group "$nnl_g"; nnl_opt=$NN_LG_OPT; nnl_parse=nn_parse_sections ;;
    feature) nnl_opt=-k; nnl_parse=nn_parse_features ;;
    coalesce) nnl_opt=-c; nnl_parse=nn_parse_coalesce ;;
    *) return 1 ;;
  esac
  nnl_at=''; eval "nnl_at=\${NNL_AT_$nnl_g-}"
  if [ "$nnl_at" = "$NN_KIF" ]; then
    eval "nnl_out=\$NNL_OUT_$nnl_g"
  else
    # the parsed answer, and ethtool's stderr through fd 3 into the same capture: a parsed line has a tab, so none
    # = ethtool failed (every answer has lines) and the capture is what it said
    nnl_out=$( { ethtool "$nnl_opt" "$NN_KIF" 2>&3 3>&- | "$nnl_parse" 3>&-; } 3>&1 )
    eval "NNL_AT_$nnl_g=\$NN_KIF NNL_OUT_$nnl_g=\$nnl_out"
    case $nnl_out in *"$NT_TAB"*) ;; *)
      # the preflight's refusal of the group (nn_said: newlines as spaces, no trailing space); not for an interface
      # that does not exist or without ethtool (the preflight refuses those in other words)
      if [ -d "$NN_SYS/$NN_KIF" ] && command -v ethtool >/dev/null 2>&1; then
        nnl_said=$nnl_out
        while :; do case $nnl_said in *"$NT_NL"*) nnl_said="${nnl_said%%"$NT_NL"*} ${nnl_said#*"$NT_NL"}" ;; *) break ;; esac; done
        while :; do case $nnl_said in *' ') nnl_said=${nnl_said% } ;; *) break ;; esac; done
        nn_live_driver "$NN_KIF"
        printf 'unsupported\t%s\t%s\t%s\n' "$NN_KIF" "$nnl_g" "$nnl_said"
      fi ;;
    esac
  fi
  case $nnl_out in *"$NT_TAB"*) ;; *) printf 'unreadable\t%s\n' "$1"; return 0 ;; esac
  # the first line of this key (as the preflight's nt_lookup): ring/channel cur.N and max.N, else N
  nnl_cur='' nnl_max='' nnl_line='' nnl_found=0
  nn_ifs=$IFS; IFS=$NT_NL; set -f
  for nn_l in $nnl_out; do
    case $nn_l in
      "cur.$nnl_n$NT_TAB"*) [ -n "$nnl_cur" ] || nnl_cur=${nn_l#*"$NT_TAB"} ;;
      "max.$nnl_n$NT_TAB"*) [ -n "$nnl_max" ] || nnl_max=${nn_l#*"$NT_TAB"} ;;
      "$nnl_n$NT_TAB"*) [ "$nnl_found" = 1 ] || { nnl_line=${nn_l#*"$NT_TAB"}; nnl_found=1; } ;;
    esac
  done
  IFS=$nn_ifs; set +f
  case $nnl_g in
    ring | channel)
      nn_live_driver "$NN_KIF"
      if [ -n "$nnl_cur" ] && [ "$nnl_cur" != n/a ]; then nt_norm "$nnl_cur"; printf 'value\t%s\t%s\n' "$1" "$NT_NORM"
      else printf 'unreadable\t%s\n' "$1"; fi
      printf 'max\t%s\t%s\n' "$1" "$nnl_max" ;;
    feature)
      if [ "$nnl_found" = 0 ]; then nn_live_driver "$NN_KIF"; printf 'unreadable\t%s\nabsent\t%s\n' "$1" "$1"; return 0; fi
      # nn_parse_features: on|off<TAB>1 when [fixed]
      nnl_cur=${nnl_line%%"$NT_TAB"*}
      printf 'value\t%s\t%s\n' "$1" "$nnl_cur"
      case $nnl_line in
        *"$NT_TAB"1) nn_live_driver "$NN_KIF"; printf 'shown\t%s\t%s [fixed]\n' "$1" "$nnl_cur" ;;
        *) printf 'shown\t%s\t%s\n' "$1" "$nnl_cur" ;;
      esac ;;
    coalesce)
      nn_live_driver "$NN_KIF"
      if [ "$nnl_found" = 0 ]; then printf 'unreadable\t%s\nabsent\t%s\n' "$1" "$1"; return 0; fi
      if [ -n "$nnl_line" ] && [ "$nnl_line" != n/a ]; then nt_norm "$nnl_line"; printf 'value\t%s\t%s\n' "$1" "$NT_NORM"
      else printf 'unreadable\t%s\n' "$1"; fi
      printf 'shown\t%s\t%s\n' "$1" "$nnl_line" ;;
  esac
}

# nn_live_iface FIELDS: what the preflight refuses before reading the interface
# (kind_preflight: a missing interface, no ethtool), as the live read's "no-interface<TAB>IF<TAB>interfaces" /
# "no-ethtool" lines, and the host's name for their messages ("host<TAB>hostname<TAB>NT_HOSTNAME"); then, for an
# interface that exists, the preflight's RPS and IRQ refusals in its words (nn_rps_refusals, nn_irq_refusals) as
# "refuse<TAB>text" lines: RPS-CPUS "all" or a CPU list, IRQ-CPUS "spread" or a CPU list (empty: not declared),
# SOCKFLOW 1 when rps.sockFlowEntries is declared; and with PERSISTENCE (the plan's word) and OWNER-LABEL its
# persistence refusals (nn_persist_refusals). Fields: IF<TAB>RPS-CPUS<TAB>IRQ-CPUS<TAB>SOCKFLOW<TAB>PERSISTENCE<TAB>OWNER-LABEL.
nn_live_iface() {
  NN_IF=${1%%"$NT_TAB"*}; nnl_r=''; case $1 in *"$NT_TAB"*) nnl_r=${1#*"$NT_TAB"} ;; esac
  NN_RPS_CPUS=${nnl_r%%"$NT_TAB"*}; nnl_r=${nnl_r#*"$NT_TAB"}
  NN_IRQ_CPUS=${nnl_r%%"$NT_TAB"*}; nnl_r=${nnl_r#*"$NT_TAB"}
  nnl_sf=${nnl_r%%"$NT_TAB"*}; nnl_r=${nnl_r#*"$NT_TAB"}
  NN_PERSIST=${nnl_r%%"$NT_TAB"*}; nnl_r=${nnl_r#*"$NT_TAB"}
  # then the owner's label, bootOverride's check (error, warn; empty: ignore), whether RPS waits for the queue count
  # (rps.onlyWhenQueuesBelowCpus), and the adoptRcLocalLines entries ("K line", one a field: the rest of the line)
  nnl_label=${nnl_r%%"$NT_TAB"*}; nnl_boot='' nnl_below='' nnl_rc=''
  case $nnl_r in *"$NT_TAB"*)
    nnl_r=${nnl_r#*"$NT_TAB"}; nnl_boot=${nnl_r%%"$NT_TAB"*}; nnl_r=${nnl_r#*"$NT_TAB"}; nnl_below=${nnl_r%%"$NT_TAB"*}
    case $nnl_r in *"$NT_TAB"*) nnl_rc=${nnl_r#*"$NT_TAB"} ;; esac ;;
  esac
  nn_valid_if "$NN_IF" || return 0
  printf 'host\thostname\t%s\n' "$NT_HOSTNAME"
  if [ ! -e "$NN_SYS/$NN_IF" ]; then nn_ifaces; printf 'no-interface\t%s\t%s\n' "$NN_IF" "$NN_IFACES"; return 0; fi
  command -v ethtool >/dev/null 2>&1 || printf 'no-ethtool\n'
  case $NN_RPS_CPUS in all) ;; *) nn_cpulist_ok "$NN_RPS_CPUS" || NN_RPS_CPUS='' ;; esac
  case $NN_IRQ_CPUS in spread) ;; *) nn_cpulist_ok "$NN_IRQ_CPUS" || NN_IRQ_CPUS='' ;; esac
  [ "$nnl_sf" = 1 ] || nnl_sf=0
  NN_DRIVER=''
  nn_rps_refusals nt_live_refuse "$nnl_sf" -e
  nnl_irq=1; [ -z "$NN_IRQ_CPUS" ] || nn_irq_refusals nt_live_refuse || nnl_irq=0
  # what only root can tell (a read as root only, NT_LIVE_ROOT=1): another owner of the interface or of
  # rps_sock_flow_entries (the preflight's nn_check_other_owners: root's journals), and whether root can write the
  # declared tx_queue_len and the IRQs' smp_affinity
  if [ "${NT_LIVE_ROOT:-0}" = 1 ]; then
    # (NT_STATE and NT_JOURNAL: this resource's, set by nt_live_main for its own owners check; ntl_keys: its keys)
    # shellcheck disable=SC2154
    nn_other_owners nt_live_refuse "$nnl_sf"
    case " $ntl_keys " in *" $NN_IF/txqueuelen "*) nn_txq_writable nt_live_refuse || : ;; esac
    if [ -n "$NN_IRQ_CPUS" ] && [ "$nnl_irq" = 1 ]; then
      for nnl_q in $NN_IRQS; do nn_irq_writable nt_live_refuse "$nnl_q" || :; done
    fi
  fi
  # persistence: the plan's word and the owner's label (its marker lines); not valid or absent: not checked
  case $NN_PERSIST in systemd | rc.local | auto | none) ;; *) return 0 ;; esac
  case $nnl_label in '' | *[!A-Za-z0-9._:/@\ -]*) return 0 ;; esac
  NT_OWNER=$nnl_label NN_RC_AT=''
  nn_boot_paths
  nn_resolve_mode
  [ "$NN_MODE" = none ] || nn_persist_refusals nt_live_refuse live
  # adoptRcLocalLines (nn_rc_adopt_check, the preflight's rule): what this resource took out before is in root's
  # state dir; a read that cannot search it, of a resource applied before, leaves what depends on it to up
  NN_ADL=''
  if [ -n "$nnl_rc" ]; then
    nnl_w=''
    while [ -n "$nnl_rc" ]; do
      nnl_e=${nnl_rc%%"$NT_TAB"*}
      case $nnl_rc in *"$NT_TAB"*) nnl_rc=${nnl_rc#*"$NT_TAB"} ;; *) nnl_rc='' ;; esac
      case $nnl_e in [0-9]*' '*) nnl_w=$nnl_w${nnl_e%% *}$NT_TAB${nnl_e#* }$NT_NL ;; esac
    done
    NT_STATE=$NT_ROOT/nic NT_OWNER_ID=$ntl_id NN_RC_KNOWN=1
    # shellcheck disable=SC2154 # ntl_f, ntl_id: nt_live_main's record and owner id of this resource
    if [ -e "$NT_ROOT" ] && ! [ -x "$NT_STATE" ] && [ -e "$ntl_f" ]; then NN_RC_KNOWN=0; fi
    nn_rc_adopt_check nt_live_refuse "$nnl_w" || :
  fi
  [ "$NN_MODE" != none ] || return 0
  # bootOverride (nn_boot_overrides' scan and words): the classes of the declared keys; RPS and RFS left out when
  # whether they are set depends on the queue count after the channels change (rps.onlyWhenQueuesBelowCpus: up
  # checks them); the adopted rc.local lines (NN_ADL) are not findings
  case $nnl_boot in error | warn) NN_BOOT=$nnl_boot ;; *) return 0 ;; esac
  nn_classes=' '
  set -f
  # shellcheck disable=SC2154,SC2086 # ntl_keys: nt_live_main's words of this resource's keys
  for nnl_k in $ntl_keys; do
    case $nnl_below:$nnl_k in 1:*/rps.* | 1:*/rfs.*) continue ;; esac
    nn_boot_class "$nnl_k"
  done
  set +f
  nn_boot_findings nn_live_boot_cb "$(nn_boot_scan)"
  return 0
}
nn_live_boot_cb() { if [ "$1" = error ]; then nt_live_refuse "$2"; else printf 'warn\t%s\n' "$2"; fi; }

# nn_ifaces: NN_IFACES = the host's interfaces, space-separated (what the refusal of a missing one lists)
nn_ifaces() {
  NN_IFACES=''
  for nn_f in "$NN_SYS"/*; do [ -e "$nn_f" ] && NN_IFACES=${NN_IFACES:+$NN_IFACES }${nn_f##*/}; done
}

# nn_live_driver IF: "driver<TAB>IF<TAB>name", once per interface and read
nn_live_driver() {
  case " $NNL_DRIVERS " in *" $1 "*) return 0 ;; esac
  NNL_DRIVERS="$NNL_DRIVERS $1"; nn_driver "$1"; printf 'driver\t%s\t%s\n' "$1" "$NN_DRIVER"
}

# nn_run CMD…: runs a tool; old ethtool's "nothing changed" (exit 80 for -G/-C, exit 1 "no channel parameters
# changed, aborting" for -L) is success. NT_ERR = the tool's answer.
nn_run() {
  nn_s=0
  nn_out=$("$@" 2>&1) || nn_s=$?
  case "$nn_out" in *"no "*" parameters changed"*) return 0 ;; esac
  [ "$nn_s" = 0 ] || [ "$nn_s" = 80 ] && return 0
  NT_ERR="$* exited $nn_s: $(printf '%s' "$nn_out" | tr '\n' ' ')"
  return 1
}

# nn_write FILE VALUE: a sysfs/procfs write; NT_ERR = the kernel's answer as the shell reports it.
nn_write() {
  if { printf '%s\n' "$2" > "$1"; } 2>"$NT_TMP/write.err"; then return 0; fi
  NT_ERR="writing '$2' to $1 failed: $(tail -n 1 "$NT_TMP/write.err" | sed 's/^.*: //')"
  return 1
}

kind_set() {
  NT_ERR=''
  nn_split_key "$1"
  # Values also come from @orig lines (Pulumi state): only this interface's keys, only plain words.
  if [ -n "$NN_KIF" ] && [ "$NN_KIF" != "$NN_IF" ]; then NT_ERR="$1 is not a setting of $NN_IF"; return 1; fi
  case "$2" in ''|*[!A-Za-z0-9,.-]*) NT_ERR="invalid value '$2'"; return 1 ;; esac
  case "$NN_SUB" in
    net.core.rps_sock_flow_entries) nn_write /proc/sys/net/core/rps_sock_flow_entries "$2" ;;
    # an ethtool set: every ethtool answer read before it is read again (a driver may change more than the setting)
    channel.*) nn_ethtool_forget; nn_run ethtool -L "$NN_KIF" "${NN_SUB#channel.}" "$2" ;;
    ring.*) nn_ethtool_forget; nn_run ethtool -G "$NN_KIF" "${NN_SUB#ring.}" "$2" ;;
    feature.*)
      nn_ethtool_forget
      nn_feature_arg "${NN_SUB#feature.}"
      nn_run ethtool -K "$NN_KIF" "$NN_ARG" "$2" || return 1
      # -K reports partial success with exit 0 ("Actual changes: … [requested on]"): check this feature now.
      nn_said=$nn_out
      if kind_get "$1" && [ "$NT_GOT" != "$2" ]; then
        NT_ERR="ethtool -K $NN_KIF $NN_ARG $2 left it $NT_GOT: $(printf '%s' "$nn_said" | tr '\n' ' ')"
        return 1
      fi ;;
    coalesce.*) nn_ethtool_forget; nn_run ethtool -C "$NN_KIF" "${NN_SUB#coalesce.}" "$2" ;;
    # the same kernel call as `ip link set dev IF txqueuelen N` (dev_change_tx_queue_len), without a process; the
    # preflight checked that the file is writable
    txqueuelen) nn_write "$NN_SYS/$NN_KIF/tx_queue_len" "$2" ;;
    rps.rx-*|rfs.rx-*)
      nn_q=$NN_SYS/$NN_KIF/queues/${NN_SUB#r?s.}
      nn_v=$2
      if [ "$nn_v" = - ]; then [ -d "$nn_q" ] || return 0; nn_v=0; fi
      case "$NN_SUB" in rps.*) nn_write "$nn_q/rps_cpus" "$nn_v" ;; *) nn_write "$nn_q/rps_flow_cnt" "$nn_v" ;; esac ;;
    irq.*) nn_write "/proc/irq/${NN_SUB#irq.}/smp_affinity" "$2" ;;
    *) NT_ERR="unknown key $1"; return 1 ;;
  esac
}

kind_expect() {
  NT_EXPECT=$2
  nn_split_key "$1"
  case "$NN_SUB" in
    net.core.rps_sock_flow_entries) nt_pow2 "$2"; NT_EXPECT=$NT_POW2 ;;
    rps.rx-*|rfs.rx-*)
      if [ "$2" = - ]; then
        [ -d "$NN_SYS/$NN_KIF/queues/${NN_SUB#r?s.}" ] && NT_EXPECT=0
      else
        case "$NN_SUB" in rps.*) nn_mask_norm "$2"; NT_EXPECT=$NN_NORM ;; *) nt_pow2 "$2"; NT_EXPECT=$NT_POW2 ;; esac
      fi ;;
    irq.*) nn_mask_norm "$2"; NT_EXPECT=$NN_NORM ;;
  esac
  return 0
}

# ---------------------------------------------------------------------------------------- preflight
# nn_camel NAME: NN_CAMEL = NAME as the args spell it ("rx-usecs-irq" -> "rxUsecsIrq": each "-" dropped, the letter
# after it in uppercase), in the shell
nn_camel() {
  NN_CAMEL=${1%%-*}; nnc_r=$1
  while :; do
    case $nnc_r in *-*) nnc_r=${nnc_r#*-} ;; *) break ;; esac
    nnc_p=${nnc_r%%-*}; nnc_c=${nnc_p%"${nnc_p#?}"}
    # a-z in uppercase: the letter before it in NN_AZ
    case $nnc_c in [a-z]) nnc_c=${NN_AZ%"${NN_AZ#*"$nnc_c"}"}; nnc_c=${nnc_c%?}; nnc_c=${nnc_c#"${nnc_c%?}"} ;; esac
    NN_CAMEL=$NN_CAMEL$nnc_c${nnc_p#?}
  done
}

# nn_drv: NN_DRIVER, the interface's driver for a message or a driver's rule: one `ethtool -i`, only once one needs it
nn_drv() { [ -n "$NN_DRIVER" ] || nn_driver "$NN_IF"; }

# nn_parsed OPT NAME: `ethtool OPT IF` parsed (nn_ethtool) into $NT_TMP/NAME (and the tool's answer in NAME.err); 1 when
# it failed
nn_parsed() {
  if nn_ethtool "$1" "$NN_IF" "$NT_TMP/$2.err"; then
    printf '%s' "$NN_ET" > "$NT_TMP/$2"
    return 0
  fi
  : > "$NT_TMP/$2"
  return 1
}
nn_said() { tr '\n' ' ' < "$NT_TMP/$1.err" | sed 's/ *$//'; }

nn_requested() { # PREFIX: the requested settings with that prefix, "name<TAB>value", prefix removed (the shell's read)
  [ -f "$NT_TMP/requested" ] || return 0
  while IFS= read -r nnq_l; do
    case $nnq_l in "$1"*) ;; *) continue ;; esac
    nnq_l=${nnq_l#"$1"}
    case $nnq_l in
      *"$NT_TAB"*) nnq_v=${nnq_l#*"$NT_TAB"}; printf '%s\t%s\n' "${nnq_l%%"$NT_TAB"*}" "${nnq_v%%"$NT_TAB"*}" ;;
      *) printf '%s\t\n' "$nnq_l" ;;
    esac
  done < "$NT_TMP/requested"
}

# nn_check_limits GROUP (channel, ring): the requested rings/channels within the driver's pre-set maximums, "max"
# resolved. Its refusals are the live read's at preview too (nn_limit_group and the nn_msg_* functions are generated
# from provider/host/messages.ts, which components/live.ts uses).
nn_check_limits() {
  nn_limit_group "$1"
  nn_requested "$1." > "$NT_TMP/req.$1"
  [ -s "$NT_TMP/req.$1" ] || return 0
  if ! nn_parsed "$NN_LG_OPT" "$1"; then
    nn_drv; nn_msg_nogroup "$NN_LG_ARG" "$NN_IF" "$NN_DRIVER" "$NN_LG_WHAT" "$NN_LG_OPT" "$(nn_said "$1")"; nt_problem "$NN_MSG"
    return 0
  fi
  while IFS="$NT_TAB" read -r nn_n nn_v; do
    nt_lookup "$NT_TMP/$1" "max.$nn_n"; nn_max=$NT_FOUND
    nt_lookup "$NT_TMP/$1" "cur.$nn_n"; nn_cur=$NT_FOUND
    nn_camel "$nn_n"; nn_ts=$NN_LG_ARG.$NN_CAMEL
    if [ -z "$nn_max" ] || [ "$nn_max" = n/a ] || [ -z "$nn_cur" ] || [ "$nn_cur" = n/a ] || { [ "$nn_max" = 0 ] && [ "$nn_cur" = 0 ]; }; then
      nn_drv; nn_msg_nofield "$nn_ts" "$NN_IF" "$NN_DRIVER" "$NN_LG_OPT" "$nn_n" "$NN_LG_WHAT"; nt_problem "$NN_MSG"
      continue
    fi
    [ "$nn_v" = max ] && nn_v=$nn_max
    if [ "$nn_v" -gt "$nn_max" ]; then
      nn_drv; nn_msg_exceeds "$nn_ts" "$nn_v" "$NN_IF" "$nn_max" "$NN_DRIVER" "$NN_LG_OPT" "$NN_LG_ORMAX"; nt_problem "$NN_MSG"
      continue
    fi
    printf '%s\t%s\n' "$NN_IF/$1.$nn_n" "$nn_v" >> "$NT_TMP/want.$1"
  done < "$NT_TMP/req.$1"
}

nn_check_features() {
  nn_requested feature. > "$NT_TMP/req.feature"
  [ -s "$NT_TMP/req.feature" ] || return 0
  if ! nn_parsed -k feature; then
    nn_msg_features_unreadable "$NN_IF" "$(nn_said feature)"; nt_problem "$NN_MSG"
    return 0
  fi
  while IFS="$NT_TAB" read -r nn_n nn_v; do
    # the first line of this feature: "on|off<TAB>0|1" (nn_pt -k), as "on 0"
    nn_line=''; nn_field "$NN_ET" "$nn_n" && nn_line="${NN_F%%"$NT_TAB"*} ${NN_F#*"$NT_TAB"}"
    if [ -z "$nn_line" ]; then
      nn_drv; nn_msg_feature_absent "$nn_n" "$NN_IF" "$NN_DRIVER"; nt_problem "$NN_MSG"
      continue
    fi
    nn_cur=${nn_line% *}
    if [ "${nn_line#* }" = 1 ] && [ "$nn_cur" != "$nn_v" ]; then
      nn_drv; nn_msg_feature_fixed "$nn_n" "$nn_cur" "$NN_IF" "$NN_DRIVER" "$nn_v"; nt_problem "$NN_MSG"
      continue
    fi
    printf '%s\t%s\n' "$NN_IF/feature.$nn_n" "$nn_v" >> "$NT_TMP/want.feature"
  done < "$NT_TMP/req.feature"
}

nn_check_coalesce() {
  nn_requested coalesce. > "$NT_TMP/req.coalesce"
  [ -s "$NT_TMP/req.coalesce" ] || return 0
  nn_drv # the driver's rules (nn_coalesce_range) and messages
  if ! nn_parsed -c coalesce; then
    nn_msg_coalesce_none "$NN_IF" "$NN_DRIVER" "$(nn_said coalesce)"; nt_problem "$NN_MSG"
    return 0
  fi
  while IFS="$NT_TAB" read -r nn_n nn_v; do
    if ! nt_lookup "$NT_TMP/coalesce" "$nn_n" || [ "$NT_FOUND" = n/a ]; then
      nn_camel "$nn_n"; nn_msg_coalesce_nofield "coalesce.$NN_CAMEL" "$nn_n" "$NN_IF" "$NN_DRIVER" "${NT_FOUND:-absent}"; nt_problem "$NN_MSG"
      continue
    fi
    # known driver ranges (provider/host/messages.ts COALESCE_DRIVER_RANGES): refused before anything changes
    nn_coalesce_range "$NN_DRIVER" "$nn_n" "$nn_v"
    if [ -n "$NN_ACCEPTS" ]; then
      nn_camel "$nn_n"; nn_msg_coalesce_range "coalesce.$NN_CAMEL" "$nn_v" "$NN_DRIVER" "$NN_IF" "$NN_ACCEPTS"; nt_problem "$NN_MSG"
      continue
    fi
    printf '%s\t%s\n' "$NN_IF/coalesce.$nn_n" "$nn_v" >> "$NT_TMP/want.coalesce"
  done < "$NT_TMP/req.coalesce"
}

nn_rx_queues() { # the rx queue names there will be after channels are applied (NN_NRXQ: how many)
  nn_rxq=0
  for nn_q in "$NN_SYS/$NN_IF/queues"/rx-*; do [ -e "$nn_q" ] && nn_rxq=$((nn_rxq + 1)); done
  if [ -s "$NT_TMP/want.channel" ]; then
    nn_c=0; nn_r=0
    nt_lookup "$NT_TMP/channel" cur.combined && nn_uint "$NT_FOUND" && nn_c=$NT_FOUND
    nt_lookup "$NT_TMP/channel" cur.rx && nn_uint "$NT_FOUND" && nn_r=$NT_FOUND
    nt_lookup "$NT_TMP/want.channel" "$NN_IF/channel.combined" && nn_c=$NT_FOUND
    nt_lookup "$NT_TMP/want.channel" "$NN_IF/channel.rx" && nn_r=$NT_FOUND
    [ $((nn_c + nn_r)) -gt 0 ] && nn_rxq=$((nn_c + nn_r))
  fi
  nn_i=0
  while [ "$nn_i" -lt "$nn_rxq" ]; do printf 'rx-%s\n' "$nn_i"; nn_i=$((nn_i + 1)); done
  NN_NRXQ=$nn_rxq
}

# nn_rps_refusals CALLBACK SOCKFLOW TEST: the RPS checks the preflight (CALLBACK nt_problem) and the live read
# (nt_live_refuse) share, one rule and text (provider/host/messages.ts): rps.sockFlowEntries declared (SOCKFLOW 1) where
# net.core.rps_sock_flow_entries fails TEST (the preflight, as root: -w; the read, as the login user: -e), an interface
# without rps_cpus files, rps.cpus outside the possible CPUs. Sets nn_possible; 1 when the rps part cannot go on.
nn_rps_refusals() {
  nn_cat "$NN_CPU/possible"; nn_possible=$NT_GOT
  if [ "$2" = 1 ]; then
    nn_t=/proc/sys/net/core/rps_sock_flow_entries
    if [ "$3" = -w ]; then [ -w "$nn_t" ]; else [ -e "$nn_t" ]; fi || { nn_msg_sockflow; "$1" "$NN_MSG"; }
  fi
  [ -n "$NN_RPS_CPUS" ] || return 0
  nn_rpsf=0; for nn_q in "$NN_SYS/$NN_IF/queues"/*/rps_cpus; do [ -e "$nn_q" ] && { nn_rpsf=1; break; }; done
  if [ "$nn_rpsf" = 0 ]; then nn_msg_rps_nofiles "$NN_IF"; "$1" "$NN_MSG"; return 1; fi
  [ "$NN_RPS_CPUS" != all ] || return 0
  nn_bad=$(nn_cpus_outside "$NN_RPS_CPUS" "$nn_possible")
  if [ -n "$nn_bad" ]; then nn_msg_rps_cpus "$nn_bad" "$NT_HOSTNAME" "$nn_possible"; "$1" "$NN_MSG"; return 1; fi
  return 0
}

nn_check_rps() {
  nn_sf=0; nt_lookup "$NT_TMP/requested" net.core.rps_sock_flow_entries && nn_sf=1 nn_sfv=$NT_FOUND
  nn_rps_refusals nt_problem "$nn_sf" -w || return 0
  if [ "$nn_sf" = 1 ] && [ -w /proc/sys/net/core/rps_sock_flow_entries ]; then
    printf '%s\t%s\n' net.core.rps_sock_flow_entries "$nn_sfv" >> "$NT_TMP/want.rps"
  fi
  [ -n "$NN_RPS_CPUS" ] || return 0
  if [ "$NN_RPS_CPUS" = all ]; then nn_list=$nn_possible; else nn_list=$NN_RPS_CPUS; fi
  nn_rx_queues > "$NT_TMP/rxq"
  nn_cpu_count "$nn_possible"; nn_ncpu=$NN_NCPU
  nn_nq=$NN_NRXQ
  if [ "$NN_RPS_BELOW" = 1 ] && [ "$nn_nq" -ge "$nn_ncpu" ]; then
    nt_warn "rps skipped on $NN_IF: it has $nn_nq rx queues for $nn_ncpu CPUs, so hardware RSS already spreads the load (onlyWhenQueuesBelowCpus)"
    return 0
  fi
  nn_mask_of "$nn_list"; nn_mask=$NN_MASK
  while IFS= read -r nn_qn; do
    printf '%s\t%s\n' "$NN_IF/rps.$nn_qn" "$nn_mask" >> "$NT_TMP/want.rps"
  done < "$NT_TMP/rxq"
  if [ -n "$NN_RPS_FLOW" ]; then
    while IFS= read -r nn_qn; do
      printf '%s\t%s\n' "$NN_IF/rfs.$nn_qn" "$NN_RPS_FLOW" >> "$NT_TMP/want.rps"
    done < "$NT_TMP/rxq"
    # 0 or absent: its first character read (no process; a /proc/sys file answers only the read at offset 0, the
    # first byte, and a positive count never starts with 0)
    nn_sfe=''; { IFS= read -r nn_sfe || :; } 2>/dev/null < /proc/sys/net/core/rps_sock_flow_entries
    if ! nt_lookup "$NT_TMP/requested" net.core.rps_sock_flow_entries && case $nn_sfe in '' | 0 | 0[!0-9]*) true ;; *) false ;; esac; then
      nt_warn "rps.flowEntriesPerQueue: RFS also needs net.core.rps_sock_flow_entries > 0 (it is 0 or absent here); set rps.sockFlowEntries on the host"
    fi
  fi
}

nn_irqs() { # the IRQ numbers of the interface, one per line
  if [ -d "$NN_SYS/$NN_IF/device/msi_irqs" ]; then
    find "$NN_SYS/$NN_IF/device/msi_irqs" -maxdepth 1 -name '[0-9]*' 2>/dev/null | sed 's|.*/||' | sort -n
  elif [ -e "$NN_SYS/$NN_IF/device" ]; then
    awk -v ifn="$NN_IF" '{ for (i = 2; i <= NF; i++) if ($i == ifn || index($i, ifn "-") == 1) { n = $1; sub(/:$/, "", n); if (n ~ /^[0-9]+$/) print n; break } }' "$NN_INTERRUPTS" | sort -n
  fi
}

nn_irqbalance_bans() { # prints the banned IRQ numbers from irqbalance's configuration
  cat /etc/sysconfig/irqbalance /etc/default/irqbalance 2>/dev/null | tr ' "' '[\n*]' | sed -n 's/^--banirq=\([0-9]*\).*/\1/p; s/^-i\([0-9][0-9]*\)$/\1/p'
}

# nn_irq_refusals CALLBACK: the IRQ checks the preflight and the live read share (as nn_rps_refusals): an interface
# without IRQs of its own, irqAffinity.cpus not online. Sets NN_IRQS (the IRQ numbers, a line each) and nn_online; 1 when
# the irqAffinity part cannot go on. (A /proc/irq/N/smp_affinity that root cannot write: nn_irq_writable, for root.)
nn_irq_refusals() {
  NN_IRQS=$(nn_irqs)
  if [ -z "$NN_IRQS" ]; then nn_drv; nn_msg_irq_none "$NN_IF" "$NN_DRIVER" "$NN_SYS"; "$1" "$NN_MSG"; return 1; fi
  nn_online=$(cat "$NN_CPU/online" 2>/dev/null)
  [ "$NN_IRQ_CPUS" != spread ] || return 0
  nn_bad=$(nn_cpus_outside "$NN_IRQ_CPUS" "$nn_online")
  if [ -n "$nn_bad" ]; then nn_msg_irq_cpus "$nn_bad" "$NT_HOSTNAME" "$nn_online"; "$1" "$NN_MSG"; return 1; fi
  return 0
}

# nn_irq_writable CALLBACK IRQ / nn_txq_writable CALLBACK: root can write the IRQ's smp_affinity / the interface's
# tx_queue_len (a -w test, no write: the preflight's and, as root, the live read's); else a problem through CALLBACK
# and 1. (Another user's -w says nothing about root's.)
nn_irq_writable() {
  [ -w "/proc/irq/$2/smp_affinity" ] && return 0
  "$1" "irqAffinity: /proc/irq/$2/smp_affinity is not writable on $NT_HOSTNAME (a managed IRQ whose affinity the kernel fixes?)"; return 1
}
nn_txq_writable() {
  [ -w "$NN_SYS/$NN_IF/tx_queue_len" ] && return 0
  "$1" "txQueueLength: $NN_SYS/$NN_IF/tx_queue_len is not writable on $NT_HOSTNAME"; return 1
}

nn_check_irq() {
  [ -n "$NN_IRQ_CPUS" ] || return 0
  nn_irq_refusals nt_problem || return 0
  printf '%s\n' "$NN_IRQS" > "$NT_TMP/irqs"
  if [ "$NN_IRQ_CPUS" = spread ]; then nn_list=$nn_online; else nn_list=$NN_IRQ_CPUS; fi
  nn_cpulist_expand "$nn_list" | awk '!s[$1]++' > "$NT_TMP/irqcpus"
  nn_n=$(wc -l < "$NT_TMP/irqcpus")
  nn_i=0
  while IFS= read -r nn_irq; do
    nn_irq_writable nt_problem "$nn_irq" || continue
    nn_cpu=$(sed -n "$((nn_i % nn_n + 1))p" "$NT_TMP/irqcpus")
    nn_mask_of "$nn_cpu"; printf '%s\t%s\n' "$NN_IF/irq.$nn_irq" "$NN_MASK" >> "$NT_TMP/want.irq"
    nn_i=$((nn_i + 1))
  done < "$NT_TMP/irqs"
  if nn_irqbalance_running; then
    nn_bans=$(nn_irqbalance_bans)
    nn_unbanned=$(awk -v bans=" $(printf '%s' "$nn_bans" | tr '\n' ' ') " 'index(bans, " " $1 " ") == 0 { printf "%s%s", sep, $1; sep = " " }' "$NT_TMP/irqs")
    [ -n "$nn_unbanned" ] && nt_warn "irqAffinity: irqbalance is running and has not banned IRQ(s) $nn_unbanned of $NN_IF: it may move them again; add --banirq=N to IRQBALANCE_ARGS (/etc/sysconfig/irqbalance or /etc/default/irqbalance) or stop irqbalance"
  fi
  return 0
}

nn_irqbalance_running() {
  for nn_c in /proc/[0-9]*/comm; do
    [ "$(cat "$nn_c" 2>/dev/null)" = irqbalance ] && return 0
  done
  return 1
}

# Another NicQueues on this interface, or a NetTuning holding rps_sock_flow_entries, is refused.
nn_check_other_owners() {
  nn_osf=0; nt_lookup "$NT_TMP/requested" net.core.rps_sock_flow_entries && nn_osf=1
  nn_other_owners nt_problem "$nn_osf"
}
# nn_other_owners CALLBACK SOCKFLOW: the check above (SOCKFLOW 1: rps.sockFlowEntries is declared), each problem through
# CALLBACK (nt_problem; the live read as root: nt_live_refuse). Journals are root's: another user finds none.
nn_other_owners() {
  for nn_j in "$NT_STATE"/*.orig; do
    [ -f "$nn_j" ] || continue
    [ "$nn_j" = "$NT_JOURNAL" ] && continue
    if awk -F "$NT_TAB" -v p="$NN_IF/" 'index($1, p) == 1 { f = 1 } END { exit !f }' "$nn_j"; then
      nt_owner_of "$nn_j"; "$1" "$NN_IF is already managed by $NT_OWNER_OF (journal $nn_j): one NicQueues per interface; manage it there, or delete that resource first"
    fi
  done
  if [ "$2" = 1 ]; then
    for nn_j in "$NT_ROOT"/sysctl/*.orig; do
      [ -f "$nn_j" ] || continue
      if awk -F "$NT_TAB" '$1 == "net.core.rps_sock_flow_entries" || $1 == "net/core/rps_sock_flow_entries" { f = 1 } END { exit !f }' "$nn_j"; then
        nt_owner_of "$nn_j"; "$1" "net.core.rps_sock_flow_entries is already managed by $NT_OWNER_OF (journal $nn_j): set it in one resource only (remove rps.sockFlowEntries here or the sysctl there)"
      fi
    done
  fi
}

# ---------------------------------------------------------------------------------------- persistence
nn_paths() {
  nn_boot_paths
  # the device's wants link: systemd starts the unit again whenever the interface (re)appears (hotplug, driver reload)
  nn_sd_escape "$NN_IF"; NN_DEV="sys-subsystem-net-devices-$NN_ESC.device"
  NN_DEVWANTS=/etc/systemd/system/$NN_DEV.wants/net-tuning-nic-$nn_unitname.service
}
# nn_boot_paths: the unit, boot script, rc.local and rc.local block lines of this resource (what the persistence
# checks read; the live read needs no more of nn_paths)
nn_boot_paths() {
  # the unit's name: "@" and "+" as "_"
  nn_unitname=$NN_IF
  while :; do case $nn_unitname in *[@+]*) nn_unitname=${nn_unitname%%[@+]*}_${nn_unitname#*[@+]} ;; *) break ;; esac; done
  NN_UNIT=/etc/systemd/system/net-tuning-nic-$nn_unitname.service
  NN_SCRIPT=/usr/local/libexec/net-tuning/nic-$NN_IF.sh
  NN_WANTS=/etc/systemd/system/multi-user.target.wants/net-tuning-nic-$nn_unitname.service
  if [ -d /etc/rc.d ]; then NN_RCLOCAL=/etc/rc.d/rc.local; else NN_RCLOCAL=/etc/rc.local; fi
  if [ -L "$NN_RCLOCAL" ]; then NN_RCLOCAL=$(readlink -f "$NN_RCLOCAL"); fi
  NN_BEGIN="# BEGIN pulumi-net-tuning $NT_OWNER $NN_IF"
  NN_END="# END pulumi-net-tuning $NT_OWNER $NN_IF"
}

# systemd's escaping of an interface name in its device unit name (sys-subsystem-net-devices-<escaped>.device):
# NN_ESC; in the shell for a name of the characters NicQueues accepts (nn_valid_if), else od and awk
nn_sd_escape() {
  NN_ESC='' nne_r=$1
  case $1 in *[!A-Za-z0-9._@+-]*) NN_ESC=$(nn_sd_escape_awk "$1"); return 0 ;; esac
  while [ -n "$nne_r" ]; do
    nne_c=${nne_r%"${nne_r#?}"}; nne_r=${nne_r#?}
    case $nne_c in
      -) nne_c='\x2d' ;; @) nne_c='\x40' ;; +) nne_c='\x2b' ;;
      .) [ -n "$NN_ESC" ] || nne_c='\x2e' ;;
    esac
    NN_ESC=$NN_ESC$nne_c
  done
}
nn_systemd_escape() { nn_sd_escape "$1"; printf '%s\n' "$NN_ESC"; }
nn_sd_escape_awk() {
  printf '%s' "$1" | od -An -v -tx1 | awk -v s="$1" '{ for (i = 1; i <= NF; i++) h[++n] = $i }
    END { for (i = 1; i <= n; i++) { c = substr(s, i, 1); if (c ~ /[A-Za-z0-9_:]/ || (c == "." && i > 1)) o = o c; else o = o "\\x" h[i] } print o }'
}

# nn_is_ours FILE: FILE has the line "# pulumi-net-tuning owner: $NT_OWNER" (our unit, boot script or a file of ours;
# read in the shell)
nn_is_ours() {
  [ -f "$1" ] || return 1
  nno_l=''
  while IFS= read -r nno_l || [ -n "$nno_l" ]; do
    [ "$nno_l" != "# pulumi-net-tuning owner: $NT_OWNER" ] || return 0
    nno_l=''
  done 2>/dev/null < "$1"
  return 1
}

# nn_boot_lines: the commands that re-apply the desired settings (resolved values) at boot, one per desired line
# "KEY<TAB>VALUE" (KEY IF/GROUP.NAME, IF/txqueuelen or net.core.rps_sock_flow_entries; the -K argument of a feature
# from nn_feature_arg), in the shell
nn_boot_lines() {
  nnb_l=''
  while IFS= read -r nnb_l || [ -n "$nnb_l" ]; do
    nnb_k=${nnb_l%%"$NT_TAB"*}; nnb_v=${nnb_l#*"$NT_TAB"}; nnb_v=${nnb_v%%"$NT_TAB"*}
    case $nnb_l in *"$NT_TAB"*) ;; *) nnb_v='' ;; esac
    if [ "$nnb_k" = net.core.rps_sock_flow_entries ]; then
      printf "nt_nic_write /proc/sys/net/core/rps_sock_flow_entries '%s'\n" "$nnb_v"; continue
    fi
    # IF/GROUP.NAME: i = the interface (none without "/"), s = after the "/", t = GROUP (none without "."), n = NAME
    case $nnb_k in */*) nnb_i=${nnb_k%%/*} nnb_s=${nnb_k#*/} ;; *) nnb_i='' nnb_s=$nnb_k ;; esac
    case $nnb_s in *.*) nnb_t=${nnb_s%%.*} nnb_n=${nnb_s#*.} ;; *) nnb_t='' nnb_n=$nnb_s ;; esac
    if [ "$nnb_s" = txqueuelen ]; then printf "nt_nic_run ip link set dev '%s' txqueuelen %s\n" "$nnb_i" "$nnb_v"; continue; fi
    case $nnb_t in
      channel) printf "nt_nic_run ethtool -L '%s' %s %s\n" "$nnb_i" "$nnb_n" "$nnb_v" ;;
      ring) printf "nt_nic_run ethtool -G '%s' %s %s\n" "$nnb_i" "$nnb_n" "$nnb_v" ;;
      feature) nn_feature_arg "$nnb_n"; printf "nt_nic_run ethtool -K '%s' %s %s\n" "$nnb_i" "$NN_ARG" "$nnb_v" ;;
      coalesce) printf "nt_nic_run ethtool -C '%s' %s %s\n" "$nnb_i" "$nnb_n" "$nnb_v" ;;
      rps) [ "$nnb_v" = - ] || printf "nt_nic_write '/sys/class/net/%s/queues/%s/rps_cpus' '%s'\n" "$nnb_i" "$nnb_n" "$nnb_v" ;;
      rfs) [ "$nnb_v" = - ] || printf "nt_nic_write '/sys/class/net/%s/queues/%s/rps_flow_cnt' '%s'\n" "$nnb_i" "$nnb_n" "$nnb_v" ;;
      irq) printf "nt_nic_write '/proc/irq/%s/smp_affinity' '%s'\n" "$nnb_n" "$nnb_v" ;;
    esac
    nnb_l=''
  done < "$NT_TMP/desired"
}

nn_boot_functions() { # (printf: a here-document would be a cat process)
  # shellcheck disable=SC2016 # literal text of the generated script
  printf '%s\n' \
    'nt_nic_run() { nt_s=0; nt_o=$("$@" 2>&1) || nt_s=$?; case "$nt_o" in *"no "*" parameters changed"*) nt_s=0 ;; esac; [ "$nt_s" = 0 ] || [ "$nt_s" = 80 ] || { echo "pulumi-net-tuning: $* failed (exit $nt_s): $nt_o" >&2; nt_rc=1; }; }' \
    'nt_nic_write() { { printf '"'"'%s\n'"'"' "$2" > "$1"; } 2>/dev/null || { echo "pulumi-net-tuning: writing $2 to $1 failed" >&2; nt_rc=1; }; }' \
    'nt_rc=0'
}

nn_render_script() { # the boot script of systemd mode
  printf '#!/bin/sh\n'
  printf '# pulumi-net-tuning owner: %s\n' "$NT_OWNER"
  printf '# Re-applies the NicQueues settings of %s to %s at boot (run by %s).\n' "$NT_OWNER" "$NN_IF" "${NN_UNIT##*/}"
  printf '# Generated: manual edits are overwritten; deleting the resource removes this file.\n'
  printf 'PATH=/usr/sbin:/usr/bin:/sbin:/bin\n'
  nn_boot_functions
  nn_boot_lines
  # shellcheck disable=SC2016 # literal text of the generated script
  echo 'exit "$nt_rc"'
}

nn_render_unit() {
  nn_dev=$NN_DEV
  cat <<EOF
# pulumi-net-tuning owner: $NT_OWNER
# Generated: manual edits are overwritten; deleting the resource removes this unit.
[Unit]
Description=pulumi-net-tuning NIC settings for $NN_IF ($NT_OWNER)
BindsTo=$nn_dev
Wants=$nn_dev
After=$nn_dev network-pre.target
After=rc-local.service NetworkManager.service systemd-udev-settle.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=$NN_SCRIPT

[Install]
WantedBy=multi-user.target $NN_DEV
EOF
}

# kind_digest_src PATH (nt_converged_write): NT_DIGEST_SRC = the rc.local block this run rendered and wrote, the bytes
# nt_digest cuts out of rc.local (this owner's BEGIN…END lines), so the record's digest costs one cksum, not awk | cksum.
kind_digest_src() {
  [ "$1" = "$NN_RCLOCAL" ] && [ "$NN_MODE" = rc.local ] && [ -f "$NT_TMP/block" ] || return 1
  NT_DIGEST_SRC=$NT_TMP/block
}

nn_render_block() { # the rc.local block; NN_PRIOR = the file before the first block ("absent": we created it)
  printf '%s\n' "$NN_BEGIN"
  printf '# Generated by pulumi-net-tuning: edits inside this block are overwritten; deleting the resource removes it.\n'
  printf '# rc.local before this block: %s\n' "$NN_PRIOR"
  nn_boot_functions
  nn_boot_lines
  printf '%s\n' "$NN_END"
}

# nn_rclocal_edit IN OUT BLOCKFILE BEGIN END: OUT = IN with the BEGIN…END block replaced by BLOCKFILE's lines
# (inserted before a final "exit 0" when absent; removed when BLOCKFILE is empty). Every byte outside the
# block is kept, including a missing final newline. IN may be absent: a "#!/bin/sh -e" … "exit 0" file is made.
# Returns 3 when IN holds a BEGIN line without its END. In the shell (the read builtin): no process.
nn_rclocal_edit() {
  nn_nl=1
  if [ -s "$1" ]; then nn_in=$1; else
    printf '#!/bin/sh -e\nexit 0\n' > "$NT_TMP/rclocal.skel"
    nn_in=$NT_TMP/rclocal.skel
  fi
  # IN's lines into nre_1 … nre_N (a last line without its newline: nn_nl=0); where the block starts and ends
  nre_n=0 nre_bs=0 nre_be=0 nre_l=''
  while IFS= read -r nre_l || { [ -n "$nre_l" ] && nn_nl=0; }; do
    nre_n=$((nre_n + 1)); eval "nre_$nre_n=\$nre_l"
    if [ "$nre_bs" = 0 ]; then [ "$nre_l" != "$4" ] || nre_bs=$nre_n
    elif [ "$nre_be" = 0 ] && [ "$nre_l" = "$5" ]; then nre_be=$nre_n; fi
    [ "$nn_nl" = 1 ] || break
  done < "$nn_in"
  [ "$nre_bs" = 0 ] || [ "$nre_be" != 0 ] || { : > "$2"; return 3; }
  if [ "$nre_bs" = 0 ]; then
    # no block yet: before the last command when it is "exit" or "exit 0" (blank and comment lines after it skipped)
    nre_at=$((nre_n + 1)) nre_i=$nre_n
    while [ "$nre_i" -ge 1 ]; do
      eval "nre_t=\$nre_$nre_i"
      # shellcheck disable=SC2154 # nre_t is assigned by the eval
      nre_t=${nre_t#"${nre_t%%[! 	]*}"}
      case $nre_t in '' | '#'*) nre_i=$((nre_i - 1)); continue ;; esac
      nn_rc_is_exit "$nre_t" && nre_at=$nre_i
      break
    done
    nre_bs=$nre_at nre_be=$((nre_at - 1))
  fi
  nre_b='' nre_l=''
  while IFS= read -r nre_l || [ -n "$nre_l" ]; do nre_b=$nre_b$nre_l$NT_NL; nre_l=''; done < "$3"
  # lines before the block, the block file's lines, the lines after it; IN's last line ends as it did when it is
  # the last line written
  {
    nre_i=1
    while [ "$nre_i" -lt "$nre_bs" ]; do
      if [ "$nre_i" = "$nre_n" ] && [ "$nn_nl" = 0 ] && [ -z "$nre_b" ]; then eval "printf '%s' \"\$nre_$nre_i\""
      else eval "printf '%s\n' \"\$nre_$nre_i\""; fi
      nre_i=$((nre_i + 1))
    done
    printf '%s' "$nre_b"
    nre_i=$((nre_be + 1))
    while [ "$nre_i" -le "$nre_n" ]; do
      if [ "$nre_i" = "$nre_n" ] && [ "$nn_nl" = 0 ]; then eval "printf '%s' \"\$nre_$nre_i\""
      else eval "printf '%s\n' \"\$nre_$nre_i\""; fi
      nre_i=$((nre_i + 1))
    done
  } > "$2"
}

# nn_rc_is_exit LINE (no leading blanks): "exit" or "exit 0", blanks and one ";" after it allowed
nn_rc_is_exit() {
  case $1 in exit*) nrx_r=${1#exit} ;; *) return 1 ;; esac
  nrx_r=${nrx_r%"${nrx_r##*[! 	]}"}
  case $nrx_r in *';') nrx_r=${nrx_r%;} ;; esac
  nrx_r=${nrx_r%"${nrx_r##*[! 	]}"}
  case $nrx_r in '') return 0 ;; *0) nrx_r=${nrx_r%0} ;; *) return 1 ;; esac
  case $nrx_r in '' | *[!\ \	]*) return 1 ;; esac
}

nn_rclocal_has_block() { nn_rc_scan; [ "$NN_RC_BEGIN" = 1 ]; }

# nn_rc_scan: what this resource needs to know of $NN_RCLOCAL, in one read (the shell's; kept for that path: rc.local
# is written only at the commit, kind_after_commit and kind_after_restore forget it): NN_RC_BEGIN / NN_RC_END = 1 when
# a line is exactly this resource's BEGIN / END line; NN_RC_OTHERS = the BEGIN lines of other resources for this
# interface (last word), one a line; NN_RC_PRIOR = what follows "# rc.local before this block: " on the first such
# line inside this resource's block ('' when none). Absent file: 0 and ''.
NN_RC_AT=''
nn_rc_scan() {
  [ -n "$NN_RC_AT" ] && [ "$NN_RC_AT" = "$NN_RCLOCAL" ] && return 0
  NN_RC_AT=$NN_RCLOCAL NN_RC_BEGIN=0 NN_RC_END=0 NN_RC_OTHERS='' NN_RC_PRIOR=''
  [ -f "$NN_RCLOCAL" ] || return 0
  nrs_in=0 nrs_pf=0 nrs_l=''
  while IFS= read -r nrs_l || [ -n "$nrs_l" ]; do
    if [ "$nrs_l" = "$NN_BEGIN" ]; then NN_RC_BEGIN=1 nrs_in=1
    else
      case $nrs_l in '# BEGIN pulumi-net-tuning '*) [ "${nrs_l##* }" != "$NN_IF" ] || NN_RC_OTHERS=$NN_RC_OTHERS$nrs_l$NT_NL ;; esac
      if [ "$nrs_l" = "$NN_END" ]; then NN_RC_END=1 nrs_in=0
      elif [ "$nrs_in" = 1 ] && [ "$nrs_pf" = 0 ]; then
        case $nrs_l in '# rc.local before this block: '*) NN_RC_PRIOR=${nrs_l#'# rc.local before this block: '} nrs_pf=1 ;; esac
      fi
    fi
    nrs_l=''
  done 2>/dev/null < "$NN_RCLOCAL"
}

nn_resolve_mode() {
  case "$NN_PERSIST" in
    auto) if [ -d /run/systemd/system ]; then NN_MODE=systemd; else NN_MODE=rc.local; fi ;;
    *) NN_MODE=$NN_PERSIST ;;
  esac
}

# nn_persist_refusals CALLBACK [live]: the persistence checks the preflight (CALLBACK nt_problem) and the live read
# (nt_live_refuse, with "live") share, one rule and text (provider/host/messages.ts): with persistence "systemd" a unit
# or boot script that is not this resource's, another resource's rc.local block for the interface, this resource's
# BEGIN line without its END line, an rc.local that is not a regular file. The read (as the login user) leaves a unit
# or script it cannot read to the preflight.
nn_persist_refusals() {
  nn_resolve_mode
  for nn_f in "$NN_UNIT" "$NN_SCRIPT"; do
    if [ "$NN_MODE" != systemd ] || [ ! -e "$nn_f" ] || { [ "${2:-}" = live ] && [ ! -r "$nn_f" ]; }; then continue; fi
    nn_is_ours "$nn_f" || { nn_msg_persist_other "$nn_f" "$NT_OWNER"; "$1" "$NN_MSG"; }
  done
  if [ -f "$NN_RCLOCAL" ]; then
    nn_rc_scan
    nn_ifs=$IFS; IFS=$NT_NL; set -f
    for nn_l in $NN_RC_OTHERS; do IFS=$nn_ifs; set +f
      nn_msg_rc_other "$NN_RCLOCAL" "$NN_IF" "$nn_l"; "$1" "$NN_MSG"
    done; IFS=$nn_ifs; set +f
    if [ "$NN_RC_BEGIN" = 1 ] && [ "$NN_RC_END" = 0 ]; then nn_msg_rc_noend "$NN_RCLOCAL" "$NN_BEGIN"; "$1" "$NN_MSG"; fi
  fi
  if [ "$NN_MODE" = rc.local ] && [ -e "$NN_RCLOCAL" ] && [ ! -f "$NN_RCLOCAL" ]; then nn_msg_rc_notfile "$NN_RCLOCAL"; "$1" "$NN_MSG"; fi
  return 0
}

nn_check_persistence() {
  nn_persist_refusals nt_problem
  if [ ! -f "$NT_JOURNAL" ] && { nn_is_ours "$NN_UNIT" || nn_rclocal_has_block; }; then
    nt_problem "the boot settings of this resource exist on $NT_HOSTNAME but its journal of original values ($NT_JOURNAL) is missing: refusing to record tuned values as originals. Delete the resource (pulumi destroy --target restores the originals from Pulumi state), then create it again"
  fi
}

kind_preflight() {
  [ -n "$NN_IF" ] || nt_die 5 "plan has no @interface"
  nn_paths
  # (the live read reports both at preview: nn_live_iface; the messages are provider/host/messages.ts's)
  if [ ! -e "$NN_SYS/$NN_IF" ]; then
    nn_ifaces; nn_msg_no_iface "$NN_IF" "$NT_HOSTNAME" "$NN_IFACES"; nt_problem "$NN_MSG"
    return 0
  fi
  NN_DRIVER='' # read when a message or a driver's rule needs it (nn_drv)
  for nn_g in $NN_APPLY_ORDER; do : > "$NT_TMP/want.$nn_g"; done
  : > "$NT_TMP/channel"
  [ -f "$NT_TMP/requested" ] || : > "$NT_TMP/requested"
  if command -v ethtool >/dev/null 2>&1; then
    nn_check_limits channel
    nn_check_limits ring
    nn_check_features
    nn_check_coalesce
  else
    # one refusal, not one per ethtool group ("does not support ring parameters … ethtool: not found")
    nn_msg_no_ethtool "$NT_HOSTNAME"; nt_problem "$NN_MSG"
  fi
  if nt_lookup "$NT_TMP/requested" txqueuelen; then
    nn_txqv=$NT_FOUND
    if nn_txq_writable nt_problem; then printf '%s\t%s\n' "$NN_IF/txqueuelen" "$nn_txqv" >> "$NT_TMP/want.txq"; fi
  fi
  nn_check_rps
  nn_check_irq
  nn_check_other_owners
  nn_check_persistence
  # The order changes are applied in (NIC spec): channels (queues) before rings before features/coalescing/RPS.
  for nn_g in $NN_APPLY_ORDER; do
    while IFS= read -r nn_l; do printf '%s\n' "$nn_l"; done < "$NT_TMP/want.$nn_g"
  done >> "$NT_TMP/desired"
  nt_index_drop desired # appended here, not through nt_want: nt_lookup reads the file until the apply indexes it again
  nn_boot_overrides
  [ -s "$NT_TMP/desired" ] || [ "$NT_PROBLEMS" != 0 ] || nt_problem "nothing to set on $NN_IF: every requested setting was skipped"
}

kind_files() {
  nn_rc_adopt_stage
  nn_script_ours=0; nn_is_ours "$NN_SCRIPT" && nn_script_ours=1
  if [ "$NN_MODE" = systemd ]; then
    nn_render_unit > "$NT_TMP/unit"; nn_render_script > "$NT_TMP/script"
    nt_stage_file "$NN_SCRIPT" "$NT_TMP/script" 0755
    nt_stage_file "$NN_UNIT" "$NT_TMP/unit" 0644
  else
    nn_drop_unit "$NN_UNIT"
    [ "$nn_script_ours" = 1 ] && nt_stage_remove "$NN_SCRIPT"
  fi
  if [ "$NN_MODE" = rc.local ]; then
    NN_PRIOR=absent
    if nn_rclocal_has_block; then NN_PRIOR=$NN_RC_PRIOR; [ -n "$NN_PRIOR" ] || NN_PRIOR="mode 755"
    elif [ -f "$NN_RCLOCAL" ]; then
      NN_PRIOR="mode $(stat -c %a "$NN_RCLOCAL" 2>/dev/null || echo 755), cksum $(cksum < "$NN_RCLOCAL"), modified $(stat -c %y "$NN_RCLOCAL" 2>/dev/null)"
    fi
    nn_render_block > "$NT_TMP/block"
    nn_rclocal_edit "$NN_RCLOCAL" "$NT_TMP/rclocal" "$NT_TMP/block" "$NN_BEGIN" "$NN_END" || nt_die 1 "cannot edit $NN_RCLOCAL on $NT_HOSTNAME (a BEGIN line without its END?); nothing was changed"
    nt_stage_file "$NN_RCLOCAL" "$NT_TMP/rclocal" 0755
  elif nn_rclocal_has_block; then
    nn_rclocal_unblock
  fi
  return 0
}

# Stages rc.local without our block, with the mode it had before (and its modification time when the content is
# byte-identical to what it was: NN_TOUCH, applied after the commit); a file we created that now holds only our
# "#!/bin/sh -e" / "exit 0" frame is removed.
nn_rclocal_unblock() {
  NN_RC_N=$((${NN_RC_N:-0} + 1)); nn_rc_out=$NT_TMP/rclocal.u$NN_RC_N
  : > "$NT_TMP/noblock"
  nn_rc_scan; nn_prior=$NN_RC_PRIOR # what rc.local was before our block ("absent", "mode NNN, …"; recorded in it)
  nn_rclocal_edit "$NN_RCLOCAL" "$nn_rc_out" "$NT_TMP/noblock" "$NN_BEGIN" "$NN_END" || nt_die 1 "cannot edit $NN_RCLOCAL"
  printf '#!/bin/sh -e\nexit 0\n' > "$NT_TMP/rclocal.skel"
  if [ "$nn_prior" = absent ] && cmp -s "$nn_rc_out" "$NT_TMP/rclocal.skel"; then
    nt_stage_remove "$NN_RCLOCAL"
    return 0
  fi
  nn_mode=${nn_prior#mode }; nn_mode=${nn_mode%%,*}
  case "$nn_mode" in [0-7][0-7][0-7]|[0-7][0-7][0-7][0-7]) ;; *) nn_mode=$(stat -c %a "$NN_RCLOCAL" 2>/dev/null || echo 755) ;; esac
  case "$nn_prior" in
    *", cksum "*", modified "*)
      nn_sum=${nn_prior#*, cksum }; nn_sum=${nn_sum%%, modified *}
      [ "$(cksum < "$nn_rc_out")" = "$nn_sum" ] && NN_TOUCH=${nn_prior#*, modified } ;;
  esac
  nt_stage_file "$NN_RCLOCAL" "$nn_rc_out" "$nn_mode"
}

# After the commit: the original modification time of an rc.local whose content is back to what it was.
nn_touch_rclocal() {
  if [ -n "$NN_TOUCH" ] && [ -f "$NN_RCLOCAL" ]; then touch -d "$NN_TOUCH" "$NN_RCLOCAL" 2>/dev/null || :; fi
  return 0
}

nn_systemd_running() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }

# A unit of ours leaves with its multi-user.target.wants and device wants links, all in the commit (undone together
# on failure); kind_after_commit/kind_after_restore remove the device's .wants directory when it is left empty.
nn_drop_unit() { # UNIT
  nn_is_ours "$1" || return 0
  nn_w=/etc/systemd/system/multi-user.target.wants/${1##*/}
  [ -L "$nn_w" ] && nt_stage_remove "$nn_w"
  for nn_w in /etc/systemd/system/sys-subsystem-net-devices-*.device.wants/"${1##*/}"; do
    [ -L "$nn_w" ] && nt_stage_remove "$nn_w"
  done
  nt_stage_remove "$1"
  NN_RELOAD=1
}

# An artefact of an earlier run that this run no longer declares: a unit or script under another name (interface
# renamed), or our block in an rc.local at another path.
kind_drop_artefact() {
  case "$1" in
    /etc/systemd/system/*.service) nn_drop_unit "$1" ;;
    /usr/local/libexec/net-tuning/*) nn_is_ours "$1" && nt_stage_remove "$1" ;;
    */rc.local)
      [ "$1" = "$NN_RCLOCAL" ] && return 0
      [ -f "$1" ] || return 0
      nn_keep_rc=$NN_RCLOCAL; NN_RCLOCAL=$1
      nn_rclocal_has_block && nn_rclocal_unblock "$1"
      NN_RCLOCAL=$nn_keep_rc ;;
  esac
  return 0
}

# nn_rmdir_empty_wants: the device .wants directories of our units, once empty (systemctl enable or we made them)
nn_rmdir_empty_wants() {
  for nn_w in /etc/systemd/system/sys-subsystem-net-devices-*.device.wants; do
    [ -d "$nn_w" ] && rmdir "$nn_w" 2>/dev/null
  done
  return 0
}

kind_after_commit() {
  NN_RC_AT='' # rc.local may have changed (nn_rc_scan)
  nn_touch_rclocal
  nn_rmdir_empty_wants
  if [ "$NN_MODE" = systemd ] && { [ ! -L "$NN_WANTS" ] || [ ! -L "$NN_DEVWANTS" ]; }; then
    NN_LINKED=1
    NN_NEW_W=0; [ -L "$NN_WANTS" ] || NN_NEW_W=1
    NN_NEW_D=0; [ -L "$NN_DEVWANTS" ] || NN_NEW_D=1
    if nn_systemd_running; then
      nn_out=$(systemctl daemon-reload 2>&1 && systemctl enable "${NN_UNIT##*/}" 2>&1) || nt_die 1 "systemctl enable ${NN_UNIT##*/} failed on $NT_HOSTNAME: $nn_out"
    else
      for nn_l in "$NN_WANTS" "$NN_DEVWANTS"; do
        [ -L "$nn_l" ] && continue
        { mkdir -p "${nn_l%/*}" && ln -s "$NN_UNIT" "$nn_l"; } || nt_die 1 "cannot create $nn_l on $NT_HOSTNAME"
      done
    fi
    nt_step "enable ${NN_UNIT##*/}"
  elif { [ "$NN_MODE" = systemd ] || [ "${NN_RELOAD:-0}" = 1 ]; } && nn_systemd_running; then
    systemctl daemon-reload >/dev/null 2>&1 || nt_warn "systemctl daemon-reload failed on $NT_HOSTNAME: systemd reads the changed unit files at the next boot"
  fi
  return 0
}

kind_rollback() {
  if [ "$NN_LINKED" = 1 ]; then
    if [ "${NN_NEW_W:-1}" = 1 ]; then
      rm -f "$NN_WANTS" 2>/dev/null
      [ -L "$NN_WANTS" ] && NT_UNDO_FAILED="$NT_UNDO_FAILED removing the boot link $NN_WANTS;"
    fi
    if [ "${NN_NEW_D:-1}" = 1 ]; then
      rm -f "$NN_DEVWANTS" 2>/dev/null
      [ -L "$NN_DEVWANTS" ] && NT_UNDO_FAILED="$NT_UNDO_FAILED removing the hotplug link $NN_DEVWANTS;"
      rmdir "${NN_DEVWANTS%/*}" 2>/dev/null
    fi
  fi
  if [ "$NN_LINKED" = 1 ] || [ "${NN_RELOAD:-0}" = 1 ]; then
    if nn_systemd_running; then systemctl daemon-reload >/dev/null 2>&1 || NT_UNDO_FAILED="$NT_UNDO_FAILED systemctl daemon-reload;"; fi
  fi
  return 0
}

kind_report() {
  case "$NN_MODE" in
    systemd) printf 'persisted\t%s\n' "$NN_UNIT" ;;
    rc.local) printf 'persisted\t%s (%s)\n' "$NN_RCLOCAL" "$NN_BEGIN" ;;
    *) printf 'persisted\tnone\n' ;;
  esac
  nn_rc_adopt_dir; [ ! -f "$NN_RADIR/meta" ] || printf 'rc-adopted\t%s\n' "$NN_RCLOCAL"
}

# The unit is disabled (its wants link removed) in the same commit as the files, after every value was restored.
kind_restore_files() {
  [ -n "$NN_IF" ] || nt_die 5 "plan has no @interface"
  nn_paths
  NN_MODE=none
  nn_drop_unit "$NN_UNIT"
  nn_is_ours "$NN_SCRIPT" && nt_stage_remove "$NN_SCRIPT"
  if nn_rclocal_has_block; then nn_rclocal_unblock; fi
  return 0
}

kind_after_restore() {
  NN_RC_AT='' # rc.local may have changed (nn_rc_scan)
  nn_touch_rclocal
  nn_rmdir_empty_wants
  nn_rc_adopt_restore
  if [ "${NN_RELOAD:-0}" = 1 ] && nn_systemd_running; then
    systemctl daemon-reload >/dev/null 2>&1 || nt_msg "warning: systemctl daemon-reload failed on $NT_HOSTNAME after removing ${NN_UNIT##*/}"
  fi
  return 0
}

# ---------------------------------------------------------------------------------------- boot-time overrides (issue #16)
# Another mechanism that re-applies a setting of this interface at boot, with file and line. Closed list, checked
# exactly: rc.local lines, the systemd .link file udevadm names for the interface, NetworkManager keyfiles' [ethtool]
# of a connection bound to it (interface-name=), ifupdown's stanza for it (up/post-up/pre-up commands, ethtool
# package options), tuned's [net] plugin of the active profile. Elsewhere (units, hook scripts, udev rules) a line
# that names the interface with ethtool/ip link/RPS only warns. A setting class (ring, channel, feature, coalesce,
# txqueuelen, rps, rfs, sockflow) counts when this resource declares that class for the interface.
NN_BOOT=error

# nn_boot_cmds MODE FILE: "exact|heur<TAB>class<TAB>file:line<TAB>text" for commands in FILE that set a class for
# $NN_IF (heur for the heuristic modes). MODE rc: every line outside pulumi-net-tuning blocks, but the adopted ones
# (the "file:line" lines of $NN_ADL, nn_rc_adopt_check); ifupdown: up/post-up/pre-up lines and ethtool options ($IFACE = the
# stanza's interface); any: every line (heuristic scan); anyfiles FILE…: as any for each FILE that has no line
# "# pulumi-net-tuning owner: $NT_OWNER" (each file's lines held until its end).
nn_boot_cmds() {
  nn_bm=$1; shift
  case $nn_bm in any | anyfiles) nn_bt=heur ;; *) nn_bt=exact ;; esac
  NN_ADL=${NN_ADL:-} awk -v mode="$nn_bm" -v ifn="$NN_IF" -v tab="$NT_TAB" -v tag="$nn_bt" -v owner="# pulumi-net-tuning owner: $NT_OWNER" '
    function esc(s) { gsub(/[][\\.^$*+?(){}|]/, "\\\\&", s); return s }
    function out(c, t) { sub(/^[ \t]+/, "", t); if (mode == "anyfiles") held = held tag tab c tab FILENAME ":" FNR tab t "\n"; else print tag tab c tab FILENAME ":" FNR tab t }
    function flush() { if (!ours) printf "%s", held; held = ""; ours = 0 }
    function classify(l, me,  e, hit) {
      e = "[ \t]+[\"'\'']?(" me ")([ \t\"'\'']|$)"
      hit = 0
      if (l ~ ("ethtool[ \t]+(-G|--set-ring)" e)) { out("ring", l); hit = 1 }
      if (l ~ ("ethtool[ \t]+(-L|--set-channels)" e)) { out("channel", l); hit = 1 }
      if (l ~ ("ethtool[ \t]+(-K|--features|--offload)" e)) { out("feature", l); hit = 1 }
      if (l ~ ("ethtool[ \t]+(-C|--coalesce)" e)) { out("coalesce", l); hit = 1 }
      if ((l ~ ("ip[ \t]+link[ \t]+set[ \t]+(dev[ \t]+)?[\"'\'']?(" me ")[ \t\"'\'']") || l ~ ("ifconfig" e)) && l ~ /txqueuelen|txqlen/) { out("txqueuelen", l); hit = 1 }
      if (l ~ ("/sys/class/net/(" me ")/queues/") || inloop) {
        if (l ~ /rps_cpus/) { out("rps", l); hit = 1 }
        if (l ~ /rps_flow_cnt/) { out("rfs", l); hit = 1 }
      }
      if (l ~ /rps_sock_flow_entries/) { out("sockflow", l); hit = 1 }
      return hit
    }
    BEGIN { me = esc(ifn); n = split(ENVIRON["NN_ADL"], al, "\n"); for (i = 1; i <= n; i++) if (al[i] != "") skip[al[i]] = 1 }
    FNR == 1 { inblk = 0; inloop = 0; stanza = ""; if (mode == "anyfiles") flush() }
    mode == "anyfiles" && $0 == owner { ours = 1 }
    /^# BEGIN pulumi-net-tuning / { inblk = 1; next }
    /^# END pulumi-net-tuning / { inblk = 0; next }
    inblk || /^[ \t]*#/ { next }
    {
      l = $0; t = l; sub(/^[ \t]+/, "", t); sub(/[ \t]+$/, "", t)
      if ((FILENAME ":" FNR) in skip) next
      if (mode == "ifupdown") {
        if (t ~ /^(iface|mapping|auto|allow-[a-z]+|source|source-directory)[ \t]/) { split(t, w, /[ \t]+/); stanza = (w[1] == "iface") ? w[2] : ""; next }
        if (stanza == ifn && t ~ /^(hardware-dma-ring-|offload-|hardware-irq-coalesce-)/) {
          if (t ~ /^hardware-dma-ring-/) out("ring", t); else if (t ~ /^offload-/) out("feature", t); else out("coalesce", t)
          next
        }
        if (t !~ /^(up|post-up|pre-up)[ \t]/) next
        if (stanza == ifn) gsub(/\$\{?IFACE\}?/, ifn, l)
      }
      if (l ~ ("for[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]+in[ \t].*/sys/class/net/(" me ")/queues/")) inloop = 1
      classify(l, me)
      if (inloop && t ~ /^done([ \t;]|$)/) inloop = 0
    }
    END { if (mode == "anyfiles") flush() }' "$@" 2>/dev/null
}

# The systemd .link file udevadm says applies to the interface: its [Link] settings.
nn_boot_link() {
  command -v udevadm >/dev/null 2>&1 || return 1
  nn_lf=$(udevadm info -q property -p "/sys/class/net/$NN_IF" 2>/dev/null | sed -n 's/^ID_NET_LINK_FILE=//p')
  [ -n "$nn_lf" ] || return 1
  [ -f "$nn_lf" ] || return 0
  awk -v tab="$NT_TAB" '
    /^[ \t]*\[/ { sec = $0; gsub(/[][ \t]/, "", sec); next }
    sec != "Link" || /^[ \t]*[#;]/ || !/=/ { next }
    {
      k = $0; sub(/=.*/, "", k); gsub(/[ \t]/, "", k); c = ""
      if (k ~ /BufferSize$/) c = "ring"
      else if (k ~ /Channels$/) c = "channel"
      else if (k ~ /Offload|Acceleration|Filter|^GenericReceiveOffload/) c = "feature"
      else if (k ~ /Coalesce/) c = "coalesce"
      else if (k == "TransmitQueueLength") c = "txqueuelen"
      else if (k ~ /PacketSteering/) c = "rps"
      if (c != "") print "exact" tab c tab FILENAME ":" FNR tab $0
    }' "$nn_lf"
}

# NetworkManager keyfiles of a connection bound to the interface: their [ethtool] settings.
nn_boot_nm() {
  for nn_f in /etc/NetworkManager/system-connections/* /run/NetworkManager/system-connections/* /usr/lib/NetworkManager/system-connections/*; do
    [ -f "$nn_f" ] || continue
    awk -v ifn="$NN_IF" -v tab="$NT_TAB" '
      /^[ \t]*\[/ { sec = $0; gsub(/[][ \t]/, "", sec); next }
      /^[ \t]*[#;]/ || !/=/ { next }
      {
        k = $0; sub(/=.*/, "", k); gsub(/[ \t]/, "", k); v = $0; sub(/^[^=]*=[ \t]*/, "", v)
        if (sec == "connection" && k == "interface-name") bound = (v == ifn)
        if (sec != "ethtool") next
        c = ""
        if (k ~ /^ring-/) c = "ring"; else if (k ~ /^channels-/) c = "channel"; else if (k ~ /^feature-/) c = "feature"; else if (k ~ /^coalesce-/) c = "coalesce"
        if (c != "") hit[++n] = "exact" tab c tab FILENAME ":" FNR tab $0
      }
      END { if (bound) for (i = 1; i <= n; i++) print hit[i] }' "$nn_f"
  done
}

# tuned: the [net] plugin (a section named net, or type=net) of the active profile and the profiles it includes.
nn_boot_tuned() {
  [ -f /etc/tuned/active_profile ] || return 0
  nn_todo=''; { IFS= read -r nn_todo < /etc/tuned/active_profile; } 2>/dev/null; nn_seen=' '; nn_i=0
  while [ -n "$nn_todo" ] && [ "$nn_i" -lt 8 ]; do
    nn_i=$((nn_i + 1))
    set -f
    # shellcheck disable=SC2086 # profile names, space-separated
    set -- $nn_todo
    set +f
    nn_p=$1; shift; nn_todo="$*"
    case "$nn_p" in ''|*[!A-Za-z0-9._-]*) continue ;; esac
    case "$nn_seen" in *" $nn_p "*) continue ;; esac
    nn_seen="$nn_seen$nn_p "
    nn_c=''
    for nn_d in /etc/tuned /usr/lib/tuned /usr/lib/tuned/profiles; do [ -f "$nn_d/$nn_p/tuned.conf" ] && { nn_c=$nn_d/$nn_p/tuned.conf; break; }; done
    [ -n "$nn_c" ] || continue
    # its findings, and "include<TAB>profiles" lines (the profiles it includes: scanned next)
    nn_o=$(awk -v ifn="$NN_IF" -v tab="$NT_TAB" '
      function flush(  i, ok, n, d, p) {
        if (!isnet) return
        ok = 1
        if (devs != "") {
          ok = 0; n = split(devs, d, /[ \t]*,[ \t]*/)
          for (i = 1; i <= n; i++) { p = d[i]; gsub(/\./, "\\.", p); gsub(/\*/, ".*", p); if (ifn ~ ("^" p "$")) ok = 1 }
        }
        if (ok) for (i = 1; i <= nh; i++) print hit[i]
      }
      /^[ \t]*\[/ { flush(); sec = $0; gsub(/[][ \t]/, "", sec); isnet = (sec == "net"); devs = ""; nh = 0; next }
      /^[ \t]*#/ || !/=/ { next }
      {
        k = $0; sub(/=.*/, "", k); gsub(/[ \t]/, "", k); v = $0; sub(/^[^=]*=[ \t]*/, "", v)
        if (sec == "main" && k == "include") { print "include" tab v; next }
        if (k == "type" && v == "net") isnet = 1
        if (k == "devices") devs = v
        c = ""
        if (k == "txqueuelen") c = "txqueuelen"; else if (k == "features") c = "feature"; else if (k == "coalesce") c = "coalesce"
        else if (k == "ring") c = "ring"; else if (k == "channels") c = "channel"
        if (c != "") hit[++nh] = "exact" tab c tab FILENAME ":" FNR tab $0
      }
      END { flush() }' "$nn_c")
    nn_ifs=$IFS; IFS=$NT_NL; set -f
    for nn_l in $nn_o; do IFS=$nn_ifs; set +f
      case $nn_l in
        "include$NT_TAB"*)
          nn_l=${nn_l#*"$NT_TAB"}
          while :; do case $nn_l in *,*) nn_l="${nn_l%%,*} ${nn_l#*,}" ;; *) break ;; esac; done
          nn_todo="$nn_todo $nn_l" ;;
        *) printf '%s\n' "$nn_l" ;;
      esac
    done; IFS=$nn_ifs; set +f
  done
}

# nn_boot_scan: every finding of the mechanisms above for $NN_IF, "exact|heur<TAB>class<TAB>where<TAB>text" lines on
# stdout; reads only (the preflight and the live read share it). The rc.local lines this resource adopts ($NN_ADL)
# are left out.
nn_boot_scan() {
  nn_rcs=''
  for nn_f in /etc/rc.d/rc.local /etc/rc.local; do
    [ -f "$nn_f" ] || continue
    nn_r=$(readlink -f "$nn_f" 2>/dev/null) || nn_r=$nn_f
    case " $nn_rcs " in *" $nn_r "*) continue ;; esac
    nn_rcs="$nn_rcs $nn_r"
    nn_boot_cmds rc "$nn_r"
  done
  if ! nn_boot_link; then
    # no udevadm answer (no udev, or a container): .link files naming the interface only warn
    for nn_f in /etc/systemd/network/*.link /run/systemd/network/*.link /usr/lib/systemd/network/*.link /lib/systemd/network/*.link; do
      [ -f "$nn_f" ] && grep -qE "^[[:space:]]*(OriginalName|Name)=(.*[[:space:]])?$NN_IF([[:space:]]|\$)" "$nn_f" 2>/dev/null &&
        printf 'heur\tlink\t%s\t%s\n' "$nn_f" "a .link file naming $NN_IF (udevadm could not say whether it applies)"
    done
  fi
  nn_boot_nm
  for nn_f in /etc/network/interfaces /etc/network/interfaces.d/*; do
    [ -f "$nn_f" ] && nn_boot_cmds ifupdown "$nn_f"
  done
  nn_boot_tuned
  # every readable file in one awk (mode anyfiles: a file holding this resource's owner line is left out, as
  # nn_is_ours would); a file not readable as before (grep, then an awk of its own)
  set --
  for nn_f in /etc/systemd/system/*.service /etc/network/if-up.d/* /etc/network/if-pre-up.d/* /etc/NetworkManager/dispatcher.d/* /etc/udev/rules.d/*.rules; do
    [ -f "$nn_f" ] || continue
    if [ -r "$nn_f" ]; then set -- "$@" "$nn_f"; continue; fi
    [ $# = 0 ] || nn_boot_cmds anyfiles "$@"; set --
    nn_is_ours "$nn_f" && continue
    nn_boot_cmds any "$nn_f"
  done
  [ $# = 0 ] || nn_boot_cmds anyfiles "$@"
  return 0
}

# nn_boot_class KEY: adds the setting class of a desired key (IF/GROUP.NAME, net.core.rps_sock_flow_entries) to
# nn_classes (" class class ").
nn_boot_class() {
  case "$1" in
    net.core.rps_sock_flow_entries) nn_c=sockflow ;;
    */*) nn_c=${1#*/}; nn_c=${nn_c%%.*} ;;
    *) return 0 ;;
  esac
  case "$nn_classes" in *" $nn_c "*) ;; *) nn_classes="$nn_classes$nn_c " ;; esac
}

# nn_boot_finding TAG CLASS WHERE TEXT: for a finding of nn_boot_scan that counts (of a class this resource declares;
# a .link file that may apply, always), NN_BF_LEVEL (error or warn, from NN_BOOT) and NN_BF_MSG in the preflight's
# words; 1 when it does not count.
nn_boot_finding() {
  case $1 in
    exact)
      case "$nn_classes" in *" $2 "*) ;; *) return 1 ;; esac
      nn_m="$3 re-applies $2 settings of $NN_IF at boot ('$4'), over this resource's"
      if [ "$NN_BOOT" = error ]; then
        NN_BF_LEVEL=error NN_BF_MSG="bootOverride: $nn_m: remove that line (rc.local: or list it in adoptRcLocalLines), or set bootOverride to \"warn\" to accept it"
      else NN_BF_LEVEL=warn NN_BF_MSG="bootOverride: $nn_m"; fi ;;
    heur)
      case "$2" in link) ;; *) case "$nn_classes" in *" $2 "*) ;; *) return 1 ;; esac ;; esac
      NN_BF_LEVEL=warn NN_BF_MSG="bootOverride (heuristic): $3 mentions $NN_IF ('$4'): check that it does not re-apply $2 settings at boot" ;;
    *) return 1 ;;
  esac
}

# nn_boot_findings CALLBACK TEXT: CALLBACK LEVEL MESSAGE for each finding of TEXT (nn_boot_scan's lines) that counts,
# the exact ones first (the preflight: nt_problem / nt_warn; the live read: refuse / warn lines).
nn_boot_findings() {
  nn_bf_cb=$1 nn_bf_all=$2
  for nn_pass in exact heur; do
    nn_ifs=$IFS; IFS=$NT_NL; set -f
    for nn_l in $nn_bf_all; do
      IFS=$NT_TAB
      # shellcheck disable=SC2086 # the finding's fields (its text last: the rest of the line)
      set -- $nn_l
      IFS=$nn_ifs; set +f
      if [ $# -ge 4 ] && [ "$1" = "$nn_pass" ]; then
        nn_bf_t=${nn_l#*"$NT_TAB"*"$NT_TAB"*"$NT_TAB"}
        nn_boot_finding "$1" "$2" "$3" "$nn_bf_t" && "$nn_bf_cb" "$NN_BF_LEVEL" "$NN_BF_MSG"
      fi
      IFS=$NT_NL; set -f
    done; IFS=$nn_ifs; set +f
  done
  return 0
}

nn_boot_overrides() {
  nn_rc_adopt_preflight
  [ "$NN_MODE" != none ] && [ "$NN_BOOT" != ignore ] || return 0
  # the setting classes this resource declares for the interface
  nn_classes=' '
  while IFS="$NT_TAB" read -r nn_k _; do nn_boot_class "$nn_k"; done < "$NT_TMP/desired"
  # (NN_ADL: the adopted rc.local lines, from nn_rc_adopt_preflight)
  # (a file, not a command substitution: that would be one more process)
  nn_boot_scan > "$NT_TMP/boot.found" || nt_tmp_full
  nn_bf=''
  while IFS= read -r nn_l; do nn_bf=$nn_bf$nn_l$NT_NL; done < "$NT_TMP/boot.found"
  nn_boot_findings nn_boot_preflight_cb "$nn_bf"
  return 0
}
nn_boot_preflight_cb() { if [ "$1" = error ]; then nt_problem "$2"; else nt_warn "$2"; fi; }

# ---------------------------------------------------------------------------------------- adoptRcLocalLines (issue #16)
# "@adopt-rc K TEXT": line TEXT (trimmed) of entry K; an entry of several lines matches consecutive lines of rc.local.
# The apply takes every matched line out of rc.local (the edited file must pass `sh -n`, `bash -n` for a bash
# script) and keeps the original next to the journal, in $NT_STATE/<owner id>.rc-adopted/: orig (the exact bytes) and
# meta ("path<TAB>mode<TAB>uid:gid<TAB>mtime<TAB>cksum of the edited file"). The restore gives it back byte for byte.
nn_rc_adopt_directive() {
  case "$2" in *"$NT_TAB"*) nt_die 5 "invalid @adopt-rc line" ;; esac
  nn_ak=${2%% *}; nn_at=${2#* }
  nn_uint "$nn_ak" || nt_die 5 "invalid @adopt-rc entry number '$nn_ak'"
  nn_at=$(printf '%s' "$nn_at" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
  printf '%s\t%s\n' "$nn_ak" "$nn_at" >> "$NT_TMP/rc.adopt.want"
}

nn_rc_adopt_dir() { NN_RADIR=$NT_STATE/$NT_OWNER_ID.rc-adopted; }

# Preflight: the lines to take out ($NT_TMP/rc.adopt.lines, "file:line", also skipped by the boot-override check).
nn_rc_adopt_preflight() {
  : > "$NT_TMP/rc.adopt.lines"; NN_RC_ADOPT=0 NN_ADL=''
  [ -s "$NT_TMP/rc.adopt.want" ] || return 0
  nn_rcw=''
  while IFS= read -r nn_l; do nn_rcw=$nn_rcw$nn_l$NT_NL; done < "$NT_TMP/rc.adopt.want"
  NN_RC_KNOWN=1
  nn_rc_adopt_check nt_problem "$nn_rcw" || return 0
  printf '%s' "$NN_ADL" > "$NT_TMP/rc.adopt.lines" || nt_tmp_full
  [ -n "$NN_ADL" ] && NN_RC_ADOPT=1
  return 0
}

# nn_rc_adopt_check CALLBACK WANT: the preflight's checks of adoptRcLocalLines (one rule for the preflight and the
# live read; reads only). WANT: the entries as "K<TAB>line" lines (trimmed). NN_ADL = the "file:line" lines to take
# out (newline-ended), when they can be; each problem through CALLBACK (nt_problem; the read: nt_live_refuse); 1 when
# refused. What this resource took out before is in root's state dir: NN_RC_KNOWN=0 (a read without root, of a
# resource applied before) leaves what depends on it to `up`.
nn_rc_adopt_check() {
  NN_ADL='' nn_cb=$1
  nn_rc_adopt_dir
  nn_rc_before=0; [ -f "$NN_RADIR/meta" ] && nn_rc_before=1
  if [ ! -f "$NN_RCLOCAL" ]; then
    [ "$nn_rc_before" = 1 ] || [ "$NN_RC_KNOWN" = 0 ] && return 0
    "$nn_cb" "adoptRcLocalLines: $NN_RCLOCAL does not exist on $NT_HOSTNAME: nothing to adopt; remove adoptRcLocalLines"; return 1
  fi
  [ -r "$NN_RCLOCAL" ] || return 0 # (a read without root: up reads it)
  nn_m=$(NN_RCW=$2 awk -v tab="$NT_TAB" -v f="$NN_RCLOCAL" '
    function trim(s) { sub(/^[ \t\r]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
    BEGIN {
      n = split(ENVIRON["NN_RCW"], wl, "\n")
      for (x = 1; x <= n; x++) { l = wl[x]; i = index(l, tab); if (!i) continue; k = substr(l, 1, i - 1) + 0; w[k, ++len[k]] = substr(l, i + 1); if (k > maxk) maxk = k }
    }
    /^# BEGIN pulumi-net-tuning / { inblk = 1 }
    { t[NR] = inblk ? "\001" : trim($0) }
    /^# END pulumi-net-tuning / { inblk = 0 }
    END {
      for (k = 0; k <= maxk; k++) {
        if (!len[k]) continue
        found = 0; at = ""
        for (s = 1; s + len[k] - 1 <= NR; s++) {
          ok = 1
          for (j = 1; j <= len[k]; j++) if (t[s + j - 1] != w[k, j]) { ok = 0; break }
          if (ok) { found++; at = at (at == "" ? "" : ", ") s; first = s }
        }
        if (found == 1) for (j = 0; j < len[k]; j++) print "line" tab f ":" (first + j)
        else print (found ? "many" : "none") tab k tab w[k, 1] tab at
      }
    }' "$NN_RCLOCAL")
  nn_rc_bad=0 nn_rc_sp=''
  nn_ifs=$IFS; IFS=$NT_NL; set -f
  for nn_l in $nn_m; do IFS=$NT_TAB
    # shellcheck disable=SC2086 # the match's fields: line|many|none, then its data
    set -- $nn_l
    IFS=$nn_ifs; set +f
    case "$1" in
      line) NN_ADL=$NN_ADL$2$NT_NL; nn_rc_sp="$nn_rc_sp$2 " ;;
      many) nn_rc_bad=1; "$nn_cb" "adoptRcLocalLines[$2] ('$3') matches $NN_RCLOCAL more than once (at lines $4): give more of the surrounding lines in that entry so it matches once" ;;
      none)
        [ "$nn_rc_before" = 1 ] || [ "$NN_RC_KNOWN" = 0 ] && continue
        nn_rc_bad=1; "$nn_cb" "adoptRcLocalLines[$2] ('$3') is not in $NN_RCLOCAL on $NT_HOSTNAME (compared trimmed, outside pulumi-net-tuning blocks): copy the lines exactly as the file has them" ;;
    esac
  done; IFS=$nn_ifs; set +f
  [ -n "$NN_ADL" ] || return "$nn_rc_bad"
  if [ "$nn_rc_before" = 1 ]; then
    "$nn_cb" "adoptRcLocalLines: this resource took lines out of $NN_RCLOCAL before and the file holds adopted lines again ($nn_rc_sp): remove them by hand (the original kept in $NN_RADIR comes back on delete)"
    return 1
  fi
  if [ "$NN_MODE" = rc.local ] || nn_rclocal_has_block; then
    "$nn_cb" "adoptRcLocalLines needs persistence \"systemd\" or \"none\" (rc.local would hold this resource's own block): set persistence"
    return 1
  fi
  return "$nn_rc_bad"
}

# kind_files: the original saved (staged first), then rc.local without the adopted lines, checked with sh -n.
nn_rc_adopt_stage() {
  [ "${NN_RC_ADOPT:-0}" = 1 ] || return 0
  nn_rc_adopt_dir
  [ -d "$NN_RADIR" ] || { umask 077; mkdir -p "$NN_RADIR"; nn_rc=$?; umask 022; [ "$nn_rc" = 0 ]; } || nt_die 1 "cannot create $NN_RADIR on $NT_HOSTNAME"
  cat "$NN_RCLOCAL" > "$NT_TMP/rc.adopt.orig" || nt_die 1 "cannot copy $NN_RCLOCAL to $NT_TMP"
  awk -v list="$NT_TMP/rc.adopt.lines" -v f="$NN_RCLOCAL" '
    BEGIN { while ((getline l < list) > 0) { sub(/.*:/, "", l); drop[l] = 1 } }
    !(FNR in drop)' "$NN_RCLOCAL" > "$NT_TMP/rc.adopt.edit" || nt_die 1 "cannot prepare the edited $NN_RCLOCAL in $NT_TMP"
  nn_sh='sh'
  case "$(head -n 1 "$NN_RCLOCAL")" in '#!'*bash*) command -v bash >/dev/null 2>&1 && nn_sh=bash ;; esac
  if ! nn_out=$("$nn_sh" -n "$NT_TMP/rc.adopt.edit" 2>&1); then
    nt_die 2 "adoptRcLocalLines: $NN_RCLOCAL without the adopted lines does not parse ($nn_sh -n: $(printf '%s' "$nn_out" | tr '\n' ' ')): adopt whole constructs (a for loop with its done); nothing was changed"
  fi
  nn_meta=$(stat -c '%a %u:%g %Y' "$NN_RCLOCAL") || nt_die 1 "cannot stat $NN_RCLOCAL"
  nn_ns=$(stat -c '%.9Y' "$NN_RCLOCAL" 2>/dev/null) || nn_ns=''
  set -f
  # shellcheck disable=SC2086 # three fields
  set -- $nn_meta
  set +f
  case "$nn_ns" in ''|*[!0-9.]*) nn_ns=$3 ;; esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$NN_RCLOCAL" "$1" "$2" "$nn_ns" "$(cksum < "$NT_TMP/rc.adopt.edit")" > "$NT_TMP/rc.adopt.meta"
  nt_stage_file "$NN_RADIR/orig" "$NT_TMP/rc.adopt.orig" 0600
  nt_stage_file "$NN_RADIR/meta" "$NT_TMP/rc.adopt.meta" 0600
  nt_stage_file "$NN_RCLOCAL" "$NT_TMP/rc.adopt.edit" "$1"
}

# Restore: rc.local back byte for byte (content, mode, owner, mtime) when it is still as the apply left it; edited
# since: the original is written next to it and a warning says so.
nn_rc_adopt_restore() {
  nn_rc_adopt_dir
  [ -f "$NN_RADIR/meta" ] || return 0
  IFS="$NT_TAB" read -r nn_p nn_m nn_o nn_mt nn_sum < "$NN_RADIR/meta" || nt_die 1 "cannot read $NN_RADIR/meta"
  nn_dest=$nn_p
  if [ -f "$nn_p" ] && [ "$(cksum < "$nn_p")" != "$nn_sum" ]; then
    nn_dest=$nn_p.net-tuning-adopted-original
    nt_warn "$nn_p was edited after this resource took lines out of it: the original (with the adopted lines) was written to $nn_dest; merge it by hand"
  fi
  nn_t="${nn_dest%/*}/.${nn_dest##*/}.net-tuning-adopt"
  rm -f "$nn_t" 2>/dev/null
  if cat "$NN_RADIR/orig" > "$nn_t" && chmod "$nn_m" "$nn_t" && chown "$nn_o" "$nn_t" &&
    { touch -c -d "@$nn_mt" "$nn_t" 2>/dev/null || touch -c -d "@${nn_mt%.*}" "$nn_t"; } && mv -f "$nn_t" "$nn_dest"; then :; else
    rm -f "$nn_t" 2>/dev/null
    nt_die 1 "cannot put back $nn_p on $NT_HOSTNAME (its original stays in $NN_RADIR): run the delete again"
  fi
  nt_step "rc.local lines given back"
  rm -rf "$NN_RADIR" 2>/dev/null
  [ -e "$NN_RADIR" ] && nt_warn "cannot remove $NN_RADIR on $NT_HOSTNAME: remove it by hand"
  return 0
}
