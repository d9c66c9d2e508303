# pulumi-net-tuning: the sysctl kind (NetTuning). Sourced after runtime.sh.
NTS_FILE=''
NTS_PERSIST=1
NTS_BOOT=error
NTS_MODULES=''

kind_directive() {
  case "$1" in
    file)
      case "$2" in /etc/sysctl.d/*.conf) ;; *) return 1 ;; esac
      case "${2#/etc/sysctl.d/}" in *[!A-Za-z0-9._-]*|.*) nt_die 5 "invalid sysctl.d file name '$2'" ;; esac
      NTS_FILE=$2 ;;
    persist) NTS_PERSIST=$2 ;;
    boot-override) case "$2" in error|warn|ignore) NTS_BOOT=$2 ;; *) return 1 ;; esac ;;
    module) nt_valid_word "$2" || nt_die 5 "invalid module name '$2'"; NTS_MODULES="$NTS_MODULES $2" ;;
    readback) # @readback KEY VALUE (the value a pow2 key reads back as), or KEY FORM (ms-jiffies, or pow2)
      case "${2#* }" in pow2|ms-jiffies) ;; *[!0-9]*|'') nt_die 5 "invalid read-back form '${2#* }'" ;; esac
      printf '%s\t%s\n' "${2%% *}" "${2#* }" >> "$NT_TMP/readback" ;;
    hint) printf '%s\t%s\n' "${2%% *}" "${2#* }" >> "$NT_TMP/hints" ;;
    *) return 1 ;;
  esac
  return 0
}

kind_content() {
  printf '%s\n' "$1" >> "$NT_TMP/content"
  case "$1" in ''|'#'*|';'*) return 0 ;; esac
  nts_k=${1%% = *}; nts_v=${1#* = }
  [ "$nts_k" = "$1" ] && nt_die 5 "malformed sysctl line: $1"
  case "$nts_k" in *[!A-Za-z0-9._/:-]*|'') nt_die 5 "invalid sysctl key '$nts_k'" ;; esac
  case "$nts_v" in *[!A-Za-z0-9\ ._:,+-]*) nt_die 5 "invalid value for $nts_k" ;; esac
  nt_want "$nts_k" "$nts_v"
}

# Sets NTS_PATH to the /proc/sys file of a canonical key. As in sysctl(8) and systemd-sysctl, a key whose first
# separator is "." is dotted and a "/" inside it stands for a literal "." (net.ipv4.conf.eth0/100.rp_filter);
# a key whose first separator is "/" is already a path.
nts_path() {
  case "${1%%[./]*}" in
    "$1") NTS_PATH=/proc/sys/$1; return 0 ;;
  esac
  case "$1" in
    "${1%%[./]*}/"*) NTS_PATH=/proc/sys/$1; return 0 ;;
  esac
  nts_ifs=$IFS; IFS=.; set -f
  # shellcheck disable=SC2086 # split on dots
  set -- $1
  NTS_PATH=/proc/sys
  for nts_c in "$@"; do
    case "$nts_c" in
      */*) IFS=/
        # shellcheck disable=SC2086 # split on slashes
        set -- $nts_c
        IFS=.; nts_c="$*" ;;
    esac
    NTS_PATH=$NTS_PATH/$nts_c
  done
  set +f; IFS=$nts_ifs
}

kind_get() {
  nts_path "$1"
  NT_GOT=''
  [ -r "$NTS_PATH" ] || return 1
  # Not the read builtin: it reads byte by byte and /proc/sys handlers answer only a read at offset 0.
  NT_GOT=$(cat "$NTS_PATH" 2>/dev/null) || return 1
}

# kind_get_many IN OUT: OUT = "key<TAB>value" for every readable key named in IN's first column, read by ONE awk
# (a read(2) at offset 0 with a large buffer, as /proc/sys needs); unreadable keys are left out.
kind_get_many() {
  while IFS="$NT_TAB" read -r nts_k _; do nts_path "$nts_k"; printf '%s\t%s\n' "$nts_k" "$NTS_PATH"; done < "$1" > "$NT_TMP/gm.paths"
  awk -F "$NT_TAB" -v OFS="$NT_TAB" '{
      v = ""; n = 0
      while ((r = (getline l < $2)) > 0) { v = n++ ? v " " l : l }
      close($2)
      if (r == 0 && n > 0) print $1, v
    }' "$NT_TMP/gm.paths" > "$2"
}

