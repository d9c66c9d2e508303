# pulumi-net-tuning: the sysctl kind (NetTuning). Sourced after runtime.sh.
NTS_FILE=''
NTS_PERSIST=1
NTS_BOOT=error
NTS_MODULES=''
# the content lines, written to $NT_TMP/content by the preflight (nothing reads it before)
NTS_CT=''
# The characters an original may have to be stored in Pulumi state (provider/sysctl/plan.ts, renderSysctlRestoreStdin:
# the same set; tests/unit/origChars.test.ts compares them): a value's characters (sysctlspec.sh) and tab. A key whose
# value on the host has any other is refused before anything changes. (The tab goes before the set's final "-", which
# stays last: a literal "-" in a bracket expression.)
NT_ORIG_CHARS="${NTS_VALUE_CHARS%-}$NT_TAB-"

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
    alias) # @alias KEY NAME...: the names of one kernel variable, for the owner check
      case "$2" in *'  '* | *[!A-Za-z0-9._:/@\ -]*) ;; [!\ ]*' '*[!\ ]) printf '%s\t%s\n' "${2%% *}" "${2#* }" >> "$NT_TMP/aliases"; return 0 ;; esac
      nt_die 5 "invalid @alias line '$2'" ;;
    adopt*) if command -v nts_adopt_directive >/dev/null 2>&1; then nts_adopt_directive "$1" "$2" || return 1; else return 1; fi ;;
    *) return 1 ;;
  esac
  return 0
}

kind_content() {
  NTS_CT=$NTS_CT$1$NT_NL
  case "$1" in ''|'#'*|';'*) return 0 ;; esac
  nts_k=${1%% = *}; nts_v=${1#* = }
  [ "$nts_k" = "$1" ] && nt_die 5 "malformed sysctl line: $1"
  case "$nts_k" in *[!$NTS_KEY_CHARS]*|'') nt_die 5 "invalid sysctl key '$nts_k'" ;; esac
  case "$nts_v" in *[!$NTS_VALUE_CHARS]*) nt_die 5 "invalid value for $nts_k" ;; esac
  nt_want "$nts_k" "$nts_v"
}

# Sets NTS_PATH to the /proc/sys file of a canonical key. As in sysctl(8) and systemd-sysctl, a key whose first
# separator is "." is dotted and a "/" inside it stands for a literal "." (net.ipv4.conf.eth0/100.rp_filter);
# a key whose first separator is "/" is already a path.
nts_path() {
  case $1 in
    */*) ;;
    *.*) # no "/": the dots are the separators
      nts_ifs=$IFS; IFS=.; set -f
      # shellcheck disable=SC2086 # split on dots
      set -- $1
      IFS=/; NTS_PATH="/proc/sys/$*"
      set +f; IFS=$nts_ifs; return 0 ;;
  esac
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

kind_get() { # 1: the key does not exist; 2: it exists but cannot be read (NT_ERR)
  nts_path "$1"
  NT_GOT=''
  [ -e "$NTS_PATH" ] || return 1
  # Not the read builtin: it reads byte by byte and /proc/sys handlers answer only a read at offset 0.
  NT_GOT=$(cat "$NTS_PATH" 2>/dev/null) || { NT_ERR="$NTS_PATH exists but cannot be read"; return 2; }
}

# kind_get_many IN OUT: OUT = "key<TAB>value" for every readable key named in IN's first column, read by ONE awk
# (a read(2) at offset 0 with a large buffer, as /proc/sys needs); unreadable keys are left out. The awk maps each
# key to its file as nts_path does (the shell's field splitting drops one trailing separator; IN is not read by
# the shell, whose read builtin costs one read(2) per byte). NT_GM = OUT's text, captured from the awk (a command
# substitution reads its pipe in blocks), for nt_index_text.
kind_get_many() {
  NT_GM=$(awk -F "$NT_TAB" -v OFS="$NT_TAB" '{
      k = $1
      if (match(k, /[.\/]/) == 0 || substr(k, RSTART, 1) == "/") f = "/proc/sys/" k
      else {
        sub(/\.$/, "", k); n = split(k, c, "."); f = "/proc/sys"
        for (i = 1; i <= n; i++) { sub(/\/$/, "", c[i]); gsub(/\//, ".", c[i]); f = f "/" c[i] }
      }
      v = ""; n = 0
      while ((r = (getline l < f)) > 0) { v = n++ ? v " " l : l }
      close(f)
      if (r == 0 && n > 0) print $1, v
    }' "$1")
  ntg_s=$?
  if [ -n "$NT_GM" ]; then printf '%s\n' "$NT_GM" > "$2"; else : > "$2"; fi
  return "$ntg_s"
}

# Values the preflight needs besides the desired keys (read in the same snapshot).
kind_snapshot_keys() {
  nt_lookup "$NT_TMP/desired" net.ipv4.ip_local_port_range && printf 'net.ipv4.ip_unprivileged_port_start\n'
  if nt_lookup "$NT_TMP/desired" net.ipv4.tcp_congestion_control; then
    printf 'net.ipv4.tcp_available_congestion_control\nnet.ipv4.tcp_allowed_congestion_control\n'
  fi
  return 0
}

# nts_cc_modules: NTS_CC_MODS = the congestion-control modules this host could load (the names of
# /lib/modules/$(uname -r)/kernel/net/ipv4/tcp_<name>.ko*, space-separated; empty when none): what the refusal of an
# unavailable tcp_congestion_control names, at apply and (nts_live_cc) at preview.
nts_cc_modules() {
  NTS_CC_MODS=''
  for nts_f in /lib/modules/"$(uname -r)"/kernel/net/ipv4/tcp_*.ko*; do
    [ -e "$nts_f" ] || continue
    nts_f=${nts_f##*/tcp_}; NTS_CC_MODS=${NTS_CC_MODS:+$NTS_CC_MODS }${nts_f%%.ko*}
  done
  return 0
}

# nts_modprobe [OPTION] MODULE: modprobe's status; NTS_OUT = what it said on stderr, its lines joined by "; " (one
# line: a problem of the preflight, a refuse line of the live read); its stdout (-D: the dependencies) is dropped.
nts_modprobe() {
  NTS_OUT=$(modprobe "$@" 2>&1 >/dev/null)
  nts_rc=$?
  while :; do case $NTS_OUT in *"$NT_NL"*) NTS_OUT="${NTS_OUT%%"$NT_NL"*}; ${NTS_OUT#*"$NT_NL"}" ;; *) return $nts_rc ;; esac; done
}