# Values the preflight needs besides the desired keys (read in the same snapshot).
kind_snapshot_keys() {
  nt_lookup "$NT_TMP/desired" net.ipv4.ip_local_port_range && printf 'net.ipv4.ip_unprivileged_port_start\n'
  if nt_lookup "$NT_TMP/desired" net.ipv4.tcp_congestion_control; then
    printf 'net.ipv4.tcp_available_congestion_control\nnet.ipv4.tcp_allowed_congestion_control\n'
  fi
  return 0
}

kind_set() {
  nts_path "$1"
  NT_ERR=''
  if { printf '%s\n' "$2" > "$NTS_PATH"; } 2>/dev/null; then return 0; fi
  # The shell's message is useless ("I/O error"); ask sysctl for the kernel's answer (a second write of the same value).
  NT_ERR=$(sysctl -w "$1=$2" 2>&1 | tail -n 1)
  [ -n "$NT_ERR" ] || NT_ERR='write failed'
  return 1
}

# ------------------------------------------------------------------------- read-back forms
# The forms of provider/sysctl/readback.ts: exact/whitespace (nt_same), pow2 (rounded up to a power of two, 0 stays
# 0) and ms-jiffies (milliseconds kept in jiffies: rounded up to the next jiffy, less than 10 ms above at HZ >= 100).
nts_form() { # KEY: NTS_FORM = the key's read-back form from the plan ('' = exact); NT_FOUND is left as it was
  NTS_FORM=''; nts_found=${NT_FOUND:-}
  [ -f "$NT_TMP/readback" ] && nt_lookup "$NT_TMP/readback" "$1" && NTS_FORM=$NT_FOUND
  NT_FOUND=$nts_found
}

kind_expect() {
  NT_EXPECT=$2
  nts_form "$1"
  case "$NTS_FORM" in
    pow2) case "$2" in ''|*[!0-9]*) ;; *) NT_EXPECT=$(nt_pow2 "$2") ;; esac ;;
    ''|ms-jiffies) ;;
    *) NT_EXPECT=$NTS_FORM ;; # the expected value (pow2 keys: rendered by the plan)
  esac
}

# kind_same KEY DECLARED LIVE (whitespace-folded, already found unequal): equal in the key's read-back form?
kind_same() {
  nts_form "$1"
  [ "$NTS_FORM" = ms-jiffies ] || return 1
  case "$2$3" in ''|*[!0-9]*) return 1 ;; esac
  [ "${#2}" -le 10 ] && [ "${#3}" -le 10 ] && [ "$3" -ge "$2" ] && [ $(($3 - $2)) -lt 10 ] || return 1
  grep -qF "$1 = $2 reads back $3" "$NT_TMP/warnings" 2>/dev/null && return 0
  # The jiffy length that gives this rounding names the step (HZ 1000, 300, 250 or 100).
  nts_step=$(awk -v d="$2" -v l="$3" 'BEGIN {
    split("1000 300 250 100", hz, " ")
    for (i = 1; i <= 4; i++) {
      j = int((d * hz[i] + 999) / 1000); m = int((j * 1000 + hz[i] - 1) / hz[i])
      if (m == l) { printf "a step of %s ms (HZ=%s)", (hz[i] == 300 ? "3.3" : 1000 / hz[i]), hz[i]; exit }
    }
    print "a step of one jiffy"
  }')
  nt_warn "$1 = $2 reads back $3 on $NT_HOSTNAME: the kernel keeps it in jiffies and rounds it up to the next one, $nts_step; the sysctl.d file keeps $2"
  return 0
}

# True inside a network namespace other than the initial one: there net.core.rmem_max is read-only (mode 0444).
# (/proc/1/ns/net cannot tell: in a container or a pid namespace, pid 1 shares our namespace.)
nts_child_netns() {
  # shellcheck disable=SC2012 # a fixed /proc path
  case "$(ls -lL /proc/sys/net/core/rmem_max 2>/dev/null)" in ??w*) return 1 ;; '') return 1 ;; esac
  return 0
}

nts_is_ours() { # FILE: written by this resource?
  [ -f "$1" ] && grep -qxF "# pulumi-net-tuning owner: $NT_OWNER" "$1"
}

nts_boot_files() { # prints the files systemd-sysctl/procps read at boot, in order, one "name<TAB>path" per line
  : > "$NT_TMP/bootfiles"
  for nts_d in /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
    [ -d "$nts_d" ] || continue
    # /lib may be a symlink to /usr/lib: the same file is read once.
    for nts_f in "$nts_d"/*.conf; do
      [ -e "$nts_f" ] || continue
      nts_b=${nts_f##*/}
      nt_lookup "$NT_TMP/bootfiles" "$nts_b" && continue
      printf '%s\t%s\n' "$nts_b" "$nts_f" >> "$NT_TMP/bootfiles"
    done
  done
  # (sorted by name in the awk of nts_boot_conflicts; /etc/sysctl.conf is read last)
  [ -f /etc/sysctl.conf ] && printf '~sysctl.conf\t/etc/sysctl.conf\n' >> "$NT_TMP/bootfiles"
  return 0
}