# nts_module_present MODULE: the module is there already, loaded (/sys/module/M) or built in as what it provides: a
# congestion control tcp_<name> whose <name> the kernel offers (tcp_available_congestion_control, read by a builtin).
# A built-in module without parameters has no /sys/module entry, and modprobe fails for it on a host without a module
# tree: the preflight and the read would refuse a bbr the kernel has.
nts_module_present() {
  [ -d "/sys/module/$1" ] && return 0
  case $1 in tcp_?*) ;; *) return 1 ;; esac
  nts_av=''; { read -r nts_av < /proc/sys/net/ipv4/tcp_available_congestion_control; } 2>/dev/null
  case " $nts_av " in *" ${1#tcp_} "*) return 0 ;; esac
  return 1
}

# The live read's check of the kernel modules a NetTuning's settings need (the request's MODULES field, the plan's
# modules: provider/live/read.ts requestModules): the preflight loads each one that is not present
# (nts_module_present) and refuses when modprobe fails (kind_preflight); the read loads nothing and writes nothing, so it
# asks modprobe for M's dependencies, -D (--show-depends: kmod, module-init-tools and busybox alike resolve the name,
# its alias, built-in or modules.dep as a load does, then print instead of loading or running an install command; as
# any user) and refuses in the preflight's words when that fails. What the dry run cannot tell is left to the preflight,
# said nothing of: no modprobe (127), a modprobe without -D (its usage), a file this user may not read, and a failure
# only a load meets (the kernel's refusal of the module, a failing install command).
nts_live_modules() {
  set -f
  for nts_m in $1; do set +f
    case $nts_m in '' | *[!A-Za-z0-9_-]*) continue ;; esac
    nts_module_present "$nts_m" && continue
    nts_modprobe -D "$nts_m" && continue
    [ "$nts_rc" != 127 ] || continue
    case $NTS_OUT in *'invalid option'* | *'unrecognized option'* | *[Uu]sage:* | *'ermission denied'*) continue ;; esac
    nts_msg_module "$nts_m" "${NTS_OUT:-modprobe failed}"
    nt_live_refuse "$NTS_MSG"
  done
  set +f
}

# The live read's facts for a declared net.ipv4.tcp_congestion_control (provider/host/messages.ts congestionRefusal):
# "host<TAB>cc-available|cc-allowed|cc-modules<TAB>…" and the kernel and netns lines (nt_live_host).
nts_live_cc() {
  for nts_k in available allowed; do
    NT_GOT=''; kind_get "net.ipv4.tcp_${nts_k}_congestion_control"; nt_norm "$NT_GOT"
    printf 'host\tcc-%s\t%s\n' "$nts_k" "$NT_NORM"
  done
  nts_cc_modules
  printf 'host\tcc-modules\t%s\n' "$NTS_CC_MODS"
  nt_live_host
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
nts_form() { # KEY: NTS_FORM = the key's read-back form from the plan ('' = exact), NTS_FKEY = KEY; NT_FOUND is left as it was
  NTS_FORM=''; nts_found=${NT_FOUND:-}
  [ -f "$NT_TMP/readback" ] && nt_lookup "$NT_TMP/readback" "$1" && NTS_FORM=$NT_FOUND
  NT_FOUND=$nts_found; NTS_FKEY=$1
}

kind_expect() {
  NT_EXPECT=$2
  nts_form "$1"
  case "$NTS_FORM" in
    pow2) case "$2" in ''|*[!0-9]*) ;; *) nt_pow2 "$2"; NT_EXPECT=$NT_POW2 ;; esac ;;
    ''|ms-jiffies) ;;
    *) NT_EXPECT=$NTS_FORM ;; # the expected value (pow2 keys: rendered by the plan)
  esac
}