# Every one of our keys that a file applied after ours at boot sets to another value, with file and line.
nts_boot_conflicts() {
  nts_boot_files
  awk -v ours="${NTS_FILE##*/}" -v tab="$NT_TAB" -v desired="$NT_TMP/desired" -v list="$NT_TMP/bootfiles" -v mine="$NT_TMP/ours" \
    -v self="$NTS_FILE" -v marker="# pulumi-net-tuning owner: $NT_OWNER" '
    function norm(s) { gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
    function dots(k,  first) {
      # systemd-sysctl/procps: a key whose first separator is "/" is a path; swap "/" and "." to get the dotted form.
      first = match(k, /[.\/]/)
      if (first && substr(k, first, 1) == "/") { gsub(/\./, "\001", k); gsub(/\//, ".", k); gsub(/\001/, "/", k) }
      return k
    }
    BEGIN {
      FS = tab
      while ((getline line < desired) > 0) { split(line, a, tab); want[dots(a[1])] = norm(a[2]) }
      nf = 0
      while ((getline line < list) > 0) {
        # insertion sort by name (C collation; "~sysctl.conf" sorts after every other name)
        split(line, b, tab); i = ++nf
        while (i > 1 && fname[i - 1] > b[1]) { fname[i] = fname[i - 1]; fpath[i] = fpath[i - 1]; i-- }
        fname[i] = b[1]; fpath[i] = b[2]
      }
      # Our own sysctl.d files other than the planned one (an earlier fileName): removed by this run, so not a conflict.
      printf "" > mine
      for (fi = 1; fi <= nf; fi++) {
        p = fpath[fi]
        if (index(p, "/etc/sysctl.d/") != 1 || p == self) continue
        while ((getline l < p) > 0) if (l == marker) { gone[p] = 1; print p > mine; break }
        close(p)
      }
      close(mine)
      for (fi = 1; fi <= nf; fi++) {
        a[1] = fname[fi]; a[2] = fpath[fi]
        if (a[1] != "~sysctl.conf" && a[1] <= ours) continue
        if (a[2] in gone) continue
        file = a[2]; n = 0
        while ((getline l < file) > 0) {
          n++
          if (l ~ /^[ \t]*[#;]/ || l !~ /=/) continue
          k = l; sub(/=.*/, "", k); v = l; sub(/^[^=]*=/, "", v)
          k = norm(k); sub(/^-/, "", k); k = dots(k); v = norm(v)
          for (w in want) {
            if (w == k) hit = 1
            else if (index(k, "*") && k ~ /^[A-Za-z0-9_.\/:*-]+$/) { pat = k; gsub(/\./, "\\.", pat); gsub(/\*/, ".*", pat); hit = (w ~ ("^" pat "$")) }
            else hit = 0
            if (hit && v != want[w]) {
              note = (a[1] == "~sysctl.conf") ? " (read last by sysctl --system; systemd-sysctl reads it through 99-sysctl.conf where that link exists)" : ""
              printf "%s = %s is overridden at boot by %s:%d which sets %s%s\n", w, want[w], file, n, v, note
            }
          }
        }
        close(file)
      }
    }'
}

kind_preflight() {
  [ -n "$NTS_FILE" ] || nt_die 5 "plan has no @file"
  nts_loaded=0
  for nts_m in $NTS_MODULES; do
    [ -d "/sys/module/$nts_m" ] && continue
    if nts_out=$(modprobe "$nts_m" 2>&1); then nts_loaded=1; else
      nt_problem "kernel module $nts_m (needed by the requested settings) could not be loaded: ${nts_out:-modprobe failed}; install it or remove the setting that needs it"
    fi
  done
  # A module loaded now brings its keys (net.netfilter.*) and values (bbr in tcp_available_congestion_control): the
  # snapshot the checks below use, taken before the preflight, is read again.
  if [ "${nts_loaded:-0}" = 1 ]; then nt_snapshot; fi
  nts_missing=''
  nts_plist=''
  while IFS="$NT_TAB" read -r nts_k nts_v; do
    nts_path "$nts_k"
    if [ ! -e "$NTS_PATH" ]; then
      nts_h=''
      [ -f "$NT_TMP/hints" ] && nt_lookup "$NT_TMP/hints" "$nts_k" && nts_h=" ($NT_FOUND)"
      nts_missing="$nts_missing $nts_k$nts_h;"
      continue
    fi
    if [ ! -w "$NTS_PATH" ]; then
      nt_problem "$nts_k is read-only here ($NTS_PATH not writable: read-only /proc/sys, e.g. a container): set it on the host that owns this network namespace"
      continue
    fi
    printf '%s\n' "$NTS_PATH" >> "$NT_TMP/paths"
    nts_plist="$nts_plist $NTS_PATH"
  done < "$NT_TMP/desired"
  if [ -n "$nts_missing" ]; then
    nts_ns=''
    nts_child_netns && nts_ns=', inside a network namespace other than the host'"'"'s: host-wide keys are absent here'
    nt_problem "these keys do not exist on this kernel ($(uname -r)$nts_ns):${nts_missing%;} — check the spelling, the kernel version, or load the module that provides them"
  fi
  if [ -s "$NT_TMP/paths" ]; then
    # Mode bits: root may write a 0444 file's inode per access(2), but the kernel refuses it (EPERM).
    set -f
    # shellcheck disable=SC2086,SC2012 # paths were validated: [A-Za-z0-9._/:-] only
    ls -lLd -- $nts_plist > "$NT_TMP/ro" 2>/dev/null
    set +f
    while IFS= read -r nts_l; do
      case "$nts_l" in ??w*) continue ;; esac
      nts_p=${nts_l##* }
      nt_problem "${nts_p#/proc/sys/} is read-only on this kernel (no write permission on $nts_p): it is host-wide (set it on the host, not inside a network namespace or container) or not settable"
    done < "$NT_TMP/ro"
  fi
  if nt_lookup "$NT_TMP/desired" net.ipv4.tcp_congestion_control; then
    nts_cc=$NT_FOUND
    nts_avail=''; nt_lookup "$NT_TMP/live" net.ipv4.tcp_available_congestion_control && nts_avail=$NT_FOUND
    case " $nts_avail " in
      *" $nts_cc "*)
        # Outside the initial network namespace the kernel only lets a namespace pick an *allowed* algorithm (EPERM).
        if nts_child_netns; then
          nts_allowed=''; nt_lookup "$NT_TMP/live" net.ipv4.tcp_allowed_congestion_control && nts_allowed=$NT_FOUND
          case " $nts_allowed " in
            *" $nts_cc "*) ;;
            *) nt_problem "net.ipv4.tcp_congestion_control = $nts_cc is available but not allowed inside this network namespace (net.ipv4.tcp_allowed_congestion_control: $nts_allowed): add it to tcp_allowed_congestion_control on the host, or pick an allowed one" ;;
          esac
        fi ;;
      *) nt_problem "net.ipv4.tcp_congestion_control = $nts_cc is not available on this kernel (available: $nts_avail): load module tcp_$nts_cc (BBR needs Linux 4.9+) or pick an available one" ;;
    esac
  fi
  # The kernel refuses a local port range that starts below ip_unprivileged_port_start (EINVAL).
  if nt_lookup "$NT_TMP/desired" net.ipv4.ip_local_port_range; then
    nts_low=${NT_FOUND%% *}
    if nt_lookup "$NT_TMP/desired" net.ipv4.ip_unprivileged_port_start; then nts_unpriv=$NT_FOUND
    elif nt_lookup "$NT_TMP/live" net.ipv4.ip_unprivileged_port_start; then nts_unpriv=$NT_FOUND
    else nts_unpriv=0; fi
    if [ "$nts_low" -lt "$nts_unpriv" ] 2>/dev/null; then
      nt_problem "net.ipv4.ip_local_port_range starts at $nts_low, below net.ipv4.ip_unprivileged_port_start = $nts_unpriv: the kernel refuses it. Fix: start the range at $nts_unpriv or above, or lower ip_unprivileged_port_start in the same resource"
    fi
  fi
  if nt_lookup "$NT_TMP/desired" fs.file-max && nts_fm=$NT_FOUND && nt_lookup "$NT_TMP/live" fs.file-max && NT_GOT=$NT_FOUND && NT_FOUND=$nts_fm &&
    [ "$NT_FOUND" -lt "$NT_GOT" ] 2>/dev/null; then
    nt_warn "fs.file-max = $NT_FOUND LOWERS the current $NT_GOT (systemd sets LONG_MAX at boot); remove fs.file-max unless you mean to cap it"
  fi
  # NicQueues (kind nic) may own net.core.rps_sock_flow_entries too: one owner per key across both kinds.
  if nt_lookup "$NT_TMP/desired" net.core.rps_sock_flow_entries; then
    for nts_j in "$NT_ROOT"/nic/*.orig; do
      [ -f "$nts_j" ] && nt_lookup "$nts_j" net.core.rps_sock_flow_entries &&
        nt_problem "net.core.rps_sock_flow_entries is already managed by $(cat "${nts_j%.orig}.owner" 2>/dev/null || echo "${nts_j##*/}") on this host (NicQueues rps.sockFlowEntries, journal $nts_j): set it in one resource only"
    done
  fi
  if [ -e "$NTS_FILE" ] && ! nts_is_ours "$NTS_FILE"; then
    nt_problem "$NTS_FILE exists and was not written by this resource ($NT_OWNER): choose another fileName, or move that file away first"
  fi
  if [ ! -f "$NT_JOURNAL" ] && nts_is_ours "$NTS_FILE"; then
    nt_problem "$NTS_FILE was written by this resource but its journal of original values ($NT_JOURNAL) is missing: refusing to record tuned values as originals. Delete the resource (pulumi destroy --target restores the originals from Pulumi state), then create it again"
  fi
  if [ "$NTS_PERSIST" = 1 ] && [ "$NTS_BOOT" != ignore ]; then
    nts_boot_conflicts > "$NT_TMP/conflicts" # also lists our other sysctl.d files in $NT_TMP/ours
    while IFS= read -r nts_c; do
      if [ "$NTS_BOOT" = error ]; then nt_problem "$nts_c: remove that line, or set bootOverride to \"warn\" to accept it"; else nt_warn "$nts_c"; fi
    done < "$NT_TMP/conflicts"
  else
    nts_our_files
  fi
}

# Our sysctl.d files other than the planned one ($NT_TMP/ours): an earlier fileName (also one a 0.1.0 journal does
# not list). They are removed in this run, so the boot-order check ignores them.
nts_our_files() {
  : > "$NT_TMP/ours"
  set --
  for nts_f in /etc/sysctl.d/*.conf; do
    [ -f "$nts_f" ] && [ "$nts_f" != "$NTS_FILE" ] && set -- "$@" "$nts_f"
  done
  [ $# = 0 ] || grep -lxF "# pulumi-net-tuning owner: $NT_OWNER" "$@" > "$NT_TMP/ours" 2>/dev/null
  return 0
}

kind_files() {
  nts_mods=/etc/modules-load.d/pulumi-net-tuning-$NT_OWNER_ID.conf
  if [ "$NTS_PERSIST" = 1 ]; then
    nt_stage_file "$NTS_FILE" "$NT_TMP/content" 0644
    if [ -n "$NTS_MODULES" ]; then
      { printf '# pulumi-net-tuning owner: %s\n' "$NT_OWNER"; for nts_m in $NTS_MODULES; do printf '%s\n' "$nts_m"; done; } > "$NT_TMP/modules"
      nt_stage_file "$nts_mods" "$NT_TMP/modules" 0644
    elif nts_is_ours "$nts_mods"; then nt_stage_remove "$nts_mods"
    fi
  else
    nts_is_ours "$NTS_FILE" && nt_stage_remove "$NTS_FILE"
    nts_is_ours "$nts_mods" && nt_stage_remove "$nts_mods"
  fi
  # Our files under an earlier name go after the new one is written (a crash in between leaves both, never none).
  while IFS= read -r nts_f; do nt_stage_remove "$nts_f"; done < "$NT_TMP/ours"
  return 0
}

kind_after_commit() { return 0; }

# An artefact of an earlier run that this run no longer declares (renamed fileName, persist turned off, modules gone).
kind_drop_artefact() {
  nts_is_ours "$1" && nt_stage_remove "$1"
  return 0
}

# The report reuses the values read back right after the apply (no second read per key).
kind_report_value() {
  nt_lookup "$NT_TMP/got" "$1" || return 1
  NT_GOT=$NT_FOUND
}

kind_report() {
  if [ "$NTS_PERSIST" = 1 ]; then printf 'file\t%s\n' "$NTS_FILE"; fi
}

kind_restore_files() {
  [ -n "$NTS_FILE" ] && nts_is_ours "$NTS_FILE" && nt_stage_remove "$NTS_FILE"
  nts_our_files
  while IFS= read -r nts_f; do nt_stage_remove "$nts_f"; done < "$NT_TMP/ours"
  nts_mods=/etc/modules-load.d/pulumi-net-tuning-$NT_OWNER_ID.conf
  nts_is_ours "$nts_mods" && nt_stage_remove "$nts_mods"
  return 0
}