# kind_same KEY DECLARED LIVE (whitespace-folded, already found unequal): equal in the key's read-back form?
kind_same() {
  # the form of the same key is still there when kind_expect asked for it last (the readback lines are final once
  # the plan is read)
  [ "$1" = "${NTS_FKEY-}" ] || nts_form "$1"
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

# nts_file_refusals CALLBACK [live]: the planned file's checks the preflight (CALLBACK nt_problem) and the live read
# (nt_live_refuse, with "live": it leaves a file the login user cannot read to the preflight) share, one rule and
# text (provider/host/messages.ts): a symlink there counts as the user's file, dangling or not (it would otherwise be
# replaced and lost: issue #32); a file without this resource's owner line is someone else's.
nts_file_refusals() {
  if [ -L "$NTS_FILE" ]; then
    nts_msg_file_link "$NTS_FILE" "$(readlink "$NTS_FILE" 2>/dev/null)" "$NT_OWNER"; "$1" "$NTS_MSG"
  elif [ -e "$NTS_FILE" ] && { [ "${2:-}" != live ] || [ -r "$NTS_FILE" ]; } && ! nts_is_ours "$NTS_FILE"; then
    nts_msg_file_other "$NTS_FILE" "$NT_OWNER"; "$1" "$NTS_MSG"
  fi
}

nts_is_ours() { # FILE: written by this resource?
  [ -f "$1" ] && grep -qxF "# pulumi-net-tuning owner: $NT_OWNER" "$1"
}

# The boot-order check, one rule for the apply's preflight (kind_preflight) and the live read (nts_live_boot). It reads
# only (no temporary file: the live read writes nothing), from NTS_FILE (the planned file), NTS_OWNER_LABEL (this
# resource's marker line names it), NTS_WANT (the desired settings: "key<TAB>value" or "key=value" items, newline- or
# ";"-separated) and NTS_SKIP (paths not read: the files this resource adopts and the links to them, one a line).
#
# nts_boot_mask: NTS_C = the finding about a same-named file in a later directory, which ours would mask
# (systemd-sysctl and sysctl --system read only the first file of a name, /etc/sysctl.d first); 1 when there is none.
nts_boot_mask() {
  for nts_d in /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
    [ -f "$nts_d/${NTS_FILE##*/}" ] || continue
    nts_c=$(awk '/^[ \t]*[#;]/ || !/=/ { next } { k = $0; sub(/=.*/, "", k); gsub(/^[ \t-]+|[ \t]+$/, "", k); printf "%s%s", (n++ ? ", " : ""), k }' "$nts_d/${NTS_FILE##*/}")
    NTS_C="fileName ${NTS_FILE##*/}: $NTS_FILE would mask $nts_d/${NTS_FILE##*/} (systemd-sysctl and sysctl --system read only the first file of a name, /etc/sysctl.d first), so what it sets (${nts_c:-no keys}) would no longer be applied at boot"
    return 0
  done
  return 1
}

# nts_boot_conflicts MINE PREFIX [UNREAD]: every one of our keys that a file applied after ours at boot sets to another
# value, with file and line, one "PREFIX<finding>" line each; MINE (the apply: $NT_TMP/ours; empty: not written) gets
# our own sysctl.d files other than the planned one; UNREAD (the live read, which runs as the login user): one
# "UNREAD<path>" line per such file it cannot read. A wanted value "#sha256:<hex>" (the live read gets no secret value)
# is compared by the sha256 of the other file's value (a process per line that sets that key), and neither is printed.
# The files systemd-sysctl/procps read at boot, in their order: the first file of each name (/etc/sysctl.d first; /lib may be a symlink to /usr/lib), sorted by name, /etc/sysctl.conf last.
nts_boot_conflicts() {
  nts_m=$1; nts_pre=$2; nts_u=${3:-}; set --
  for nts_d in /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
    [ -d "$nts_d" ] || continue
    for nts_f in "$nts_d"/*.conf; do [ -e "$nts_f" ] && set -- "$@" "$nts_f"; done
  done
  [ -f /etc/sysctl.conf ] && set -- "$@" /etc/sysctl.conf
  NTS_WANT=$NTS_WANT NTS_SKIP=$NTS_SKIP NTS_SECRET=${NT_SECRET_KEYS:-} awk -v mine="$nts_m" -v pre="$nts_pre" -v unread="$nts_u" -v ours="${NTS_FILE##*/}" -v self="$NTS_FILE" \
    -v marker="# pulumi-net-tuning owner: $NTS_OWNER_LABEL" '
    # a CR is white space to procps and systemd-sysctl alike (a file with CRLF line ends sets the same values)
    function norm(s) { gsub(/[ \t\r]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
    function dots(k,  first) {
      # systemd-sysctl/procps: a key whose first separator is "/" is a path; swap "/" and "." to get the dotted form.
      first = match(k, /[.\/]/)
      if (first && substr(k, first, 1) == "/") { gsub(/\./, "\001", k); gsub(/\//, ".", k); gsub(/\001/, "/", k) }
      return k
    }
    # (a value with a quote in it, which no sysctl takes, counts as another value)
    function sum(v,  c, h) { if (index(v, "\047")) return "#sha256:?"; c = "printf %s \047" v "\047 | sha256sum"; h = ""; c | getline h; close(c); return "#sha256:" substr(h, 1, 64) }
    BEGIN {
      n = split(ENVIRON["NTS_WANT"], items, /[\n;]/)
      for (i = 1; i <= n; i++) if (split(items[i], a, /[\t=]/) >= 2) want[dots(a[1])] = norm(a[2])
      # the value of a secret key is never printed, that of another file no more than ours (issue #32: secrets)
      n = split(ENVIRON["NTS_SECRET"], items, "\n")
      for (i = 1; i <= n; i++) if (items[i] != "") secret[dots(items[i])] = 1
      nf = 0
      for (i = 1; i < ARGC; i++) {
        # the first file of a name; insertion sort by name (C collation; "~sysctl.conf" sorts after every other name)
        p = ARGV[i]; b = p; sub(/.*\//, "", b)
        if (p == "/etc/sysctl.conf") b = "~sysctl.conf"
        else if (b in seen) continue
        seen[b] = 1; j = ++nf
        while (j > 1 && fname[j - 1] > b) { fname[j] = fname[j - 1]; fpath[j] = fpath[j - 1]; j-- }
        fname[j] = b; fpath[j] = p
      }
      # Our own sysctl.d files other than the planned one (an earlier fileName): removed by this run, so not a conflict.
      if (mine != "") printf "" > mine
      for (fi = 1; fi <= nf; fi++) {
        p = fpath[fi]
        if (index(p, "/etc/sysctl.d/") != 1 || p == self) continue
        while ((getline l < p) > 0) if (l == marker) { gone[p] = 1; if (mine != "") print p > mine; break }
        close(p)
      }
      if (mine != "") close(mine)
      # Files this resource adopts (and links to them): removed by this run, so not a conflict.
      n = split(ENVIRON["NTS_SKIP"], items, "\n")
      for (i = 1; i <= n; i++) gone[items[i]] = 1
      for (fi = 1; fi <= nf; fi++) {
        if (fname[fi] != "~sysctl.conf" && fname[fi] <= ours) continue
        if (fpath[fi] in gone) continue
        file = fpath[fi]; n = 0
        while ((r = (getline l < file)) > 0) {
          n++
          if (l ~ /^[ \t\r]*[#;]/ || l !~ /=/) continue
          k = l; sub(/=.*/, "", k); v = l; sub(/^[^=]*=/, "", v)
          k = norm(k); sub(/^-/, "", k); k = dots(k); v = norm(v)
          for (w in want) {
            if (w == k) hit = 1
            else if (index(k, "*") && k ~ /^[A-Za-z0-9_.\/:*-]+$/) { pat = k; gsub(/\./, "\\.", pat); gsub(/\*/, ".*", pat); hit = (w ~ ("^" pat "$")) }
            else hit = 0
            if (!hit) continue
            hashed = substr(want[w], 1, 8) == "#sha256:"
            if (hashed ? sum(v) != want[w] : v != want[w]) {
              note = (fname[fi] == "~sysctl.conf") ? " (read last by sysctl --system; systemd-sysctl reads it through 99-sysctl.conf where that link exists)" : ""
              printf "%s%s = %s is overridden at boot by %s:%d which sets %s%s\n", pre, w, hashed ? "(secret)" : want[w], file, n, (hashed || w in secret) ? "another value (secret)" : v, note
            }
          }
        }
        if (r < 0 && unread != "") print unread file
        close(file)
      }
    }' "$@"
}

# The live read's checks of a NetTuning's planned file and boot order (provider/live/read.ts): the request's fields
# FILE<TAB>OWNER-LABEL<TAB>ADOPTED (";"-separated)<TAB>WANT ("key=value" items, ";"-separated; a secret value as
# "#sha256:<hex>"; empty when the resource has no boot-order check: persist false or bootOverride "ignore"), checked as
# the preflight checks them, through the same functions: the planned file's owner (nts_file_refusals, "refuse" lines),
# and with WANT:
# "boot<TAB>mask<TAB>finding" and "boot<TAB>override<TAB>finding" (the host's text without its fix: components/live.ts
# adds it, provider/host/messages.ts bootRefusal), and "boot<TAB>unreadable<TAB>path" for a file read after ours at
# boot that the login user cannot read (left to the preflight, as root). A field that is not valid: nothing. A last
# field MODULES (the kernel modules the settings need; with empty fields before it for a request without the
# boot-order check) goes to nts_live_modules first.
nts_live_boot() {
  NTS_FILE=${1%%"$NT_TAB"*}; nts_r=${1#*"$NT_TAB"}
  NTS_OWNER_LABEL=${nts_r%%"$NT_TAB"*}; nts_r=${nts_r#*"$NT_TAB"}
  nts_a=${nts_r%%"$NT_TAB"*}; nts_r=${nts_r#*"$NT_TAB"}; NTS_WANT=${nts_r%%"$NT_TAB"*}
  case $nts_r in *"$NT_TAB"*) nts_live_modules "${nts_r#*"$NT_TAB"}" ;; esac
  case "$NTS_FILE" in /etc/sysctl.d/*.conf) ;; *) return 0 ;; esac
  case "${NTS_FILE#/etc/sysctl.d/}" in *[!A-Za-z0-9._-]*|.*) return 0 ;; esac
  case "$1" in *\\*) return 0 ;; esac # (an awk -v value: no escapes; provider/live/read.ts checks every field)
  NT_OWNER=$NTS_OWNER_LABEL
  nts_file_refusals nt_live_refuse live
  NTS_ADOPTED=''
  while [ -n "$nts_a" ]; do NTS_ADOPTED=$NTS_ADOPTED${nts_a%%;*}$NT_NL; case $nts_a in *';'*) nts_a=${nts_a#*;} ;; *) nts_a='' ;; esac; done
  # adoption (nts_adopt_check, the preflight's rule): its index of earlier adoptions is in root's state directory
  if [ -n "$NTS_ADOPTED" ]; then
    NT_STATE=$NT_ROOT/sysctl NT_OWNER_ID=$ntl_id NTS_KLIST=$ntl_keys NTS_APPLIED_BEFORE=0
    # shellcheck disable=SC2154 # ntl_f, ntl_id, ntl_keys: nt_live_main's record, owner id and keys of this resource
    [ -e "$ntl_f" ] && NTS_APPLIED_BEFORE=1
    nts_adopt_dir
    if [ -r "$NTS_ADIR/index" ]; then nts_aidx=$NTS_ADIR/index
    elif [ ! -e "$NT_ROOT" ]; then nts_aidx=/dev/null # nothing was ever applied here
    elif [ -x "$NT_ROOT" ] && { [ ! -e "$NT_STATE" ] || [ -x "$NT_STATE" ]; } && [ ! -e "$NTS_ADIR/index" ]; then nts_aidx=/dev/null
    else nts_aidx='?'; fi
    nts_ifs1=$IFS; IFS=$NT_NL; set -f
    for nts_ap in $NTS_ADOPTED; do IFS=$nts_ifs1; set +f; nts_adopt_check "$nts_ap" "$nts_aidx" '' nt_live_refuse; done
    IFS=$nts_ifs1; set +f
  fi
  [ -n "$NTS_WANT" ] || return 0
  nts_boot_mask && printf 'boot\tmask\t%s\n' "$NTS_C"
  nts_adopt_links
  nts_boot_conflicts '' "boot${NT_TAB}override$NT_TAB" "boot${NT_TAB}unreadable$NT_TAB"
}

# The /proc/sys files of the desired keys, listed with the trust check's ls (nt_trust_dirs): NT_LS_MORE.
kind_ls_paths() {
  NT_LS_MORE=''
  nt_lines desired; nts_ifs0=$IFS; IFS=$NT_NL; set -f
  for nts_l in $NT_LINES; do IFS=$nts_ifs0; set +f; nt_kv "$nts_l"; nts_path "$nt_k" && NT_LS_MORE="$NT_LS_MORE $NTS_PATH"; done
  IFS=$nts_ifs0; set +f
}

kind_preflight() {
  [ -z "$NTS_CT" ] || printf '%s' "$NTS_CT" >> "$NT_TMP/content"
  [ -n "$NTS_FILE" ] || nt_die 5 "plan has no @file"
  nts_loaded=0
  for nts_m in $NTS_MODULES; do
    nts_module_present "$nts_m" && continue
    if nts_modprobe "$nts_m"; then nts_loaded=1; else nts_msg_module "$nts_m" "${NTS_OUT:-modprobe failed}"; nt_problem "$NTS_MSG"; fi
  done
  # A module loaded now brings its keys (net.netfilter.*) and values (bbr in tcp_available_congestion_control): the
  # snapshot the checks below use, taken before the preflight, is read again.
  if [ "${nts_loaded:-0}" = 1 ]; then nt_snapshot; fi
  nts_missing=''
  nts_fix=''
  nts_plist=''
  nt_lines desired; nts_ifs0=$IFS; IFS=$NT_NL; set -f
  for nts_l in $NT_LINES; do IFS=$nts_ifs0; set +f; nt_kv "$nts_l"; nts_k=$nt_k
    nts_path "$nts_k"
    if [ ! -e "$NTS_PATH" ]; then
      nts_hint "$nts_k"; nts_msg_item "$nts_k" "$NTS_HINT"
      nts_missing=${nts_missing:+$nts_missing$NTS_MSG_SEP}$NTS_ITEM
      [ "$NTS_HOSTWIDE" = 1 ] && nts_fix=$NTS_MSG_HOSTWIDE
      continue
    fi
    if [ -d "$NTS_PATH" ]; then
      nt_problem "$nts_k is a directory of settings ($NTS_PATH), not a setting: name a key inside it ($nts_k.<name>; ls $NTS_PATH lists them)"
      continue
    fi
    if [ ! -w "$NTS_PATH" ]; then
      nt_problem "$nts_k is read-only here ($NTS_PATH not writable: read-only /proc/sys, e.g. a container): set it on the host that owns this network namespace"
      continue
    fi
    nts_plist="$nts_plist $NTS_PATH"
  done; IFS=$nts_ifs0; set +f
  if [ -n "$nts_missing" ]; then
    nts_ns=''
    nts_child_netns && nts_ns=$NTS_MSG_NETNS
    nts_msg_absent "$(uname -r)" "$nts_ns" "$nts_missing" "$nts_fix"
    nt_problem "$NTS_MSG"
  fi
  if [ -n "$nts_plist" ]; then
    # Mode bits: root may write a 0444 file's inode per access(2), but the kernel refuses it (EPERM). The lines of
    # these paths come from the listing the lock's trust check made (nt_trust_dirs, kind_ls_paths); only a path it
    # did not list (a key a module loaded above brought) costs an ls here.
    nts_ro='' nts_left=''
    nts_listed=$NT_NL
    if [ -f "$NT_TMP/modes" ]; then
      while IFS= read -r nts_l; do
        case " $nts_plist " in *" ${nts_l##* } "*) nts_ro=$nts_ro$nts_l$NT_NL; nts_listed=$nts_listed${nts_l##* }$NT_NL ;; esac
      done < "$NT_TMP/modes"
    fi
    set -f
    for nts_p in $nts_plist; do case $nts_listed in *"$NT_NL$nts_p$NT_NL"*) ;; *) nts_left="$nts_left $nts_p" ;; esac; done
    set +f
    if [ -n "$nts_left" ]; then
      set -f
      # shellcheck disable=SC2086,SC2012 # paths were validated: [A-Za-z0-9._/:-] only
      nts_ro=$nts_ro$(ls -ldn -- $nts_left 2>/dev/null)
      set +f
    fi
    nts_ro=${nts_ro%"$NT_NL"}
    if [ -n "$nts_ro" ]; then printf '%s\n' "$nts_ro" > "$NT_TMP/ro"; else : > "$NT_TMP/ro"; fi
    # the world-readable ones ("r" in the others' triplet) for the converged record (nt_world_readable_list)
    : > "$NT_TMP/conv.readable"; nt_index conv.readable # kept in step (a path a line, its own key)
    nts_t='' # its lines, appended after the loop
    IFS=$NT_NL; set -f
    for nts_l in $nts_ro; do IFS=' '; set -f
      # the path: the last field (no blank in it; ${nts_l##* } costs the square of the line's length in dash)
      # shellcheck disable=SC2086 # split on spaces, globbing off
      set -- $nts_l
      IFS=$nts_ifs0; set +f; eval "nts_p=\${$#}"
      case "$nts_l" in ???????r*) nts_t=$nts_t$nts_p$NT_NL; nt_index_put conv.readable "$nts_p" '' ;; esac
      case "$nts_l" in ??w*) continue ;; esac
      nt_problem "${nts_p#/proc/sys/} is read-only on this kernel (no write permission on $nts_p): it is host-wide (set it on the host, not inside a network namespace or container) or not settable"
    done; IFS=$nts_ifs0; set +f
    printf '%s' "$nts_t" >> "$NT_TMP/conv.readable"
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
            *) nts_msg_cc_allowed "$nts_cc" "$nts_allowed"; nt_problem "$NTS_MSG" ;;
          esac
        fi ;;
      *) nts_cc_modules; nts_msg_cc "$nts_cc" "$nts_avail" "${NTS_CC_MODS:-none}"; nt_problem "$NTS_MSG" ;;
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
      [ -f "$nts_j" ] && nt_lookup "$nts_j" net.core.rps_sock_flow_entries && nt_owner_of "$nts_j" &&
        nt_problem "net.core.rps_sock_flow_entries is already managed by $NT_OWNER_OF on this host (NicQueues rps.sockFlowEntries, journal $nts_j): set it in one resource only"
    done
  fi
  nts_file_refusals nt_problem
  if [ ! -f "$NT_JOURNAL" ] && nts_is_ours "$NTS_FILE"; then
    nt_problem "$NTS_FILE was written by this resource but its journal of original values ($NT_JOURNAL) is missing: refusing to record tuned values as originals. Delete the resource (pulumi destroy --target restores the originals from Pulumi state), then create it again"
  fi
  nts_adopt_preflight # before the boot-order check, which skips the adopted files (NTS_SKIP)
  if [ "$NTS_PERSIST" = 1 ] && [ "$NTS_BOOT" != ignore ]; then
    # (the live read runs the same check at preview: nts_live_boot; the fixes are provider/host/messages.ts's)
    if nts_boot_mask; then
      if [ "$NTS_BOOT" = error ]; then nts_msg_boot_mask "$NTS_C"; nt_problem "$NTS_MSG"; else nt_warn "$NTS_C"; fi
    fi
    nt_lines desired; NTS_WANT=$NT_LINES; NTS_OWNER_LABEL=$NT_OWNER
    nts_boot_conflicts "$NT_TMP/ours" '' > "$NT_TMP/conflicts" # also lists our other sysctl.d files in $NT_TMP/ours
    while IFS= read -r nts_c; do
      if [ "$NTS_BOOT" = error ]; then nts_msg_boot "$nts_c"; nt_problem "$NTS_MSG"; else nt_warn "$nts_c"; fi
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
    # a file with a secret value is root's only (issue #32)
    if [ -n "$NT_SECRET_KEYS" ]; then nt_stage_file "$NTS_FILE" "$NT_TMP/content" 0600; else nt_stage_file "$NTS_FILE" "$NT_TMP/content" 0644; fi
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
  nts_adopt_stage
  return 0
}

kind_after_commit() { return 0; }

# An artefact of an earlier run that this run no longer declares (renamed fileName, persist turned off, modules gone).
kind_drop_artefact() {
  nts_is_ours "$1" && nt_stage_remove "$1"
  # A file the journal lists as this resource's whose owner line was removed by hand: kept (it may hold the user's
  # edits), but never in silence: it would set the tuned values again at the next boot (issue #32).
  if [ "$NT_PHASE" = restore ] && [ -f "$1" ] && ! nts_is_ours "$1"; then
    case $1 in /etc/sysctl.d/*.conf)
      nt_die 1 "$1 was written by this resource (its journal lists it) but its line '# pulumi-net-tuning owner: $NT_OWNER' was removed by hand, so it is kept, and it would set its values again at the next boot: delete the file, or put that line back, then run the delete again" ;;
    esac
  fi
  return 0
}

# The report reuses the values read back right after the apply (no second read per key).
kind_report_value() {
  nt_lookup "$NT_TMP/got" "$1" || return 1
  NT_GOT=$NT_FOUND
}

kind_report() {
  nts_adopt_report
}

kind_restore_files() {
  [ -n "$NTS_FILE" ] && nts_is_ours "$NTS_FILE" && nt_stage_remove "$NTS_FILE"
  nts_our_files
  while IFS= read -r nts_f; do nt_stage_remove "$nts_f"; done < "$NT_TMP/ours"
  nts_mods=/etc/modules-load.d/pulumi-net-tuning-$NT_OWNER_ID.conf
  nts_is_ours "$nts_mods" && nt_stage_remove "$nts_mods"
  return 0
}

# ---------------------------------------------------------------------------------------- adoption (issue #16)
# @adopt PATH (apply) names a hand-written sysctl file this resource takes over. Its copy lives next to the journal,
# in $NT_STATE/<owner id>.adopted/: N = the exact bytes, index = "path<TAB>how<TAB>mode<TAB>uid:gid<TAB>mtime<TAB>size<TAB>N"
# (how: file = removed, lines = /etc/sysctl.conf with the lines setting declared keys commented out by the marker).
# The restore plan carries the same records (@adopted, then the bytes as @adopted-data base64 or, where the host has
# gzip, @adopted-gzip base64 of them gzip'd) for files up to 4 KiB.
NTS_AMARK='#pulumi-net-tuning-adopted# ' # provider/sysctl/adopt.ts ADOPT_MARKER
NTS_AMAX=4096 # provider/sysctl/adopt.ts ADOPT_STATE_MAX

nts_adopt_path_ok() { # PATH: a sysctl file procps/systemd-sysctl read (validated again on the host)
  [ "$1" = /etc/sysctl.conf ] && return 0
  case "${1%/*}" in /etc/sysctl.d|/run/sysctl.d|/usr/local/lib/sysctl.d|/usr/lib/sysctl.d|/lib/sysctl.d) ;; *) return 1 ;; esac
  case "${1##*/}" in .*|*[!A-Za-z0-9._-]*) return 1 ;; *.conf) return 0 ;; esac
  return 1
}

nts_adopt_directive() { # NAME VALUE: @adopt, @adopted, @adopted-data, @adopted-gzip
  case "$1" in
    adopt)
      nts_adopt_path_ok "$2" || nt_die 5 "invalid adopted file '$2'"
      printf '%s\n' "$2" >> "$NT_TMP/adopt" ;;
    adopted)
      nts_ai=$(( ${nts_ai:-0} + 1 ))
      nts_ap=${2%%"$NT_TAB"*}
      nts_adopt_path_ok "$nts_ap" || nt_die 5 "invalid adopted file '$nts_ap'"
      case "$2" in *[!A-Za-z0-9._/:"$NT_TAB"-]*) nt_die 5 "invalid @adopted line for $nts_ap" ;; esac
      printf '%s\t%s\n' "$2" "$nts_ai" >> "$NT_TMP/adopt.state"
      : > "$NT_TMP/adopt.state.$nts_ai" ;;
    adopted-data|adopted-gzip)
      [ -n "${nts_ai:-}" ] || nt_die 5 "@$1 before @adopted"
      case "$2" in *[!A-Za-z0-9+/=]*) nt_die 5 "invalid @$1 line" ;; esac
      [ "$1" = adopted-data ] || : > "$NT_TMP/adopt.state.$nts_ai.gz"
      printf '%s\n' "$2" >> "$NT_TMP/adopt.state.$nts_ai" ;;
    *) return 1 ;;
  esac
  return 0
}

# Settings of a sysctl file: "line<TAB>declared|undeclared<TAB>key<TAB>value" (keys in KEYS's first column are declared).
nts_adopt_settings() { # FILE KEYS [KLIST]: KEYS a file of "key<TAB>value" lines, or KLIST the keys, space-separated
  awk -v tab="$NT_TAB" -v keys="$2" -v klist="${3:-}" '
    # a CR is white space to procps and systemd-sysctl alike (a file with CRLF line ends sets the same values)
    function norm(s) { gsub(/[ \t\r]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
    function dots(k,  first) {
      first = match(k, /[.\/]/)
      if (first && substr(k, first, 1) == "/") { gsub(/\./, "\001", k); gsub(/\//, ".", k); gsub(/\001/, "/", k) }
      return k
    }
    BEGIN {
      if (klist != "") { n = split(klist, a, " "); for (i = 1; i <= n; i++) want[dots(a[i])] = 1 }
      else while ((getline l < keys) > 0) { split(l, a, tab); want[dots(a[1])] = 1 }
    }
    /^[ \t]*[#;]/ || !/=/ { next }
    {
      k = $0; sub(/=.*/, "", k); v = $0; sub(/^[^=]*=/, "", v)
      k = norm(k); sub(/^-/, "", k); k = dots(k); v = norm(v)
      print NR tab ((k in want) ? "declared" : "undeclared") tab k tab v
    }' "$1"
}

nts_adopt_dir() { NTS_ADIR=$NT_STATE/$NT_OWNER_ID.adopted; }

# Preflight: what this run adopts ($NT_TMP/adopt.todo "path<TAB>how"), the paths the boot-order check skips
# (NTS_SKIP, nts_adopt_links), and a problem for every key an adopted file sets that this resource does not declare.
nts_adopt_preflight() {
  : > "$NT_TMP/adopt.todo"; NTS_SKIP=''
  [ -s "$NT_TMP/adopt" ] || return 0
  NTS_ADOPTED=''
  while IFS= read -r nts_p; do NTS_ADOPTED=$NTS_ADOPTED$nts_p$NT_NL; done < "$NT_TMP/adopt"
  nts_adopt_dir
  nts_aidx=$NTS_ADIR/index
  [ -f "$nts_aidx" ] || nts_aidx=/dev/null
  NTS_KLIST=''
  while IFS= read -r nts_ap; do
    nts_adopt_check "$nts_ap" "$nts_aidx" "$NT_TMP/desired" nt_problem
    [ -z "$NTS_ADOPT_HOW" ] || printf '%s\t%s\n' "$nts_ap" "$NTS_ADOPT_HOW" >> "$NT_TMP/adopt.todo" || nt_tmp_full
  done < "$NT_TMP/adopt"
  nts_adopt_links
  return 0
}

# nts_adopt_check PATH INDEX KEYS CALLBACK: the preflight's checks of one adopted file (one rule for the apply's
# preflight and the live read), each problem through CALLBACK (nt_problem; the read: nt_live_refuse). NTS_ADOPT_HOW =
# "file", "lines" (/etc/sysctl.conf: its lines that set declared keys) or empty (nothing to adopt, or refused).
# INDEX: this owner's index of earlier adoptions, /dev/null when there is none, "?" when this user cannot tell (a
# read without root: the state directory is root's): then a missing file of a resource applied before
# (NTS_APPLIED_BEFORE=1) and a file this user cannot read are left to `up`. KEYS: a file of the declared
# "key<TAB>value" lines, or empty with NTS_KLIST the declared keys.
nts_adopt_check() {
  NTS_ADOPT_HOW='' nts_p=$1 nts_cb=$4
  if [ -L "$nts_p" ]; then
    "$nts_cb" "adopt: $nts_p is a symbolic link (to $(readlink "$nts_p" 2>/dev/null)): adopt the file it points to instead"; return 0
  fi
  if [ "$2" != '?' ] && nt_lookup "$2" "$nts_p"; then
    # Adopted by an earlier run: the file must not have come back (its first original is the one kept).
    if [ "$nts_p" = /etc/sysctl.conf ]; then
      nts_set=$(nts_adopt_settings "$nts_p" "$3" "$NTS_KLIST" 2>/dev/null)
      nts_ifs=$IFS; IFS=$NT_NL; set -f
      for nts_l in $nts_set; do IFS=$NT_TAB
        # shellcheck disable=SC2086 # the fields: line, declared|undeclared, key, value (the rest)
        set -- $nts_l
        IFS=$nts_ifs; set +f
        [ "$2" = declared ] && "$nts_cb" "adopt: $nts_p:$1 sets $3 = ${nts_l#*"$NT_TAB"*"$NT_TAB"*"$NT_TAB"} again after this resource adopted that file's lines: remove that line (the adopted original is kept in $NTS_ADIR)"
      done; IFS=$nts_ifs; set +f
    elif [ -e "$nts_p" ]; then
      "$nts_cb" "adopt: $nts_p was adopted by this resource earlier and exists again: move it away (the adopted original is kept in $NTS_ADIR and comes back on delete)"
    fi
    return 0
  fi
  if [ ! -e "$nts_p" ]; then
    [ "$nts_p" = /etc/sysctl.conf ] && return 0
    [ "$2" = '?' ] && [ "${NTS_APPLIED_BEFORE:-0}" = 1 ] && return 0
    "$nts_cb" "adopt: $nts_p does not exist on $NT_HOSTNAME: nothing to adopt; remove it from adopt"; return 0
  fi
  if [ "$2" = '?' ] && [ -f "$nts_p" ] && [ ! -r "$nts_p" ]; then return 0; fi
  if [ ! -f "$nts_p" ] || [ ! -r "$nts_p" ]; then "$nts_cb" "adopt: $nts_p is not a readable regular file"; return 0; fi
  nts_set=$(nts_adopt_settings "$nts_p" "$3" "$NTS_KLIST") || { "$nts_cb" "adopt: cannot read $nts_p"; return 0; }
  nts_decl=0; nts_undecl=0
  nts_ifs=$IFS; IFS=$NT_NL; set -f
  for nts_l in $nts_set; do IFS=$NT_TAB
    # shellcheck disable=SC2086 # the fields: line, declared|undeclared, key, value (the rest)
    set -- $nts_l
    IFS=$nts_ifs; set +f
    nts_v=${nts_l#*"$NT_TAB"*"$NT_TAB"*"$NT_TAB"}; [ $# -ge 4 ] || nts_v=''
    if [ "$2" = declared ]; then nts_decl=$((nts_decl + 1)); continue; fi
    [ "$nts_p" = /etc/sysctl.conf ] && continue # only its lines that set declared keys are adopted
    nts_undecl=$((nts_undecl + 1))
    case "$3" in
      *'*'*) "$nts_cb" "adopt: $nts_p:$1 sets the glob $3 = $nts_v, which a resource cannot declare: move that line to another file" ;;
      *)
        case "$nts_v" in ''|*[!0-9]*) nts_paste="\"$3\": \"$nts_v\"," ;; *) nts_paste="\"$3\": $nts_v," ;; esac
        "$nts_cb" "adopt: $nts_p:$1 sets $3 = $nts_v, which this resource does not declare (adopting the file would drop it at the next boot): add to sysctls:  $nts_paste" ;;
    esac
  done; IFS=$nts_ifs; set +f
  [ "$nts_p" = /etc/sysctl.conf ] && [ "$nts_decl" = 0 ] && return 0 # no line of it sets a declared key
  [ "$nts_undecl" = 0 ] || return 0
  if [ "$nts_p" = /etc/sysctl.conf ]; then NTS_ADOPT_HOW='lines'; else NTS_ADOPT_HOW='file'; fi
}

# NTS_SKIP = the adopted files (NTS_ADOPTED, one a line) and every link in a boot directory to one of them (Debian/RHEL:
# /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf is read through that file): what the boot-order check does not read.
# Shared by the preflight and the live read (nts_live_boot).
nts_adopt_links() {
  NTS_SKIP=$NTS_ADOPTED
  [ -n "$NTS_ADOPTED" ] || return 0
  for nts_d in /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
    for nts_f in "$nts_d"/*.conf; do
      [ -L "$nts_f" ] || continue
      nts_t=$(readlink -f "$nts_f" 2>/dev/null) || continue
      case "$NT_NL$NTS_ADOPTED" in *"$NT_NL$nts_t$NT_NL"*) NTS_SKIP=$NTS_SKIP$nts_f$NT_NL ;; esac
    done
  done
  return 0
}

# Apply (kind_files): each file to adopt is staged as a copy in $NTS_ADIR (before anything else), then the new index,
# then its removal (sysctl.conf: its edited version). The file commit undoes all of it if the run fails.
nts_adopt_stage() {
  [ -s "$NT_TMP/adopt.todo" ] || return 0
  nts_adopt_dir
  [ -d "$NTS_ADIR" ] || { umask 077; mkdir -p "$NTS_ADIR"; nts_rc=$?; umask 022; [ "$nts_rc" = 0 ]; } || nt_die 1 "cannot create $NTS_ADIR on $NT_HOSTNAME"
  : > "$NT_TMP/adopt.index"
  nts_n=0
  if [ -f "$NTS_ADIR/index" ]; then
    while IFS= read -r nts_l; do printf '%s\n' "$nts_l"; nts_n=$((nts_n + 1)); done < "$NTS_ADIR/index" > "$NT_TMP/adopt.index"
  fi
  while IFS="$NT_TAB" read -r nts_p nts_how; do
    nts_n=$((nts_n + 1))
    nts_meta=$(stat -c '%a %u:%g %Y %s' "$nts_p") || nt_die 1 "cannot stat $nts_p on $NT_HOSTNAME"
    # nanoseconds where stat can print them (coreutils 8.26+), else whole seconds
    nts_ns=$(stat -c '%.9Y' "$nts_p" 2>/dev/null) || nts_ns=''
    set -f
    # shellcheck disable=SC2086 # four fields
    set -- $nts_meta
    set +f
    nts_mt=$3
    case "$nts_ns" in *[!0-9.]*|'') ;; *) nts_mt=$nts_ns ;; esac
    cat "$nts_p" > "$NT_TMP/adopt.copy.$nts_n" || nt_die 1 "cannot copy $nts_p to $NT_TMP on $NT_HOSTNAME (/tmp full?)"
    nt_stage_file "$NTS_ADIR/$nts_n" "$NT_TMP/adopt.copy.$nts_n" 0600
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$nts_p" "$nts_how" "$1" "$2" "$nts_mt" "$4" "$nts_n" >> "$NT_TMP/adopt.index"
  done < "$NT_TMP/adopt.todo"
  nt_stage_file "$NTS_ADIR/index" "$NT_TMP/adopt.index" 0600
  while IFS="$NT_TAB" read -r nts_p nts_how; do
    if [ "$nts_how" = file ]; then nt_stage_remove "$nts_p"; continue; fi
    nts_adopt_settings "$nts_p" "$NT_TMP/desired" > "$NT_TMP/adopt.set"
    awk -v tab="$NT_TAB" -v set="$NT_TMP/adopt.set" -v mark="$NTS_AMARK" '
      BEGIN { while ((getline l < set) > 0) { split(l, a, tab); if (a[2] == "declared") hit[a[1]] = 1 } }
      { if (NR in hit) printf "%s%s\n", mark, $0; else print }' "$nts_p" > "$NT_TMP/adopt.edit" || nt_die 1 "cannot prepare the edited $nts_p in $NT_TMP"
    nts_m=$(stat -c %a "$nts_p")
    nt_stage_file "$nts_p" "$NT_TMP/adopt.edit" "$nts_m"
  done < "$NT_TMP/adopt.todo"
  return 0
}

# Report: one "adopted.N" line per adopted file (every run: the restore plan is rendered from the latest report),
# with the content base64 when it is at most 4 KiB and base64 exists; else "-" and a warning.
nts_adopt_report() {
  nts_adopt_dir
  [ -f "$NTS_ADIR/index" ] || return 0
  nts_i=0
  while IFS="$NT_TAB" read -r nts_p nts_how nts_m nts_o nts_mt nts_sz nts_n; do
    nts_i=$((nts_i + 1))
    nts_b=-
    if [ "$nts_sz" -le "$NTS_AMAX" ] 2>/dev/null && command -v base64 >/dev/null 2>&1; then
      nts_b=$(base64 < "$NTS_ADIR/$nts_n" | tr -d '\n') || nts_b=-
    fi
    if [ "$nts_b" = - ]; then
      printf 'warning\t%s\n' "adopted $nts_p ($nts_sz bytes) is kept only in the host's journal ($NTS_ADIR/$nts_n), not in Pulumi state (larger than $NTS_AMAX bytes, or no base64 on the host): its rollback depends on this host keeping /var/lib/pulumi-net-tuning"
    fi
    printf 'adopted.%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$nts_i" "$nts_p" "$nts_how" "$nts_m" "$nts_o" "$nts_mt" "$nts_sz" "$nts_b"
  done < "$NTS_ADIR/index"
}

# Restore (after our files are removed): every adopted file back byte for byte (content, mode, owner, mtime), from the
# journal's copy, else from Pulumi state; then its values applied again (restoreOnDelete), each read back.
nts_adopt_restore() {
  nts_adopt_dir
  if [ -f "$NTS_ADIR/index" ]; then
    while IFS="$NT_TAB" read -r nts_p nts_how nts_m nts_o nts_mt nts_sz nts_n; do
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$nts_p" "$nts_how" "$nts_m" "$nts_o" "$nts_mt" "$nts_sz" "$NTS_ADIR/$nts_n"
    done < "$NTS_ADIR/index" > "$NT_TMP/adopt.put"
  elif [ -s "$NT_TMP/adopt.state" ]; then
    : > "$NT_TMP/adopt.put"
    while IFS="$NT_TAB" read -r nts_p nts_how nts_m nts_o nts_mt nts_sz nts_n; do
      if [ ! -s "$NT_TMP/adopt.state.$nts_n" ] && [ "$nts_sz" != 0 ]; then
        nt_warn "cannot put back the adopted $nts_p on $NT_HOSTNAME: its copy was kept only in the host's journal, which is gone"; continue
      fi
      { if [ -f "$NT_TMP/adopt.state.$nts_n.gz" ]; then
          base64 -d < "$NT_TMP/adopt.state.$nts_n" > "$NT_TMP/adopt.gz.$nts_n" && gzip -dc < "$NT_TMP/adopt.gz.$nts_n" > "$NT_TMP/adopt.dec.$nts_n"
        else
          base64 -d < "$NT_TMP/adopt.state.$nts_n" > "$NT_TMP/adopt.dec.$nts_n"
        fi 2>/dev/null && [ "$(wc -c < "$NT_TMP/adopt.dec.$nts_n")" -eq "$nts_sz" ]; } ||
        nt_die 1 "cannot decode the adopted $nts_p from Pulumi state on $NT_HOSTNAME (damaged, or base64/gzip missing); nothing of it was put back: run the delete again"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$nts_p" "$nts_how" "$nts_m" "$nts_o" "$nts_mt" "$nts_sz" "$NT_TMP/adopt.dec.$nts_n" >> "$NT_TMP/adopt.put"
    done < "$NT_TMP/adopt.state"
  else
    return 0
  fi
  : > "$NT_TMP/adopt.keys"
  while IFS="$NT_TAB" read -r nts_k _; do printf '%s\t-\n' "$nts_k" >> "$NT_TMP/adopt.keys"; done < "$NT_TMP/origs"
  while IFS="$NT_TAB" read -r nts_p nts_how nts_m nts_o nts_mt nts_sz nts_src; do
    if [ "$nts_how" = file ] && { [ -e "$nts_p" ] || [ -L "$nts_p" ]; } && ! cmp -s "$nts_src" "$nts_p"; then
      nt_die 1 "cannot put back the adopted $nts_p on $NT_HOSTNAME: a file of that name exists again with other content: move it away, then run the delete again"
    fi
    if [ "$nts_how" = lines ] && [ -f "$nts_p" ]; then
      # Our edit still in place: the original goes back exactly. Edited since: only our marker is taken out again.
      sed "s/^$NTS_AMARK//" "$nts_p" > "$NT_TMP/adopt.unmark" || nt_die 1 "cannot read $nts_p on $NT_HOSTNAME"
      if ! cmp -s "$NT_TMP/adopt.unmark" "$nts_src"; then
        nt_warn "$nts_p was edited after this resource adopted its lines: only the lines it commented out were given back (marker removed), the rest is as you left it"
        nts_src=$NT_TMP/adopt.unmark; nts_mt=''
      fi
    fi
    nts_t="${nts_p%/*}/.${nts_p##*/}.net-tuning-adopt"
    rm -f "$nts_t" 2>/dev/null
    if cat "$nts_src" > "$nts_t" && chmod "$nts_m" "$nts_t" && chown "$nts_o" "$nts_t" &&
      { [ -z "$nts_mt" ] || touch -c -d "@$nts_mt" "$nts_t" 2>/dev/null || touch -c -d "@${nts_mt%.*}" "$nts_t"; } && mv -f "$nts_t" "$nts_p"; then :; else
      rm -f "$nts_t" 2>/dev/null
      nt_die 1 "cannot put back the adopted $nts_p on $NT_HOSTNAME (its copy stays in $NTS_ADIR): run the delete again"
    fi
    nt_step "adopted $nts_p put back"
    [ "${NT_RESTORE:-1}" = 1 ] || continue
    # Its values again: the lines that set keys this resource held (every line of an adopted file; of sysctl.conf the adopted ones).
    nts_adopt_settings "$nts_p" "$NT_TMP/adopt.keys" > "$NT_TMP/adopt.set"
    while IFS="$NT_TAB" read -r _ nts_d nts_k nts_v; do
      [ "$nts_d" = declared ] || continue
      case "$nts_v" in ''|*[!A-Za-z0-9\ ._:,+-]*) nt_warn "$nts_p sets $nts_k to a value this program does not write ('$nts_v'): run sysctl -p $nts_p"; continue ;; esac
      if kind_set "$nts_k" "$nts_v" && kind_expect "$nts_k" "$nts_v" && kind_get "$nts_k" && nt_same "$NT_EXPECT" "$NT_GOT"; then :; else
        nt_warn "$nts_k = $nts_v from the adopted $nts_p did not take on $NT_HOSTNAME (reads '$NT_GOT'): run sysctl -p $nts_p"
      fi
    done < "$NT_TMP/adopt.set"
  done < "$NT_TMP/adopt.put"
  # The journal's copies go with the journal.
  if [ -d "$NTS_ADIR" ]; then
    rm -rf "$NTS_ADIR" 2>/dev/null
    [ -e "$NTS_ADIR" ] && nt_warn "cannot remove $NTS_ADIR on $NT_HOSTNAME: remove it by hand"
  fi
  return 0
}

kind_after_restore() {
  nts_adopt_restore
}
