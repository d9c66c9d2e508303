# pulumi-net-tuning host runtime (POSIX sh). Shared by every resource kind.
# The kind program defines: kind_directive NAME VALUE, kind_content LINE, kind_preflight,
# kind_get KEY (sets NT_GOT), kind_set KEY VALUE (sets NT_ERR on failure), kind_expect KEY VALUE (sets NT_EXPECT),
# kind_files (stages files with nt_stage_file / nt_stage_remove), kind_after_commit, kind_restore_files.
# Optional: kind_rollback (after a rollback), kind_report (extra report lines), kind_after_restore (after a restore's commit).
# Nothing read from stdin is ever evaluated: values are only written to files and /proc or /sys.
# shellcheck disable=SC2317 # functions are called indirectly (hooks, traps)
set -u
umask 022
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH
LC_ALL=C
export LC_ALL

# a literal tab (no subshell)
NT_TAB='	'
NT_NL='
'
NT_ROOT=/var/lib/pulumi-net-tuning
NT_KIND=''
NT_OWNER=''
NT_OWNER_ID=''
NT_TMP=''
NT_LOCKED=0
NT_PHASE=init
NT_PROBLEMS=0
NT_GOT=''
NT_ERR=''
NT_EXPECT=''
# Shell builtins wherever a value can be read without a process (a 40-key apply costs a handful of processes).
NT_HOSTNAME=''
{ IFS= read -r NT_HOSTNAME < /proc/sys/kernel/hostname; } 2>/dev/null
[ -n "$NT_HOSTNAME" ] || NT_HOSTNAME=$(uname -n 2>/dev/null || echo host)
# create: a new generation of this resource takes the machine over (a first apply, or a replace after a move);
# update: the journal's generation is kept. Unset = update (bootstraps older than the generation token).
case "${NT_APPLY_MODE:-update}" in create) NT_APPLY_MODE=create ;; *) NT_APPLY_MODE=update ;; esac
NT_GEN=''
# the journal header's generation field(s) an apply writes: NT_GEN, or "pending:NT_GEN<TAB>committed" (journal v2)
NT_JHEAD=''
NT_RESTORE_GEN=''
NT_J_FORMAT=none
NT_J_GEN=''
NT_JOURNAL_TOUCHED=0
NT_UNDO_FAILED=''
# the confirm of an apply (operation "confirm": its token), and the lock's wait in half-seconds
NT_CONFIRMING=''
NT_LOCK_WAIT=120
# The run's deadline (issue #32, a host that stalls): seconds a run may hold the lock (plus its verify gate's soak)
# before its watchdog stops it (nt_watchdog_start), and the grace its rollback then gets before it is killed.
# docs/operations.md, "A host that stalls", gives both; NT_WD the watchdog's pid while it runs.
NT_DEADLINE=300
NT_DEADLINE_GRACE=60
NT_WD=''

nt_msg() { nt_redact "$*"; printf 'net-tuning: %s\n' "$NT_RED" >&2 2>/dev/null; }

# Secret values (issue #32): the plan's "@secret KEY" lines name keys whose values are secret (the catalogue's secret
# keys, or values given as Pulumi secrets). NT_SECRET_VALUES holds their values (desired and found on the host), one a
# line; nt_redact TEXT sets NT_RED = TEXT with every occurrence of one replaced by (secret) (of a value shorter than 8
# characters only the quoted 'VALUE', as messages quote values). Every message, problem and warning goes through it.
NT_SECRET_KEYS=''
NT_SECRET_VALUES=''
nt_redact() {
  NT_RED=$1
  [ -n "$NT_SECRET_VALUES" ] || return 0
  ntr_ifs=$IFS; IFS=$NT_NL; set -f
  for ntr_v in $NT_SECRET_VALUES; do
    # a value of 8 characters or more wherever it appears; a shorter one only quoted (a "1" is not redacted from a count)
    [ "${#ntr_v}" -ge 8 ] || ntr_v="'$ntr_v'"
    while :; do
      case $NT_RED in *"$ntr_v"*) NT_RED="${NT_RED%%"$ntr_v"*}(secret)${NT_RED#*"$ntr_v"}" ;; *) break ;; esac
    done
  done
  IFS=$ntr_ifs; set +f
}
nt_secret() { case "$NT_NL$NT_SECRET_KEYS" in *"$NT_NL$1$NT_NL"*) return 0 ;; esac; return 1; } # KEY
nt_secret_value() { [ -z "$1" ] || NT_SECRET_VALUES=$NT_SECRET_VALUES$1$NT_NL; } # VALUE (as printed: any form)
# The values of the secret keys this run knows: desired, found on the host (raw and whitespace-folded), journalled.
nt_secret_collect() {
  [ -n "$NT_SECRET_KEYS" ] || return 0
  ntr_ifs=$IFS; IFS=$NT_NL; set -f
  for ntr_k in $NT_SECRET_KEYS; do IFS=$ntr_ifs; set +f
    for ntr_f in desired live j.keys; do
      [ -f "$NT_TMP/$ntr_f" ] && nt_get "$ntr_f" "$ntr_k" && { nt_secret_value "$NT_FOUND"; nt_norm "$NT_FOUND"; nt_secret_value "$NT_NORM"; }
    done
  done; IFS=$ntr_ifs; set +f
  return 0
}

# $1: the bootstrap's private directory holding this program and its stdin, removed at exit.
NT_INPUT_DIR=${1:-}
# $2 (restore with become "sudo"): the SSH user's staging directory ($HOME/.cache/pulumi-net-tuning, expanded before
# sudo), where this owner's staged engine copies are removed after a restore. Nothing else is accepted.
case ${2:-} in /*/.cache/pulumi-net-tuning) NT_STAGE_HOME=$2 ;; *) NT_STAGE_HOME='' ;; esac
# $3 (restore): the token of the engine delivery the resource used (provider/host/programs.ts DELIVERY_TOKEN): its
# staged file engine.<token>.sh goes when the last journal on the host goes.
case ${3:-} in [A-Za-z0-9]*) case $3 in *[!A-Za-z0-9._-]*) NT_TOKEN='' ;; *) NT_TOKEN=$3 ;; esac ;; *) NT_TOKEN='' ;; esac

nt_cleanup() {
  # the watchdog (nt_watchdog_start): stopped first, so it never acts on a run that is ending
  if [ -n "${NT_WD-}" ]; then kill "$NT_WD" 2>/dev/null; NT_WD=''; fi
  # The flock lock is released by the kernel when fd 9 is closed (also when this process dies).
  if [ "$NT_LOCKED" = 1 ]; then nt_mark unlocked; exec 9>&-; NT_LOCKED=0; fi
  [ -z "${NT_SOAKMARK-}${NT_SLEEP-}" ] || nt_gate_cleanup
  set --
  if [ -n "$NT_TMP" ]; then set -- "$NT_TMP"; fi
  case "$NT_INPUT_DIR" in /tmp/net-tuning-in.*) [ "$NT_INPUT_DIR" = "$NT_TMP" ] || set -- "$@" "$NT_INPUT_DIR" ;; esac
  [ $# = 0 ] || rm -rf "$@"
  NT_TMP=''; NT_INPUT_DIR=
}

# What a failed apply did to the host, appended to its message: everything undone, or exactly what could not be.
nt_outcome() {
  if [ -z "$NT_UNDO_FAILED" ]; then
    NT_OUTCOME='every change of this run was rolled back'
  else
    NT_OUTCOME="ROLLBACK INCOMPLETE on $NT_HOSTNAME: could not undo:${NT_UNDO_FAILED%;}. Everything else of this run was rolled back; the journal $NT_JOURNAL keeps the first originals: fix the cause, then run pulumi up (or destroy) again"
  fi
}

# nt_die CODE MESSAGE: rolls back when a change is in progress (the message then says what the rollback achieved, and
# NT_FIX, when set, what to do), then exits.
nt_die() {
  nt_code=$1; shift
  if [ "$NT_PHASE" = apply ]; then
    nt_rollback
    nt_outcome
    nt_msg "$*; $NT_OUTCOME${NT_FIX:+. Fix: $NT_FIX}"
  elif [ "$NT_PHASE" = restore ]; then
    nt_msg "$*; $(nt_restored_so_far)"
  else
    nt_msg "$*"
  fi
  nt_exit "$nt_code"
}

# nt_exit CODE [STATUS]: cleans up and exits CODE; inside a rollout, a failure that left the host as it was exits 0 and
# reports STATUS instead (by default the code's: 1 and 4 failed, 2 refused, 7 unconfirmed; nt_tolerate).
nt_exit() {
  nt_s=${2:-}
  [ -n "$nt_s" ] || case $1 in 1 | 4) nt_s=failed ;; 2) nt_s=refused ;; 7) nt_s=unconfirmed ;; esac
  nt_code=$1
  if [ -n "$nt_s" ] && nt_tolerate "$nt_s"; then nt_code=0; fi
  nt_cleanup
  exit "$nt_code"
}

# ---------------------------------------------------------------------------------------- rollout (issue #34)
# Plan line "@on-failure report" (components/rollout.ts: a resource inside a rollout): a run that failed but left the
# host exactly as it was before it (a preflight refusal, a complete rollback, a failed verify gate, a held plan) exits
# 0 and prints the report of this resource's last commit (kept in $NT_STATE/<owner id>.last, 0600, by nt_last_write)
# followed by "status<TAB>failed|refused|rolledBack|unconfirmed". Its message still goes to stderr. So Pulumi records
# a result and goes on (the rollout's budget check counts it), and the -restore child's originals are computed from
# the same report as before (nothing lost). Not tolerated (the run fails as outside a rollout): a rollback that could
# not undo everything, a confirm, an update with no kept report (none was written since the resource joined a
# rollout), a create that finds a journal but no kept report. A create with nothing on the host reports an empty
# report and leaves the marker <owner id>.failed, which the live read reports, so the next `up` runs it again (an
# update finds its record's plan differs from the declared one).
nt_tolerate() { # STATUS
  [ "${NT_ON_FAILURE:-}" = report ] && [ -z "${NT_UNDO_FAILED:-}" ] && [ -z "$NT_CONFIRMING" ] || return 1
  case ${NT_PHASE:-} in restore* | revert) return 1 ;; esac
  [ -n "${NT_STATE:-}" ] && [ -n "${NT_OWNER_ID:-}" ] || return 1
  ntt_f=$NT_STATE/$NT_OWNER_ID.last ntt_r=''
  if [ -f "$ntt_f" ]; then
    ntt_first='' ntt_last=''
    while IFS= read -r ntt_l; do [ -n "$ntt_first" ] || ntt_first=$ntt_l; ntt_last=$ntt_l; ntt_r=$ntt_r$ntt_l$NT_NL; done < "$ntt_f" || return 1
    # (a kept report cut short is not printed: the run fails as outside a rollout)
    [ "$ntt_first" = 'net-tuning-report v1' ] && [ "$ntt_last" = end ] || return 1
  elif [ "${NT_APPLY_MODE:-}" = create ] && [ ! -e "$NT_JOURNAL" ] && [ -d "$NT_STATE" ]; then
    { : > "$NT_STATE/$NT_OWNER_ID.failed"; } 2>/dev/null || return 1
    ntt_r="net-tuning-report v1${NT_NL}end$NT_NL"
  else
    return 1
  fi
  printf '%sstatus\t%s\n' "$ntt_r" "$1" 2>/dev/null
  return 0
}
# After a commit in a rollout: the report nt_tolerate prints when a later run fails (without its warnings, gate and
# confirm lines, which belong to this run; with the plan's values for a report that leaves out those read back as
# planned: "plan-value" lines, so the component completes it without this run's plan).
nt_last_write() {
  { while IFS= read -r nt_l; do
      case $nt_l in end) break ;; warning"$NT_TAB"* | verify"$NT_TAB"* | confirm"$NT_TAB"*) continue ;; esac
      printf '%s\n' "$nt_l"
    done < "$NT_TMP/report"
    if [ "${NT_REPORT_SAME:-}" = omit ]; then
      nt_lines desired; nt_ifs=$IFS; IFS=$NT_NL; set -f
      for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"; printf 'plan-value\t%s\t%s\n' "$nt_k" "$nt_v"; done
      IFS=$nt_ifs; set +f
    fi
    printf 'end\n'
  } > "$NT_TMP/last" || nt_tmp_full
  nt_write_atomic "$NT_STATE/$NT_OWNER_ID.last" "$NT_TMP/last" 0600 || nt_warn "cannot write $NT_STATE/$NT_OWNER_ID.last on $NT_HOSTNAME: a later failed run of this resource in its rollout fails its update instead of reporting a status"
  [ ! -e "$NT_STATE/$NT_OWNER_ID.failed" ] || rm -f "$NT_STATE/$NT_OWNER_ID.failed"
}

nt_restored_so_far() {
  if [ -s "$NT_TMP/restored" ]; then
    nt_list=''
    while IFS="$NT_TAB" read -r ntr_k ntr_v; do nt_list="$nt_list $ntr_k=$ntr_v,"; done < "$NT_TMP/restored"
    printf 'already restored by this run:%s the journal and the boot files were kept: run the delete again' "${nt_list%,};"
  else
    printf 'nothing was restored yet; the journal and the boot files were kept: run the delete again'
  fi
}

# A lost SSH session (HUP, or a closed stdout/stderr: PIPE) does not stop a run: it carries on to the end (without
# a pty it would never see SIGHUP anyway), and the next `up` converges. INT and TERM stop it and roll back.
# A TERM from the run's watchdog (its deadline passed: nt_watchdog_start) says so, at once (before the rollback, which
# may itself hang: the watchdog kills the run after its grace) and in the final message, with what had not returned.
nt_on_signal() {
  trap '' HUP INT TERM PIPE
  nt_how=interrupted
  if [ -n "$NT_TMP" ] && { IFS="$NT_TAB" read -r nt_d nt_c < "$NT_TMP/deadline"; } 2>/dev/null; then
    nt_how="stopped by its deadline ($nt_d s holding the host's lock: $nt_c)"
    NT_FIX="find out why that does not return on this host (dmesg; a stuck driver or filesystem), then run pulumi up again"
    nt_msg "the run on $NT_HOSTNAME passed its deadline of $nt_d s: stopping it"
  fi
  case "$NT_PHASE" in
    apply) nt_die 1 "$nt_how while applying on $NT_HOSTNAME" ;;
    restore) nt_die 1 "$nt_how while restoring on $NT_HOSTNAME" ;;
    finished) nt_cleanup; exit 1 ;;
    *) nt_die 1 "$nt_how during $NT_PHASE on $NT_HOSTNAME; nothing was changed by this run" ;;
  esac
}

# The run's watchdog (issue #32): a host program that stops moving (stopped, or waiting on a command that never
# returns: a driver stuck in ethtool, a hung filesystem) would hold the session, and `pulumi up`, forever, since
# nothing on the Pulumi side bounds a running session (docs/operations.md, "A host that stalls"). Started once the
# lock is taken, as its own small program (its name, net-tuning-watchdog, is not the engine's; no descriptor of the
# engine's open: not the session's output, which would keep the session open, nor the lock's fd 9, which would keep
# the lock after the run died). After NT_DEADLINE seconds (plus the soak) it writes what had not returned into the
# work directory, sends TERM to the run and to the processes it started in its session (not a detached reverter),
# then CONT (a stopped run handles the TERM once it runs again), also to the run's parent: sudo, which stops itself
# while its command is stopped (without a terminal), would otherwise never reap the run and hold the session: the run
# rolls back and says so (nt_on_signal). A
# run whose rollback is still not done NT_DEADLINE_GRACE seconds later is killed (SIGKILL): its journal keeps the
# originals and the next run converges, as after any kill. Stopped (TERM) by nt_cleanup when the run ends. It acts
# only while its parent is still this run: it sleeps in steps of at most 5 s and ends at the first step after its run
# has gone, so a run that died (SIGKILL) or whose stop did not reach it leaves it for at most 5 s. Stopped (TERM), it
# ends its sleep too, also when the TERM comes right after the sleep started (its pid is then $!, a child of its own:
# checked in /proc, as $! may name an earlier sleep long reaped), with KILL: a sleep just forked still has this
# shell's TERM trap until it resets its signals, and a TERM caught there is lost (the sleep then outlived a run
# refused at once by up to 5 s: 6 to 26 of 300 such runs on a loaded machine, tests/unit/watchdog). Costs 2 processes
# for a run shorter than 5 s (this shell and its sleep), one more per 5 s after.
nt_watchdog_start() {
  nt_wd_s=$((NT_DEADLINE + ${NT_GATE_SOAK:-0})) nt_wd_g=$NT_DEADLINE_GRACE
  case $nt_wd_s$nt_wd_g in *[!0-9]*) return 0 ;; esac
  # the process that runs this run: $$ but in a subshell (the confirm runs nt_apply_main at the end of a pipeline),
  # whose own pid /proc/self gives (opened by this shell: a builtin's redirection)
  nt_wd_p=''; { read -r nt_wd_p _ < /proc/self/stat; } 2>/dev/null
  case $nt_wd_p in '' | *[!0-9]*) nt_wd_p=$$ ;; esac
  # TERM at its default while the watchdog is forked: a forked shell keeps this run's trap until it execs, and a TERM
  # caught there (nt_cleanup's, when the run ends within a few ms, as a refused preflight does) would be lost with the
  # exec, leaving the watchdog to its first step (5 s). This run takes TERM at its default for these few
  # microseconds, before it changed anything.
  trap - TERM
  # shellcheck disable=SC2016 # the watchdog's own program, expanded by its own shell
  # (no line of it is a lone "}": compactProgram would end this function there)
  /bin/sh -c 'e=$1 d=$2 g=$3 w=$4 s=""
stop() { if [ -n "$s" ]; then p=$!; l=""; { read -r l < /proc/$p/stat; } 2>/dev/null; l=${l##*) }; set -- $l; [ "${2:-}" != "$$" ] || kill -KILL "$p" 2>/dev/null; fi; exit 0; }
trap stop TERM
self() { read -r l < /proc/self/stat; me=${l%% *}; l=${l##*) }; set -- $l; sid=$4; [ "$2" = "$e" ]; }
n=0
while [ "$n" -lt "$d" ]; do
  c=$((d - n)); [ "$c" -le 5 ] || c=5
  s=1; sleep "$c" &
  wait "$!" || exit 0
  s=""
  self || exit 0
  n=$((n + c))
done
all=""
for f in /proc/[0-9]*/stat; do
  { read -r l < "$f"; } 2>/dev/null || continue
  p=${l%% *}; l=${l##*) }; set -- $l
  [ "$4" = "$sid" ] && [ "$p" != "$me" ] && all="$all $p:$2"
done
ps=" $e " last="" n=0
while [ "$n" -lt 16 ]; do
  more=""
  for x in $all; do case $ps in *" ${x#*:} "*) case $ps in *" ${x%:*} "*) ;; *) ps="$ps${x%:*} " more=1 last=${x%:*} ;; esac ;; esac; done
  [ -n "$more" ] || break; n=$((n + 1))
done
c=""
[ -z "$last" ] || c=$(tr "\000\n\t" "   " < /proc/$last/cmdline 2>/dev/null | cut -c1-160)
if [ -n "$c" ]; then c="\`${c% }\` had not returned"; else
  l=""; { read -r l < /proc/$e/stat; } 2>/dev/null; l=${l##*) }
  case $l in T*) c="the run was stopped (SIGSTOP)" ;; D*) c="the run waits in the kernel" ;; *) c="the run did not end" ;; esac
fi
printf "%s\t%s\n" "$d" "$c" > "$w/deadline" 2>/dev/null
l=""; { read -r l < /proc/$e/stat; } 2>/dev/null; l=${l##*) }; set -- $l
kill -TERM $ps 2>/dev/null; kill -CONT $ps ${2:-} 2>/dev/null
n=0
while [ "$n" -lt "$g" ]; do sleep 1; self || exit 0; n=$((n + 1)); done
kill -KILL $ps 2>/dev/null
exit 0' net-tuning-watchdog "$nt_wd_p" "$nt_wd_s" "$nt_wd_g" "$NT_TMP" </dev/null >/dev/null 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  NT_WD=$!
  trap 'nt_on_signal' TERM
}

nt_init() {
  nt_uid=''
  { while IFS="$NT_TAB" read -r nt_a _ nt_b _; do [ "$nt_a" = Uid: ] && { nt_uid=$nt_b; break; }; done < /proc/self/status; } 2>/dev/null
  [ -n "$nt_uid" ] || nt_uid=$(id -u)
  if [ "$nt_uid" != 0 ]; then
    nt_msg "must run as root, but runs as $(id -un) on $NT_HOSTNAME: connect as root or set become: \"sudo\" with passwordless sudo (NOPASSWD) for this user"
    nt_cleanup
    exit 3
  fi
  trap '' HUP PIPE
  trap 'nt_on_signal' INT TERM
  # The bootstrap's private directory (root's, mode 0700) doubles as the work directory; else a new one.
  case "$NT_INPUT_DIR" in
    /tmp/net-tuning-in.*) if [ -d "$NT_INPUT_DIR" ] && [ ! -L "$NT_INPUT_DIR" ] && [ -O "$NT_INPUT_DIR" ]; then NT_TMP=$NT_INPUT_DIR; fi ;;
  esac
  nt_clean_stale_tmp
  [ -n "$NT_TMP" ] || nt_new_tmp
  # this run's pid: a later run removes the directory when this one was killed (SIGKILL runs no trap)
  printf '%s\n' "$$" > "$NT_TMP/pid" || { nt_msg "cannot write to $NT_TMP on $NT_HOSTNAME (/tmp full?); nothing was changed"; nt_cleanup; exit 1; }
  : > "$NT_TMP/desired"; : > "$NT_TMP/warnings"; : > "$NT_TMP/files"; : > "$NT_TMP/orig.state"
  : > "$NT_TMP/problems"; : > "$NT_TMP/file-undo"; : > "$NT_TMP/restored"
  nt_mark setup
}

# A new work directory, /tmp/net-tuning.<a random UUID from the kernel> (read by a builtin), root's and 0700: mkdir
# refuses a name that exists and never follows a link there; a name no one can guess is not taken. The same mkdir
# creates the engine's state directory of this kind (0700) when it is missing: the first run of a kind on a host
# then costs no second process (the lock creates it otherwise: nt_state_dir). mktemp where the kernel has no UUIDs.
nt_new_tmp() {
  ntn_u=''; { read -r ntn_u < /proc/sys/kernel/random/uuid; } 2>/dev/null
  case $ntn_u in
    *[!0-9a-f-]* | '') NT_TMP=$(mktemp -d /tmp/net-tuning.XXXXXX) || { nt_msg "cannot create a temporary directory in /tmp on $NT_HOSTNAME"; exit 1; }; return 0 ;;
  esac
  set -- "/tmp/net-tuning.$ntn_u"
  case ${NT_ENGINE_KIND-} in
    sysctl | nic) [ -d "$NT_ROOT/$NT_ENGINE_KIND" ] || { [ -d "$NT_ROOT" ] || set -- "$@" "$NT_ROOT"; set -- "$@" "$NT_ROOT/$NT_ENGINE_KIND"; } ;;
  esac
  # (a state directory another run created meanwhile is "File exists": not an error here)
  mkdir -m 0700 -- "$@" 2>/dev/null
  if [ -d "$1" ] && [ ! -L "$1" ] && [ -O "$1" ]; then NT_TMP=$1; else
    nt_msg "cannot create a temporary directory in /tmp on $NT_HOSTNAME (full or read-only?)"; exit 1
  fi
}

# Work directories of earlier runs that were killed (issue #32): root's, not links, holding the pid of a process that
# is gone. A directory without a pid file (a bootstrap killed before the engine started) is left alone.
nt_clean_stale_tmp() {
  set --
  for ntc_d in /tmp/net-tuning.* /tmp/net-tuning-in.*; do
    if [ ! -d "$ntc_d" ] || [ -L "$ntc_d" ] || [ ! -O "$ntc_d" ] || [ "$ntc_d" = "$NT_INPUT_DIR" ] || [ ! -f "$ntc_d/pid" ]; then continue; fi
    ntc_p=''
    { IFS= read -r ntc_p < "$ntc_d/pid"; } 2>/dev/null
    case $ntc_p in '' | *[!0-9]*) continue ;; esac
    kill -0 "$ntc_p" 2>/dev/null || set -- "$@" "$ntc_d"
  done
  [ $# = 0 ] || rm -rf "$@"
}

# ---------------------------------------------------------------------------------------- step markers
# Inert markers, no-ops here: nt_step WHAT after every mutating step, nt_mark EVENT at a few points of the run
# (setup: the work directory is ready; locked / unlocked: the host's lock taken / given back; rollback: a rollback
# starts). They cost no process. The lab's fault-injection overlay (testkit/lab-engine.sh, appended only to the lab's
# build of this engine) redefines them to count the steps and to kill, stop or hang a run at one of them; the
# package's engine never holds that code.
nt_step() { :; }
nt_mark() { :; }

# A write to the work directory failed: the run stops (rolling back what it changed). $1: appended to the message.
nt_tmp_full() { nt_die 1 "cannot write to $NT_TMP on $NT_HOSTNAME (/tmp full?)${1:-}"; }

nt_valid_word() { # KEY-like words: letters, digits and ._-:/@ only
  case "$1" in ''|*[!A-Za-z0-9._:/@-]*) return 1 ;; esac
  return 0
}

# Reads the plan from stdin: "@name value" directives, then "@content" and the content lines, up to "@program"
# (the program itself follows; the bootstrap cut it off and runs it). "framed" (an apply): the plan must end with the
# line "@end <sha256>", the sha256 of every line before it (provider/host/programs.ts engineStdin). It is read whole
# into $NT_TMP/plan and checked before a line of it is parsed: a plan cut off anywhere (even at a line boundary),
# altered, or followed by anything is refused (exit 5) before anything changes. A restore's stdin was checked by its
# bootstrap (RESTORE_BOOT), which removed the end line. A first line that is not a plan line (they all start with "@")
# is the apply bootstrap (ENGINE_BOOT), left on stdin by the bootstrap of an earlier version, which kept its command
# and read only the "@engine" line (ARCHITECTURE.md, "Migration"): skipped, outside the sum.
nt_read_stdin() {
  if [ "${1:-}" = framed ]; then
    nt_end=''
    nt_plan=''
    while IFS= read -r nt_line || [ -n "$nt_line" ]; do
      [ -z "$nt_end" ] || nt_die 5 "the plan goes on after its end line; nothing was changed"
      # before the plan's first line: lines an earlier version's bootstrap left (the bootstrap line, with become
      # "sudo" the sudo line and a second @engine line: programs.ts engineStdin)
      case $nt_plan$nt_line in '@engine '* | [!@]*) continue ;; esac
      case $nt_line in '@end '*) nt_end=${nt_line#@end } ;; *) nt_plan=$nt_plan$nt_line$NT_NL ;; esac
    done
    [ -n "$nt_end" ] || nt_die 5 "the plan is incomplete (no end line: the session was cut while it was sent?); nothing was changed"
    printf '%s' "$nt_plan" > "$NT_TMP/plan" || nt_tmp_full "; nothing was changed"
    nt_plan=''
    nt_sum=$(sha256sum < "$NT_TMP/plan") || nt_die 1 "cannot compute the plan's sha256 on $NT_HOSTNAME (sha256sum); nothing was changed"
    [ "${nt_sum%% *}" = "$nt_end" ] || nt_die 5 "the plan is damaged (its sha256 differs from its end line: cut or altered on the way); nothing was changed"
    NT_PLAN_SUM=$nt_end # recorded in the converged record: the plan this host last converged to
    nt_parse_plan < "$NT_TMP/plan"
  else
    nt_parse_plan
  fi
}
nt_parse_plan() {
  NT_WANT_BUF=1
  nt_in_content=0
  nt_seen_header=0
  while IFS= read -r nt_line || [ -n "$nt_line" ]; do
    [ "$nt_line" = '@program' ] && break
    if [ "$nt_in_content" = 1 ]; then kind_content "$nt_line"; continue; fi
    case "$nt_line" in
      '@net-tuning v1') nt_seen_header=1 ;;
      '@content') nt_in_content=1 ;;
      '@'*)
        nt_name=${nt_line%% *}; nt_name=${nt_name#@}
        nt_value=${nt_line#* }
        [ "$nt_value" = "$nt_line" ] && nt_value=''
        case "$nt_name" in
          kind) NT_KIND=$nt_value ;;
          owner) NT_OWNER=$nt_value ;;
          owner-id) NT_OWNER_ID=$nt_value ;;
          orig) printf '%s\n' "$nt_value" >> "$NT_TMP/orig.state" || nt_tmp_full ;;
          restore) NT_RESTORE=$nt_value ;;
          secret) nt_valid_word "$nt_value" || nt_die 5 "invalid @secret key '$nt_value'"; NT_SECRET_KEYS=$NT_SECRET_KEYS$nt_value$NT_NL ;;
          engine) ;; # the -restore plan's first line: read by the restore bootstrap (provider/host/programs.ts)
          generation) case "$nt_value" in ''|*[!A-Za-z0-9-]*) nt_die 5 "invalid generation '$nt_value'" ;; esac; NT_RESTORE_GEN=$nt_value ;;
          verify-*) nt_gate_directive "$nt_name" "$nt_value" || nt_die 5 "invalid plan line @$nt_name $nt_value" ;;
          confirm) nt_confirm_directive "$nt_value" || nt_die 5 "invalid plan line @confirm $nt_value" ;;
          on-failure) [ "$nt_value" = report ] || nt_die 5 "invalid plan line @on-failure $nt_value"; NT_ON_FAILURE=report ;;
          *) kind_directive "$nt_name" "$nt_value" || nt_die 5 "unknown plan directive @$nt_name (plan written by a newer pulumi-net-tuning?)" ;;
        esac ;;
      ''|'#'*) ;;
      *) nt_die 5 "malformed plan line: $nt_line" ;;
    esac
  done
  NT_WANT_BUF=0
  [ -z "$NT_WANTS" ] || printf '%s' "$NT_WANTS" >> "$NT_TMP/desired" || nt_tmp_full
  NT_WANTS=''
  [ "$nt_seen_header" = 1 ] || nt_die 5 "stdin is not a pulumi-net-tuning v1 plan"
  case "$NT_OWNER_ID" in ''|*[!A-Za-z0-9._-]*) nt_die 5 "invalid owner id '$NT_OWNER_ID'" ;; esac
  case "$NT_KIND" in sysctl|nic) ;; *) nt_die 5 "invalid kind '$NT_KIND'" ;; esac
  case "$NT_OWNER" in ''|*[!A-Za-z0-9._:/@\ -]*) nt_die 5 "invalid owner '$NT_OWNER'" ;; esac
  NT_STATE=$NT_ROOT/$NT_KIND
  NT_JOURNAL=$NT_STATE/$NT_OWNER_ID.orig
}

# One lock per host, shared by every resource and kind: flock(1) on a lock file held (fd 9) for the whole run. The
# kernel releases it when the holder exits or dies, so a killed run never leaves a stale lock and no waiter ever breaks
# one. A waiter gives up after 60 s (exit 4).
nt_state_dir() {
  [ -d "$NT_STATE" ] || { umask 077; mkdir -p "$NT_STATE"; nt_rc=$?; umask 022; [ "$nt_rc" = 0 ]; } || nt_die 1 "cannot create $NT_STATE on $NT_HOSTNAME (read-only or full /var/lib?)"
}
nt_lock() {
  nt_state_dir
  if ! command -v flock >/dev/null 2>&1; then
    nt_msg "flock is not installed on $NT_HOSTNAME: install util-linux (Debian/Ubuntu/RHEL: package util-linux; Alpine: util-linux or busybox with flock); nothing was changed"
    nt_cleanup
    exit 2
  fi
  if [ -d /run ]; then NT_LOCKFILE=/run/pulumi-net-tuning.lock; else NT_LOCKFILE=$NT_ROOT/.flock; fi
  # A failing redirection of the special builtin exec ends dash without a word: try it on a regular builtin first.
  true 2>/dev/null >>"$NT_LOCKFILE" || nt_die 1 "cannot open the lock file $NT_LOCKFILE on $NT_HOSTNAME"
  exec 9>>"$NT_LOCKFILE"
  nt_i=0; nt_max=$NT_LOCK_WAIT
  until flock -n 9 2>/dev/null; do
    nt_i=$((nt_i + 1))
    # a holder soaking (verify gate) holds the lock for its soak: wait for it too, once, while that run lives
    if [ "$nt_i" -gt "$nt_max" ] && [ "$nt_max" = "$NT_LOCK_WAIT" ] && { read -r nt_sp nt_ss < /run/pulumi-net-tuning.soak; } 2>/dev/null &&
      [ -d "/proc/$nt_sp" ]; then
      case $nt_ss in [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) nt_max=$((nt_max + 2 * nt_ss)) ;; esac
    fi
    if [ "$nt_i" -gt "$nt_max" ]; then
      nt_msg "another pulumi-net-tuning run holds $NT_LOCKFILE on $NT_HOSTNAME for more than $((nt_max / 2)) s; nothing was changed: retry later"
      nt_exit 4
    fi
    sleep 0.5 2>/dev/null || sleep 1
  done
  NT_LOCKED=1
  nt_mark locked
  nt_watchdog_start
  # A restore holding the lock meanwhile may have removed the (empty) state directory: create it again, mode 0700.
  nt_state_dir
  nt_trust_dirs
}

# The engine trusts nothing another user can write (issue #32): /var/lib, the state and journal directories and the
# converged records' directory must be root's and writable by nobody else (a directory another user can write lets
# them swap a journal or a record, or plant a link where root writes). One process (ls) for all of them.
# The same `ls` also lists the paths a kind asks for (kind_ls_paths sets NT_LS_MORE: validated paths without blanks;
# the sysctl kind's /proc/sys files, whose modes its preflight checks): their lines go to $NT_TMP/modes, so the
# preflight needs no ls of its own (one process less per run). A path that does not exist is simply not listed.
nt_trust_dirs() {
  set -- /var/lib "$NT_ROOT" "$NT_STATE"
  [ -d "$NT_CONVERGED_DIR" ] && set -- "$@" "$NT_CONVERGED_DIR"
  ntt_want=" $* " ntt_n=$#
  NT_LS_MORE=''
  if command -v kind_ls_paths >/dev/null 2>&1; then kind_ls_paths; fi
  set -f
  # shellcheck disable=SC2086 # NT_LS_MORE: paths without blanks, globbing off
  ntt_ls=$(ls -ldn -- "$@" $NT_LS_MORE 2>/dev/null)
  set +f
  ntt_more='' ntt_seen=0
  ntt_ifs=$IFS; IFS=$NT_NL; set -f
  for ntt_l in $ntt_ls; do IFS=$ntt_ifs
    ntt_p=${ntt_l##* }
    case $ntt_want in *" $ntt_p "*) ;; *) ntt_more=$ntt_more$ntt_l$NT_NL; continue ;; esac
    ntt_seen=$((ntt_seen + 1))
    # shellcheck disable=SC2086 # ls's fields: mode links uid gid size date… name
    set -- $ntt_l
    case $1 in
      ?????w* | ????????w*) ntt_bad="$ntt_p is writable by other users ($1)" ;;
      *) if [ "$3" != 0 ]; then ntt_bad="$ntt_p is owned by uid $3, not root"; else ntt_bad=''; fi ;;
    esac
    if [ -n "$ntt_bad" ]; then
      set +f
      nt_die 1 "$ntt_bad on $NT_HOSTNAME: the originals and records kept there could be altered by another user, so this run trusts none of them; nothing was changed. Make it root's and writable by root only (chown root:root, chmod go-w), check what it holds, then run again"
    fi
  done; IFS=$ntt_ifs; set +f
  [ "$ntt_seen" = "$ntt_n" ] || nt_die 1 "cannot inspect$ntt_want on $NT_HOSTNAME; nothing was changed"
  [ -z "$NT_LS_MORE" ] || printf '%s' "$ntt_more" > "$NT_TMP/modes" || nt_tmp_full
  return 0
}

nt_warn() { nt_redact "$*"; printf '%s\n' "$NT_RED" >> "$NT_TMP/warnings"; }

nt_problem() {
  NT_PROBLEMS=$((NT_PROBLEMS + 1))
  nt_redact "$*"
  printf '  - %s\n' "$NT_RED" >> "$NT_TMP/problems"
}

nt_problems_exit() {
  [ "$NT_PROBLEMS" = 0 ] && return 0
  nt_msg "preflight refused the change on $NT_HOSTNAME ($(uname -r)): $NT_PROBLEMS problem(s), nothing was changed:"
  { while IFS= read -r nt_l; do printf "%s\n" "$nt_l"; done < "$NT_TMP/problems"; } >&2
  nt_exit 2
}

# nt_want KEY VALUE: adds a desired setting (and keeps the index of $NT_TMP/desired, once built, in step). A kind that
# appends to $NT_TMP/desired itself calls nt_index_drop desired (the apply indexes it again after the preflight).
# While nt_read_stdin reads the plan (NT_WANT_BUF=1) the lines are kept in NT_WANTS and appended to the file in one go
# at its end; at any other time at once.
NT_WANTS=''
NT_WANT_BUF=0
nt_want() {
  if [ "$NT_WANT_BUF" = 1 ]; then NT_WANTS=$NT_WANTS$1$NT_TAB$2$NT_NL; else printf '%s\t%s\n' "$1" "$2" >> "$NT_TMP/desired"; fi
  # only the apply indexes (the restore program leaves nt_want_ix out)
  [ "$NT_IXS" = ' ' ] || nt_want_ix "$1" "$2"
}
nt_want_ix() {
  case $2 in "$NT_TAB"* | *"$NT_TAB") nt_index_drop desired ;; *) nt_index_put desired "$1" "$2" ;; esac
}

# nt_lookup FILE KEY: sets NT_FOUND to the value of KEY in a key<TAB>value file; returns 1 when absent.
# A file of $NT_TMP indexed by nt_index is answered from shell variables (no read of the file).
nt_lookup() {
  case $NT_IXS in *" $1:"*) nt_ix_get "$@"; return ;; esac
  NT_FOUND=''
  [ -f "$1" ] || return 1
  while IFS="$NT_TAB" read -r ntl_k ntl_v; do
    if [ "$ntl_k" = "$2" ]; then NT_FOUND=$ntl_v; return 0; fi
  done < "$1"
  return 1
}
# nt_get NAME KEY: nt_lookup "$NT_TMP/NAME" KEY, NAME a plain name (nt_ix_q) written in the code, never a value: the
# lookup of the apply's loops, answered from the index without working out the slot from a path. NTQ_<NAME> is read
# only once NT_IXS (set by the engine itself) names the file: before its first nt_index it may come from the
# caller's environment, and it is evaluated.
nt_get() {
  case $NT_IXS in *" $NT_TMP/$1:"*) ;; *) nt_lookup "$NT_TMP/$1" "$2"; return ;; esac
  case $1 in *.*) eval "NT_SLOT=\${NTQ_${1%.*}__${1#*.}-}" ;; *) eval "NT_SLOT=\${NTQ_$1-}" ;; esac
  nt_vname "$2" || { NT_FOUND=''; return 1; }
  eval "ntl_e=\${NTI_${NT_SLOT}_$NT_VN-}"
  # the entry is "key<TAB>value" (never empty when set): another key of the same variable name is not this one
  # shellcheck disable=SC2154 # ntl_e is assigned by the eval
  case $ntl_e in "$2$NT_TAB"*) NT_FOUND=${ntl_e#*"$NT_TAB"}; return 0 ;; esac
  NT_FOUND=''; return 1
}

# In-memory index (CPU: the read builtin costs one read(2) per byte, so scanning a key<TAB>value file for every
# lookup costs keys x bytes system calls). nt_index NAME loads $NT_TMP/NAME once (the first value of each key wins,
# as in nt_lookup) into variables NTI_<name>_g<n>_<key> holding "key<TAB>value" (names from nt_vname; n counts the
# nt_index calls, so a file indexed again starts empty; NT_IXS lists " $NT_TMP/NAME:<name>_g<n>", and NTQ_<NAME>
# holds <name>_g<n>, see nt_ix_q); nt_lookup and nt_get then answer for that file from them (nt_ix_get). NAME is a
# plain name (nt_ix_q: letters and digits, at most one inner "."); other files are never indexed. Only for files that
# no longer change, or whose every later append also goes through nt_index_put. Values are only assigned and
# expanded, never evaluated; when a key cannot be indexed (a character nt_vname refuses, or two keys with one variable
# name) the file stays unindexed. The apply indexes; a restore never does (its program leaves nt_ix_get out).
NT_IXS=' '
NT_VW='' # "x" and the last word encoded ('' when none)
nt_vname() { # WORD: NT_VN = WORD with each of . _ - / : @ as _ (not injective: the index keeps the key and compares
  # it); returns 1 for any other character. The last word is remembered (a loop looks one key up in several files).
  case x$1 in "$NT_VW") return 0 ;; *[!A-Za-z0-9._/:@-]*) NT_VW=''; return 1 ;; esac
  NT_VW=x$1; ntv_ifs=$IFS; IFS='._/:@-'
  # shellcheck disable=SC2086 # splitting on those characters is the point (no pattern character can be left: no set -f)
  set -- $1
  IFS=_; NT_VN="$*"; IFS=$ntv_ifs
}
nt_ix_get() { # FILE KEY: nt_lookup for an indexed file of $NT_TMP
  NT_FOUND=''
  nt_ix_slot "$1" || return 1
  # a key that cannot be encoded is in no indexed file (every key of an indexed file was encoded)
  nt_vname "$2" || return 1
  eval "ntl_e=\${NTI_${NT_SLOT}_$NT_VN-}"
  # shellcheck disable=SC2154 # ntl_e is assigned by the eval
  case $ntl_e in "$2$NT_TAB"*) NT_FOUND=${ntl_e#*"$NT_TAB"}; return 0 ;; esac
  return 1
}
nt_ix_plain() { # NAME: true for a name nt_index takes (nt_ix_q)
  case $1 in *[!A-Za-z0-9.]* | *.*.* | '' | .* | *.) return 1 ;; esac
}
nt_index() { # NAME: index $NT_TMP/NAME (a no-op when that fails or it is absent: nt_lookup then reads the file)
  nt_index_drop "$1"
  [ -f "$NT_TMP/$1" ] && nt_ix_plain "$1" || return 0
  nt_vname "$1"
  NT_IXG=$((${NT_IXG:-0} + 1)); ntx_s=${NT_VN}_g$NT_IXG; ntx_t=''
  while IFS="$NT_TAB" read -r ntx_k ntx_v; do
    nt_ix_set "$ntx_s" "$ntx_k" "$ntx_v" || return 0
    ntx_t=$ntx_t$ntx_k$NT_TAB$ntx_v$NT_NL
  done < "$NT_TMP/$1"
  eval "NTL_$ntx_s=\$ntx_t"
  NT_IXS="$NT_IXS$NT_TMP/$1:$ntx_s "; nt_ix_q "$1" "$ntx_s"
}
# nt_index_text NAME TEXT: nt_index NAME, TEXT being the file's content without its final newline (as a command
# substitution captured it): no read of the file. Only when every line is plainly "key<TAB>value" (no tab at either
# end or doubled, no empty line), where splitting at the first tab is what the read builtin does; else nt_index.
nt_index_text() {
  case $2 in
    "$NT_TAB"* | *"$NT_TAB" | *"$NT_NL$NT_TAB"* | *"$NT_TAB$NT_NL"* | *"$NT_TAB$NT_TAB"* | "$NT_NL"* | *"$NT_NL$NT_NL"*) nt_index "$1"; return ;;
  esac
  nt_index_drop "$1"
  [ -f "$NT_TMP/$1" ] && nt_ix_plain "$1" || return 0
  nt_vname "$1"
  NT_IXG=$((${NT_IXG:-0} + 1)); ntx_s=${NT_VN}_g$NT_IXG; ntx_t=''
  ntx_ifs=$IFS; IFS=$NT_NL; set -f
  for ntx_l in $2; do IFS=$ntx_ifs; set +f
    case $ntx_l in *"$NT_TAB"*) ntx_k=${ntx_l%%"$NT_TAB"*}; ntx_v=${ntx_l#*"$NT_TAB"} ;; *) ntx_k=$ntx_l; ntx_v='' ;; esac
    nt_ix_set "$ntx_s" "$ntx_k" "$ntx_v" || { IFS=$ntx_ifs; set +f; return 0; }
    ntx_t=$ntx_t$ntx_k$NT_TAB$ntx_v$NT_NL
  done; IFS=$ntx_ifs; set +f
  eval "NTL_$ntx_s=\$ntx_t"
  NT_IXS="$NT_IXS$NT_TMP/$1:$ntx_s "; nt_ix_q "$1" "$ntx_s"
}
# nt_index_put NAME KEY VALUE: the line "KEY<TAB>VALUE" was appended to $NT_TMP/NAME (first value wins); VALUE as
# the read of nt_lookup gives it back (no tab at either end: e.g. a value nt_lookup found). NAME as for nt_get (and
# its NTQ_<NAME> read only once NT_IXS names the file).
nt_index_put() {
  case $NT_IXS in *" $NT_TMP/$1:"*) ;; *) return 0 ;; esac
  case $1 in *.*) eval "ntx_s=\${NTQ_${1%.*}__${1#*.}-}" ;; *) eval "ntx_s=\${NTQ_$1-}" ;; esac
  if nt_ix_set "$ntx_s" "$2" "$3"; then eval "NTL_$ntx_s=\$NTL_$ntx_s\$2\$NT_TAB\$3\$NT_NL"; else nt_index_drop "$1"; fi
}
nt_ix_set() { # SLOT KEY VALUE: the first entry of KEY; 1 when KEY cannot be indexed (a character nt_vname refuses,
  # or another key already holds its variable name)
  nt_vname "$2" || return 1
  eval "ntx_e=\${NTI_${1}_$NT_VN-}"
  # an entry is never empty ("key<TAB>value"); the same key again: the first value stays; another key of the same
  # variable name: 1
  # shellcheck disable=SC2154 # ntx_e is assigned by the eval
  case $ntx_e in '') eval "NTI_${1}_$NT_VN=\$2\$NT_TAB\$3"; return 0 ;; "$2$NT_TAB"*) return 0 ;; esac
  return 1
}
# nt_lines NAME: NT_LINES = the lines of $NT_TMP/NAME as "key<TAB>value" (as the read of nt_lookup splits them), from
# its index when indexed (no read of the file), for loops of the form
#   nt_lines NAME; nt_ifs=$IFS; IFS=$NT_NL; set -f
#   for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"; ...; done; IFS=$nt_ifs; set +f
# (the list is split once, on newlines only, without globbing; the body runs with IFS and globbing as before).
nt_lines() {
  case $NT_IXS in
    *" $NT_TMP/$1:"*) nt_ix_slot "$NT_TMP/$1"; eval "NT_LINES=\$NTL_$NT_SLOT"; return 0 ;;
  esac
  NT_LINES=''
  while IFS="$NT_TAB" read -r ntx_k ntx_v; do NT_LINES=$NT_LINES$ntx_k$NT_TAB$ntx_v$NT_NL; done < "$NT_TMP/$1"
}
nt_kv() { # LINE of nt_lines: nt_k = the key, nt_v = the value
  case $1 in *"$NT_TAB"*) nt_k=${1%%"$NT_TAB"*}; nt_v=${1#*"$NT_TAB"} ;; *) nt_k=$1; nt_v='' ;; esac
}
nt_index_drop() { # NAME: nt_lookup reads $NT_TMP/NAME again (its variables stay, unused until the next nt_index)
  case $NT_IXS in *" $NT_TMP/$1:"*) ;; *) return 0 ;; esac
  ntx_d=' '; ntq_ifs=$IFS; IFS=' '; set -f
  for ntq_w in $NT_IXS; do case $ntq_w in "$NT_TMP/$1:"*) ;; *) ntx_d="$ntx_d$ntq_w " ;; esac; done
  IFS=$ntq_ifs; set +f; NT_IXS=$ntx_d; nt_ix_q "$1" ''
}
# nt_ix_q NAME SLOT: NTQ_<NAME> = SLOT ('' = not indexed) for a plain NAME (letters and digits, at most one inner
# ".", written "__"; no "_" in NAME, so the variable names are distinct), kept with every change of NT_IXS
nt_ix_q() {
  nt_ix_plain "$1" || return 0
  case $1 in *.*) eval "NTQ_${1%.*}__${1#*.}=\$2" ;; *) eval "NTQ_$1=\$2" ;; esac
}
# nt_ix_slot FILE: NT_SLOT = the index slot of FILE; 1 when FILE is not indexed (only plain names of $NT_TMP are:
# NTQ_<name>, nt_ix_q).
nt_ix_slot() {
  ntq_n=${1#"$NT_TMP"/}
  case $ntq_n in
    "$1" | *[!A-Za-z0-9.]* | *.*.* | '' | .* | *.) NT_SLOT=''; return 1 ;; # not in $NT_TMP, or not a plain name
    *.*) eval "NT_SLOT=\${NTQ_${ntq_n%.*}__${ntq_n#*.}-}" ;;
    *) eval "NT_SLOT=\${NTQ_$ntq_n-}" ;;
  esac
  [ -n "$NT_SLOT" ]
}

# Words of a value joined by single spaces (the kernel reads back multi-values tab-separated).
nt_norm() {
  # one word (or none) is already as the splitting would leave it
  case $1 in *[" $NT_TAB"]*) ;; *) NT_NORM=$1; return 0 ;; esac
  nt_save_ifs=$IFS; IFS=" $NT_TAB"
  set -f
  # shellcheck disable=SC2086 # word splitting is the point
  set -- $1
  set +f
  IFS=$nt_save_ifs
  NT_NORM="$*"
}

nt_pow2() { # nt_pow2 N: NT_POW2 = the power of two the kernel rounds N up to (0 stays 0), as provider/sysctl/readback.ts kernelPow2
  # A plain decimal of at most 9 digits (no leading 0: the shell would read it as octal) in shell arithmetic (no
  # process; the result stays below 2^31, where every awk prints the same), anything else with awk as before.
  case $1 in
    0) NT_POW2=0; return ;;
    [1-9] | [1-9]*[0-9]) case $1 in *[!0-9]* | ??????????*) ;; *)
      NT_POW2=1; while [ "$NT_POW2" -lt "$1" ]; do NT_POW2=$((NT_POW2 * 2)); done; return ;; esac ;;
  esac
  NT_POW2=$(awk -v n="$1" 'BEGIN { p = n > 0; while (p < n + 0) p *= 2; printf "%d\n", p }')
}

# nt_same A B [KEY]: equal words; with KEY, also equal in the key's read-back form (the kind's kind_same; NT_KS=1:
# the apply found it defined, no `command -v` per key)
nt_same() {
  case $1$2 in
    *[" $NT_TAB"]*) nt_norm "$1"; nt_a=$NT_NORM; nt_norm "$2" ;;
    *) nt_a=$1; NT_NORM=$2 ;; # single words (no blank in either): nt_norm leaves them as they are
  esac
  [ "$nt_a" = "$NT_NORM" ] && return 0
  [ -n "${3:-}" ] && { [ "${NT_KS-}" = 1 ] || command -v kind_same >/dev/null 2>&1; } && kind_same "$3" "$nt_a" "$NT_NORM"
}

# Refuses keys that another owner's journal on this host already holds: never last-writer-wins. A key's other names
# (the plan's "@alias KEY NAME..." lines, in $NT_TMP/aliases: net.ipv4.ip_forward is net.ipv4.conf.all.forwarding)
# are the same key: another journal holding one of them refuses it too, and so does this owner's own journal (a
# rename in place would record the tuned value as the new name's original, and restoring the old name would undo it).
nt_check_owners() { nt_lines desired; nt_owner_conflicts nt_problem "$NT_LINES" "$NT_TMP/aliases"; }

# nt_owner_of JOURNAL: NT_OWNER_OF = the owner label of JOURNAL's resource (project/stack/name, from its .owner file,
# read by the shell), or the journal's name where that file is missing or empty (nt_write_owner).
nt_owner_of() {
  NT_OWNER_OF=''
  { IFS= read -r NT_OWNER_OF < "${1%.orig}.owner"; } 2>/dev/null
  [ -n "$NT_OWNER_OF" ] || NT_OWNER_OF=${1##*/}
}

# nt_owner_conflicts CALLBACK LINES ALIASES: the check above for LINES (the desired "key<TAB>value" or "key" lines) and
# the ALIASES file (empty: none), each problem through CALLBACK (nt_problem; the live read, as root: nt_live_refuse).
# The journals are root's (0700 state dir): another user finds none, so nothing.
nt_owner_conflicts() {
  nt_al=0; [ -n "$3" ] && [ -s "$3" ] && nt_al=1
  for nt_j in "$NT_STATE"/*.orig; do
    [ -f "$nt_j" ] || continue
    nt_own=0; [ "$nt_j" = "$NT_JOURNAL" ] && nt_own=1
    [ "$nt_own$nt_al" = 10 ] && continue
    nt_other=''
    nt_owner_of "$nt_j"; nt_other=$NT_OWNER_OF
    # the other journal's keys (first fields, as nt_lookup matches them) read once, then each desired key in order
    nt_jk=$NT_NL
    while IFS="$NT_TAB" read -r nt_k _; do nt_jk=$nt_jk$nt_k$NT_NL; done < "$nt_j"
    nt_ifs=$IFS; IFS=$NT_NL; set -f
    for nt_l in $2; do IFS=$nt_ifs; set +f; nt_k=${nt_l%%"$NT_TAB"*}
      [ "$nt_own" = 0 ] && case $nt_jk in *"$NT_NL$nt_k$NT_NL"*)
        "$1" "$nt_k is already managed by $nt_other on this host (journal $nt_j): manage it in one resource only, or remove it there first"; continue ;;
      esac
      if [ "$nt_al" = 1 ] && nt_lookup "$3" "$nt_k"; then
        for nt_n in $NT_FOUND; do
          case $nt_jk in *"$NT_NL$nt_n$NT_NL"*)
            if [ "$nt_own" = 1 ]; then
              "$1" "$nt_k is the kernel variable this resource set as $nt_n (journal $nt_j): keep the name $nt_n, or remove the key first (an up without it restores the original), then add it as $nt_k"
            else
              "$1" "$nt_k is already managed by $nt_other on this host as $nt_n, the same kernel variable (journal $nt_j): manage it in one resource only, under one name, or remove it there first"
            fi; break ;;
          esac
        done
      fi
    done; IFS=$nt_ifs; set +f
  done
}

# Files: nt_stage_file DEST SRC MODE replaces DEST atomically at commit; nt_stage_remove DEST removes it (a file or
# a symlink). A path is staged once: later stagings of the same path are ignored.
nt_staged() { # DEST: true when DEST is already staged
  while IFS="$NT_TAB" read -r _ nts_dest _; do [ "$nts_dest" = "$1" ] && return 0; done < "$NT_TMP/files"
  return 1
}
nt_stage_file() { nt_staged "$1" || printf 'put\t%s\t%s\t%s\n' "$1" "$2" "$3" >> "$NT_TMP/files"; }
nt_stage_remove() { nt_staged "$1" || printf 'rm\t%s\t-\t-\n' "$1" >> "$NT_TMP/files"; }

# nt_same_file A B: identical lines (shell builtins only; a missing final newline is not told apart).
nt_same_file() {
  [ -f "$1" ] && [ -f "$2" ] || return 1
  nt_r=0
  exec 7<"$1" 8<"$2"
  while :; do
    nt_ea=0; nt_eb=0
    IFS= read -r nt_la <&7 || nt_ea=1
    IFS= read -r nt_lb <&8 || nt_eb=1
    if [ "$nt_ea" != "$nt_eb" ] || [ "$nt_la" != "$nt_lb" ]; then nt_r=1; break; fi
    [ "$nt_ea" = 1 ] && break
  done
  exec 7<&- 8<&-
  return "$nt_r"
}

# nt_write_atomic DEST SRC MODE: an fsynced copy of SRC next to DEST, then a rename (2 processes: dd, mv).
nt_write_atomic() { nt_write_new "$1" "$3" dd if="$2" bs=65536 conv=fsync; }

# nt_write_owner DEST: the owner label ($NT_OWNER) of a journal, a file only messages read (nt_owner_of): written by
# the shell and renamed, not fsynced (1 process: mv). The rename gives the old or the new label, or after a power
# loss perhaps an empty file, which nt_owner_of reads as no label.
nt_write_owner() { nt_write_new "$1" 0600 printf '%s\n' "$NT_OWNER"; }

# nt_write_new DEST MODE COMMAND...: COMMAND's output in a new file next to DEST, then renamed over DEST.
nt_write_new() {
  nt_dest_w=$1 nt_dir=${1%/*}; nt_base=${1##*/}; nt_wmode=$2; shift 2
  [ -d "$nt_dir" ] || mkdir -p "$nt_dir" || return 1
  nt_new="$nt_dir/.$nt_base.net-tuning-new"
  if [ -e "$nt_new" ] || [ -L "$nt_new" ]; then rm -f "$nt_new" || return 1; fi
  # Created with its final mode where a umask can express it (no chmod process), and exclusively: the shell opens it
  # under noclobber (set -C), so a file or a symlink planted at that name after the rm above (a directory others can
  # write) makes the write fail instead of being followed (issue #32).
  case "$nt_wmode" in 0600|600) umask 177 ;; 0644|644) umask 133 ;; *) umask 077 ;; esac
  set -C
  "$@" 2>/dev/null > "$nt_new"; nt_rc=$?
  set +C
  umask 022
  if [ "$nt_rc" != 0 ] || [ ! -f "$nt_new" ] || [ -L "$nt_new" ]; then rm -f "$nt_new"; return 1; fi
  case "$nt_wmode" in 0600|600|0644|644) ;; *) chmod "$nt_wmode" "$nt_new" || { rm -f "$nt_new"; return 1; } ;; esac
  if mv -f "$nt_new" "$nt_dest_w"; then return 0; fi
  rm -f "$nt_new"
  return 1
}

# Every staged file operation; the undo record of each is written before the operation (rollback: nt_undo_files).
nt_commit_files() {
  nt_n=0
  while IFS="$NT_TAB" read -r nt_op nt_dest nt_src nt_mode; do
    nt_n=$((nt_n + 1))
    # A file already exactly as planned (content and mode) is left alone, modification time included.
    if [ "$nt_op" = put ] && [ -f "$nt_dest" ] && [ ! -L "$nt_dest" ] && nt_same_file "$nt_src" "$nt_dest" &&
      [ "$(stat -c %a "$nt_dest" 2>/dev/null)" = "${nt_mode#0}" ]; then continue; fi
    if [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then
      cp -pP "$nt_dest" "$NT_TMP/backup.$nt_n" || nt_die 1 "cannot back up $nt_dest on $NT_HOSTNAME before changing it"
      printf '%s\t%s\n' "$nt_dest" "$NT_TMP/backup.$nt_n" >> "$NT_TMP/file-undo" || nt_tmp_full
    else
      printf '%s\t-\n' "$nt_dest" >> "$NT_TMP/file-undo" || nt_tmp_full
    fi
    if [ "$nt_op" = put ]; then
      nt_write_atomic "$nt_dest" "$nt_src" "$nt_mode" || nt_die 1 "cannot write $nt_dest on $NT_HOSTNAME (read-only or full filesystem?)"
      nt_step "write $nt_dest"
    else
      if [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then
        rm -f "$nt_dest" 2>/dev/null
        if [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then nt_die 1 "cannot remove $nt_dest on $NT_HOSTNAME"; fi
        nt_step "remove $nt_dest"
      fi
    fi
  done < "$NT_TMP/files"
}

# Undoes the committed file operations, newest first; every step is checked (failures: NT_UNDO_FAILED).
nt_undo_files() {
  [ -s "$NT_TMP/file-undo" ] || return 0
  sed -n '1!G;h;$p' "$NT_TMP/file-undo" > "$NT_TMP/file-undo.rev" || { NT_UNDO_FAILED="$NT_UNDO_FAILED the files of this run (no temporary space);"; return 0; }
  while IFS="$NT_TAB" read -r nt_dest nt_bak; do
    if [ "$nt_bak" = - ]; then
      rm -f "$nt_dest" 2>/dev/null
      if [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then NT_UNDO_FAILED="$NT_UNDO_FAILED removing the new file $nt_dest;"; fi
    elif { [ -L "$nt_dest" ] && [ -L "$nt_bak" ]; } || { [ ! -L "$nt_dest" ] && [ ! -L "$nt_bak" ]; } && cmp -s "$nt_bak" "$nt_dest" 2>/dev/null; then
      : # unchanged (the operation that failed never happened)
    else
      rm -f "$nt_dest.net-tuning-undo" 2>/dev/null
      if cp -pP "$nt_bak" "$nt_dest.net-tuning-undo" 2>/dev/null && mv -f "$nt_dest.net-tuning-undo" "$nt_dest" 2>/dev/null; then :; else
        rm -f "$nt_dest.net-tuning-undo" 2>/dev/null
        NT_UNDO_FAILED="$NT_UNDO_FAILED restoring $nt_dest (its previous content is lost with this run's temporary files);"
      fi
    fi
  done < "$NT_TMP/file-undo.rev"
  : > "$NT_TMP/file-undo"
}

# Rollback of a failed apply: values (newest change first, each read back), files, journal; every step checked.
nt_rollback() {
  NT_PHASE=rollback
  nt_mark rollback
  # The changed keys, newest first, from memory (NT_CHANGED: "key<TAB>original" lines, in the order of the changes):
  # no temporary file is written, so a full /tmp cannot shorten the rollback (issue #32).
  nt_rev=''
  nt_ifs=$IFS; IFS=$NT_NL; set -f
  for nt_l in ${NT_CHANGED-}; do nt_rev=$nt_l$NT_NL$nt_rev; done
  NT_CHANGED=''
  for nt_l in $nt_rev; do IFS=$nt_ifs; set +f
    nt_k=${nt_l%%"$NT_TAB"*}; nt_v=${nt_l#*"$NT_TAB"}
    if ! kind_set "$nt_k" "$nt_v"; then NT_UNDO_FAILED="$NT_UNDO_FAILED $nt_k (wanted '$nt_v' back: $NT_ERR);"; continue; fi
    kind_expect "$nt_k" "$nt_v"
    if kind_get "$nt_k" && nt_same "$NT_EXPECT" "$NT_GOT" "$nt_k"; then NT_UNDONE="${NT_UNDONE-} $nt_k = '$nt_v',"; else
      NT_UNDO_FAILED="$NT_UNDO_FAILED $nt_k (wanted '$nt_v' back, reads '$NT_GOT');"
    fi
  done; IFS=$nt_ifs; set +f
  nt_undo_files
  if [ "$NT_JOURNAL_TOUCHED" = 1 ]; then
    if [ "$NT_J_FORMAT" != none ]; then
      # cp -p keeps the journal's modification time too: a failed run leaves it byte for byte as it was.
      if cmp -s "$NT_TMP/journal.before" "$NT_JOURNAL" ||
        { cp -p "$NT_TMP/journal.before" "$NT_JOURNAL.net-tuning-undo" 2>/dev/null && mv -f "$NT_JOURNAL.net-tuning-undo" "$NT_JOURNAL" 2>/dev/null; }; then :; else
        rm -f "$NT_JOURNAL.net-tuning-undo" 2>/dev/null
        NT_UNDO_FAILED="$NT_UNDO_FAILED restoring the journal $NT_JOURNAL to its state before this run;"
      fi
    elif [ -z "$NT_UNDO_FAILED" ]; then
      # A first apply that left nothing changed leaves no journal; if anything could not be undone, the new
      # journal stays: it is the only record of the originals.
      rm -f "$NT_JOURNAL" "${NT_JOURNAL%.orig}.owner" 2>/dev/null
      [ -e "$NT_JOURNAL" ] && NT_UNDO_FAILED="$NT_UNDO_FAILED removing the new journal $NT_JOURNAL;"
    fi
  fi
  if command -v kind_rollback >/dev/null 2>&1; then kind_rollback; fi
  nt_confirm_rollback
  NT_PHASE=rolledback
}

# ---------------------------------------------------------------------------------------- journal (v2)
# Line 1 "net-tuning-journal v2<TAB>owner-id<TAB>generation", then "key<TAB>original" lines, then "artefact<TAB>path"
# lines naming every file this owner persisted. A 0.1.0 journal has no header (key lines only).
# A new generation taking over a journal with a committed one (a create after a move to another address of this
# machine) is pending until its commit: line 1 "net-tuning-journal v2<TAB>owner-id<TAB>pending:NEW<TAB>COMMITTED".
# The LAST field is always the committed generation (restore.sh and the fallbacks already in Pulumi state read it so),
# so a create that dies before its commit never makes the older plan's restore skip.
# nt_journal_load: $NT_TMP/j.keys, $NT_TMP/j.arts, NT_J_FORMAT (none|v1|v2), NT_J_GEN (the committed generation).
# Returns 1 when unreadable or not ours.
nt_journal_load() {
  : > "$NT_TMP/j.keys"; : > "$NT_TMP/j.arts"; NT_J_FORMAT=none; NT_J_GEN=''
  [ -e "$NT_JOURNAL" ] || return 0
  [ -f "$NT_JOURNAL" ] && [ -r "$NT_JOURNAL" ] || return 1
  NT_J_FORMAT=v1
  ntj_first=1
  while IFS="$NT_TAB" read -r ntj_k ntj_v || [ -n "$ntj_k" ]; do
    if [ "$ntj_first" = 1 ]; then
      ntj_first=0
      case "$ntj_k" in
        'net-tuning-journal v2')
          [ "${ntj_v%%"$NT_TAB"*}" = "$NT_OWNER_ID" ] || return 1
          NT_J_GEN=${ntj_v#*"$NT_TAB"}; [ "$NT_J_GEN" = "$ntj_v" ] && NT_J_GEN=''
          # "pending:NEW<TAB>COMMITTED": the committed one
          NT_J_GEN=${NT_J_GEN##*"$NT_TAB"}
          NT_J_FORMAT=v2; continue ;;
        'net-tuning-journal'*) return 1 ;;
      esac
    fi
    # a key or path read back is checked as strictly as a plan's (issue #32): no ".." step, only the plan's characters
    case "$ntj_k" in
      '') ;;
      artefact) case $ntj_v in /*/../* | */.. | *[!A-Za-z0-9._:/@+-]* | [!/]*) nt_die 1 "the journal $NT_JOURNAL on $NT_HOSTNAME names an invalid file '$ntj_v' (altered?); nothing was changed: check that file, then move it away" ;; esac
        printf '%s\n' "$ntj_v" >> "$NT_TMP/j.arts" || nt_tmp_full ;;
      *) case $ntj_k in *../* | */.. | ..* | /* | *[!A-Za-z0-9._:/@-]*) nt_die 1 "the journal $NT_JOURNAL on $NT_HOSTNAME holds an invalid key '$ntj_k' (altered?); nothing was changed: check that file, then move it away" ;; esac
        printf '%s\t%s\n' "$ntj_k" "$ntj_v" >> "$NT_TMP/j.keys" || nt_tmp_full ;;
    esac
  done < "$NT_JOURNAL"
  return 0
}

# nt_journal_render KEYS ARTS OUT
# [lines]: KEYS (a file of $NT_TMP) holds only "key<TAB>value" lines as nt_lines splits them: taken from nt_lines
# (its index when indexed). NT_JOUT = the text written to OUT.
# nt_file_is TEXT FILE: FILE holds exactly TEXT (complete lines), as nt_same_file would find a file of TEXT and
# FILE identical (only FILE is read).
nt_file_is() {
  [ -f "$2" ] || return 1
  ntf_t=''; ntf_l=''
  while IFS= read -r ntf_l; do ntf_t=$ntf_t$ntf_l$NT_NL; done < "$2"
  [ -z "$ntf_l" ] && [ "$ntf_t" = "$1" ]
}
nt_journal_render() {
  NT_JOUT="net-tuning-journal v2$NT_TAB$NT_OWNER_ID$NT_TAB${NT_JHEAD:-$NT_GEN}$NT_NL"
  if [ "${4:-}" = lines ]; then nt_lines "${1#"$NT_TMP/"}"; NT_JOUT=$NT_JOUT$NT_LINES
  else while IFS= read -r ntj_l; do NT_JOUT=$NT_JOUT$ntj_l$NT_NL; done < "$1"; fi
  while IFS= read -r ntj_l; do [ -n "$ntj_l" ] && NT_JOUT=${NT_JOUT}artefact$NT_TAB$ntj_l$NT_NL; done < "$2"
  printf '%s' "$NT_JOUT" > "$3"
}

# nt_journal_write KEYS ARTS WHAT: writes the journal (atomically, fsynced) unless it is already that; checked.
# [lines]: as nt_journal_render's. The text this run last wrote or found in the journal (NT_JLAST) spares reading it
# again to compare (this run holds the lock: nothing else writes the journal meanwhile).
nt_journal_write() {
  nt_journal_render "$1" "$2" "$NT_TMP/journal.out" "${4:-}" || nt_die 1 "cannot prepare the journal in $NT_TMP on $NT_HOSTNAME (/tmp full?)"
  if [ -n "${NT_JLAST:-}" ] && [ "$NT_JOUT" = "$NT_JLAST" ]; then return 0; fi
  if nt_file_is "$NT_JOUT" "$NT_JOURNAL"; then NT_JLAST=$NT_JOUT; return 0; fi
  NT_JOURNAL_TOUCHED=1
  nt_write_atomic "$NT_JOURNAL" "$NT_TMP/journal.out" 0600 || nt_die 1 "cannot write $NT_JOURNAL on $NT_HOSTNAME (read-only or full /var/lib?)"
  NT_JLAST=$NT_JOUT
  nt_step "journal $3"
}

# The files the staged plan puts in place: this run's artefacts.
nt_new_artefacts() {
  : > "$NT_TMP/arts.new"
  while IFS="$NT_TAB" read -r nt_op nt_dest _; do
    [ "$nt_op" = put ] && printf '%s\n' "$nt_dest" >> "$NT_TMP/arts.new"
  done < "$NT_TMP/files"
  if command -v kind_artefacts >/dev/null 2>&1; then kind_artefacts >> "$NT_TMP/arts.new"; fi
  return 0
}

nt_in_list() { # FILE LINE
  while IFS= read -r ntl_l; do [ "$ntl_l" = "$2" ] && return 0; done < "$1"
  return 1
}

nt_new_generation() {
  # A builtin read (one byte per read(2): each byte comes from a fresh random UUID; still a random token).
  NT_GEN=''
  { IFS= read -r NT_GEN < /proc/sys/kernel/random/uuid; } 2>/dev/null
  # 64 of its bits are plenty to tell two applies of one resource apart (every copy is stored in Pulumi state)
  case "$NT_GEN" in ''|*[!A-Za-z0-9-]*) NT_GEN="g$$-$(date +%s 2>/dev/null)" ;; *-*-*-*-*) NT_GEN=${NT_GEN%-*-*} ;; esac
}

# ---------------------------------------------------------------------------------------- verify gate (issue #34)
# Plan lines "@verify-soak SECONDS" (1..900) and "@verify-max-increase NAME LIMIT" / "@verify-max-level NAME LIMIT"
# (NAME as the host reads it: provider/counters/gate.ts). The names are read before the first change (preflight: a
# name this host cannot read is a problem, nothing changes), right after the change (a counter the change reset, such
# as a NIC's statistics after a channel change, is measured from there), and after the soak, before any file is
# committed: a limit exceeded rolls back every change of the run (nt_die) and the message holds the table.
# Readings: one awk per reading (provider/host/sh/counters.sh), `ethtool -S` per gated interface, one sleep.
nt_gate_directive() { # NAME VALUE; 1 when malformed
  case $1 in
    verify-soak)
      case $2 in [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) [ "$2" -le 900 ] || return 1 ;; *) return 1 ;; esac
      NT_GATE_SOAK=$2 ;;
    verify-max-increase | verify-max-level)
      ntg_n=${2%% *}; ntg_l=${2#* }
      case $ntg_n in '' | *[!A-Za-z0-9_.:@-]*) return 1 ;; esac
      case $ntg_l in '' | .* | *. | *[!0-9.]* | *.*.*) return 1 ;; esac
      case "$NT_NL$NT_GATE_SPEC" in *"$NT_NL$ntg_n$NT_TAB"*) return 1 ;; esac
      nt_counter_files "$ntg_n" || return 1
      # shellcheck disable=SC2153 # NT_CF is set by nt_counter_files (counters.sh, generated)
      for ntg_f in $NT_CF; do case " $NT_GATE_FILES " in *" $ntg_f "*) ;; *) NT_GATE_FILES="$NT_GATE_FILES $ntg_f" ;; esac; done
      case $ntg_n in ethtool.*.?*)
        ntg_i=${ntg_n#ethtool.}; ntg_i=${ntg_i%%.*}
        case " $NT_GATE_IFS " in *" $ntg_i "*) ;; *) NT_GATE_IFS="$NT_GATE_IFS $ntg_i" ;; esac ;;
        ethtool.*) return 1 ;;
      esac
      ntg_c=increase; [ "$1" = verify-max-level ] && ntg_c=level
      NT_GATE_SPEC=$NT_GATE_SPEC$ntg_n$NT_TAB$ntg_c$NT_TAB$ntg_l$NT_NL ;;
    *) return 1 ;;
  esac
}
nt_gate_read() { # before|post|after: NT_GR = the extractor's lines
  set -- -v phase="$1" -v spec="$NT_TMP/gate.spec" -v before="$NT_TMP/gate.before" -v post="$NT_TMP/gate.post" "$NT_COUNTERS_AWK" "$NT_TMP/gate.spec"
  [ "$2" = phase=after ] && set -- "$@" "$NT_TMP/gate.before" "$NT_TMP/gate.post"
  for ntg_f in $NT_GATE_FILES; do [ -r "$ntg_f" ] && set -- "$@" "$ntg_f"; done
  if [ -n "$NT_GATE_IFS" ]; then
    NT_GR=$(for ntg_i in $NT_GATE_IFS; do printf '@@counters ethtool %s\n' "$ntg_i"; ethtool -S "$ntg_i" 2>/dev/null; done | awk "$@" -)
  else
    NT_GR=$(awk "$@")
  fi
}
# nt_gate_values PHASE: the "v" lines of NT_GR into $NT_TMP/gate.PHASE (name<TAB>value); NT_GM = the "m" lines' names
# with their close names, "; "-separated
nt_gate_values() {
  ntg_v=''; NT_GM=''
  nt_ifs=$IFS; IFS=$NT_NL; set -f
  for ntg_l in $NT_GR; do IFS=$nt_ifs; set +f
    case $ntg_l in
      v"$NT_TAB"*) ntg_v=$ntg_v${ntg_l#v"$NT_TAB"}$NT_NL ;;
      m"$NT_TAB"*) ntg_l=${ntg_l#m"$NT_TAB"}; ntg_n=${ntg_l%%"$NT_TAB"*}; ntg_c=${ntg_l#*"$NT_TAB"}
        nt_counter_files "$ntg_n"
        case $ntg_n in
          ethtool.*) ntg_i=${ntg_n#ethtool.}; ntg_i=${ntg_i%%.*}; ntg_w="\`ethtool -S $ntg_i\` lists no such statistic (the driver's names differ${NT_GATE_IFS:+; is ethtool installed?})" ;;
          *) ntg_w="not in $NT_CF of this kernel ($(uname -r))" ;;
        esac
        NT_GM="$NT_GM $ntg_n cannot be read on $NT_HOSTNAME: $ntg_w${ntg_c:+; close names here: $ntg_c};" ;;
    esac
  done; IFS=$nt_ifs; set +f
  printf '%s' "$ntg_v" > "$NT_TMP/gate.$1" || nt_tmp_full
}
nt_gate_before() {
  printf '%s' "$NT_GATE_SPEC" > "$NT_TMP/gate.spec" || nt_tmp_full "; nothing was changed"
  nt_gate_read before
  nt_gate_values before
  [ -z "$NT_GM" ] || nt_problem "verify:${NT_GM%;}. Fix: name what this host has (pulumi-net-tuning audit lists every counter it reads), or drop the name from verify"
}
nt_gate_soak() {
  NT_GATE_REPORT="verify${NT_TAB}soak$NT_TAB$NT_GATE_SOAK$NT_NL"
  if [ -z "$NT_CHANGED" ]; then
    # nothing changed on the host: nothing to soak, nothing to roll back
    NT_GATE_REPORT="verify${NT_TAB}soak${NT_TAB}0${NT_NL}verify${NT_TAB}verdict${NT_TAB}skipped$NT_NL"
    nt_ifs=$IFS; IFS=$NT_NL; set -f
    for ntg_l in $NT_GATE_SPEC; do IFS=$nt_ifs; set +f
      ntg_n=${ntg_l%%"$NT_TAB"*}; ntg_c=${ntg_l#*"$NT_TAB"}; ntg_m=${ntg_c#*"$NT_TAB"}; ntg_c=${ntg_c%%"$NT_TAB"*}
      nt_lookup "$NT_TMP/gate.before" "$ntg_n"
      NT_GATE_REPORT="${NT_GATE_REPORT}verify${NT_TAB}r$NT_TAB$ntg_n$NT_TAB$ntg_c$NT_TAB$NT_FOUND$NT_TAB$NT_FOUND$NT_TAB-$NT_TAB$ntg_m$NT_TAB-${NT_TAB}ok$NT_NL"
    done; IFS=$nt_ifs; set +f
    return 0
  fi
  nt_gate_read post
  nt_gate_values post
  # lock waiters wait for the soak too (nt_lock); removed by nt_cleanup
  printf '%s %s\n' "$$" "$NT_GATE_SOAK" > /run/pulumi-net-tuning.soak 2>/dev/null && NT_SOAKMARK=/run/pulumi-net-tuning.soak
  # in the background and waited for: a TERM or INT interrupts the wait at once (and rolls back), not after the sleep
  sleep "$NT_GATE_SOAK" &
  NT_SLEEP=$!
  wait "$NT_SLEEP"
  NT_SLEEP=''
  nt_gate_read after
  ntg_bad=''
  nt_ifs=$IFS; IFS=$NT_NL; set -f
  for ntg_l in $NT_GR; do IFS=$nt_ifs; set +f
    case $ntg_l in r"$NT_TAB"*"${NT_TAB}exceeded") ntg_bad=1 ;; r"$NT_TAB"*) ;; *) continue ;; esac
    NT_GATE_REPORT="${NT_GATE_REPORT}verify$NT_TAB$ntg_l$NT_NL"
  done; IFS=$nt_ifs; set +f
  if [ -z "$ntg_bad" ]; then NT_GATE_REPORT="${NT_GATE_REPORT}verify${NT_TAB}verdict${NT_TAB}pass$NT_NL"; return 0; fi
  nt_gate_fail
}
# The gate's verdict "exceeded" (the failure path only: its printf substitutions fork): a table of every name, then the
# rollback of every change of the run, as nt_die does, naming what it put back (each read back); no file was committed.
nt_gate_fail() {
  ntg_bad=''; ntg_t=''
  nt_ifs=$IFS; IFS=$NT_NL; set -f
  for ntg_l in $NT_GR; do IFS=$nt_ifs; set +f
    case $ntg_l in r"$NT_TAB"*) ;; *) continue ;; esac
    # r name class before post after limit change verdict (no empty field: awk prints "-")
    IFS=$NT_TAB
    # shellcheck disable=SC2086 # split on tabs on purpose (globbing is off)
    set -- $ntg_l
    IFS=$nt_ifs
    if [ "$3" = level ]; then ntg_m=$7; ntg_w="is at $6 (limit $7)"; else ntg_m=+$7; ntg_w="rose by $8 (limit +$7)"; fi
    [ "$6" = - ] && ntg_w="could not be read after the change"
    [ "$3" != level ] && [ "$5" != "$4" ] && [ "$6" != - ] && ntg_w="$ntg_w, counted from $5 (reset by the change)"
    ntg_t="$ntg_t$NT_NL$(printf '  %-32s %14s %14s %14s  %s' "$2" "$4" "$6" "$ntg_m" "$9")"
    [ "$9" = exceeded ] && ntg_bad="$ntg_bad $2 $ntg_w;"
  done; IFS=$nt_ifs; set +f
  nt_rollback
  nt_outcome
  [ -n "$NT_UNDO_FAILED" ] || NT_OUTCOME="the change was rolled back on $NT_HOSTNAME:${NT_UNDONE%,} (each read back); nothing was persisted (no file written, the journal as before)"
  nt_msg "verify gate failed on $NT_HOSTNAME after a soak of $NT_GATE_SOAK s:${ntg_bad%;}$NT_NL$(printf '  %-32s %14s %14s %14s  %s' name before after limit verdict)$ntg_t$NT_NL$NT_OUTCOME"
  nt_exit 1 rolledBack
}
nt_gate_cleanup() { # the soak's sleep (interrupted) and lock marker
  [ -z "$NT_SLEEP" ] || kill "$NT_SLEEP" 2>/dev/null
  [ -z "$NT_SOAKMARK" ] || rm -f "$NT_SOAKMARK"
  NT_SLEEP='' NT_SOAKMARK=''
}

# ---------------------------------------------------------------------------------------- confirmed apply (issue #34)
# Plan line "@confirm SECONDS" (1..86400) or "@confirm off"; none: off, except for the nic kind, where a change of a
# channel, ring or feature arms a revert of max(120, soak + 150) s (components/confirm.ts writes the line when the
# connection's dial budget needs more). A run that arms (it changes a runtime value):
#   1. after the journal of originals and before the first change: the pending directory $NT_STATE/<owner id>.pending
#      (root's, 0700): "armed" (token, deadline, plan sum, repair token, timeout, generation), "plan" (this run's plan, for the
#      confirm), "journal.before" or "journal.none" (the journal as it was before the first unconfirmed run),
#      "changes" (key<TAB>value before the change, appended before each change), "by.TOKEN" (pid of the reverter, or
#      the systemd timer's unit); then the reverter: a transient systemd timer (systemd-run --on-active) where systemd
#      runs, else a detached process (setsid, or nohup) that sleeps until the deadline. Neither has a value on its
#      command line: the engine file, the kind and "revert:<owner id>:<token>";
#   2. changes the values (the verify gate soaks here);
#   3. writes no file, no final journal, no converged record: its report says "confirm<TAB>token<TAB>deadline" and
#      the confirm (a second session, the -restore child's create: the engine with operation "confirm:<id>:<token>")
#      runs the saved plan again under the lock (no value changes), commits the files, the journal and the record,
#      and disarms the reverter.
# The reverter, at the deadline, under the lock, if the token is still armed: sets each changed key back (newest
# first, read back), puts the journal back as it was before, writes "$NT_STATE/<owner id>.reverted" (root's, 0600:
# "net-tuning-reverted v1<TAB>time<TAB>plan sum<TAB>token<TAB>keys not put back") and removes the pending directory.
# An apply of the same plan sum is then refused (exit 7, "held") until the plan changes; the live read reports it.
# A second apply while armed keeps the pending directory (its originals and journal.before) and re-arms with a new
# token; a run that commits (confirm or no revert needed) and a restore disarm it.
nt_confirm_directive() { # VALUE; 1 when malformed
  case $1 in
    off) NT_CONFIRM=off ;;
    [1-9] | [1-9][0-9] | [1-9][0-9][0-9] | [1-9][0-9][0-9][0-9] | [1-9][0-9][0-9][0-9][0-9]) [ "$1" -le 86400 ] || return 1; NT_CONFIRM=$1 ;;
    *) return 1 ;;
  esac
}
# nt_confirm_needed: 0 when this run arms a revert (NT_CTIME = its timeout, s): a value it changes (for the nic
# kind's default: a channel, ring or feature)
nt_confirm_needed() {
  NT_CTIME=''
  [ -z "$NT_CONFIRMING" ] || return 1
  case $NT_CONFIRM in
    off) return 1 ;;
    '') [ "$NT_KIND" = nic ] || return 1
      NT_CTIME=$((${NT_GATE_SOAK:-0} + 150)); [ "$NT_CTIME" -ge 120 ] || NT_CTIME=120 ;;
    *) NT_CTIME=$NT_CONFIRM ;;
  esac
  ntc_r=1
  nt_lines desired; nt_ifs=$IFS; IFS=$NT_NL; set -f
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    [ -n "$NT_CONFIRM" ] || case $nt_k in channel.* | */channel.* | ring.* | */ring.* | feature.* | */feature.*) ;; *) continue ;; esac
    nt_get live "$nt_k"; kind_expect "$nt_k" "$nt_v"
    nt_same "$NT_EXPECT" "$NT_FOUND" "$nt_k" || { ntc_r=0; break; }
  done; IFS=$nt_ifs; set +f
  [ "$ntc_r" = 1 ] && [ -n "$NT_CONFIRM" ] || return "$ntc_r"
  # the keys this resource no longer declares go back to their originals: a change too
  nt_lines journal.new; nt_ifs=$IFS; IFS=$NT_NL; set -f
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    nt_get desired "$nt_k" && continue
    nt_get live "$nt_k"; kind_expect "$nt_k" "$nt_v"
    nt_same "$NT_EXPECT" "$NT_FOUND" "$nt_k" || { ntc_r=0; break; }
  done; IFS=$nt_ifs; set +f
  return "$ntc_r"
}
nt_confirm_arm() {
  NT_PEND=$NT_STATE/$NT_OWNER_ID.pending
  [ -f "$0" ] || nt_die 1 "cannot arm a revert on $NT_HOSTNAME: the engine is not run from its file; nothing was changed"
  umask 077 # every file of the pending directory is root's alone (the plan may hold secret values)
  if [ -d "$NT_PEND" ] && [ ! -L "$NT_PEND" ] && [ -f "$NT_PEND/changes" ]; then
    # an earlier run of this resource is still unconfirmed: its originals and journal stay, its reverter goes
    nt_confirm_stop
  else
    rm -rf "$NT_PEND" 2>/dev/null
    mkdir "$NT_PEND" || nt_die 1 "cannot create $NT_PEND on $NT_HOSTNAME; nothing was changed"
    NT_PEND_NEW=1
    ntc_j=; [ -f "$NT_TMP/journal.before" ] && ntc_j=1
    { if [ -n "$ntc_j" ]; then cp -p "$NT_TMP/journal.before" "$NT_PEND/journal.before"; else : > "$NT_PEND/journal.none"; fi; } ||
      nt_die 1 "cannot write to $NT_PEND on $NT_HOSTNAME; nothing was changed"
    : > "$NT_PEND/changes" || nt_die 1 "cannot write to $NT_PEND on $NT_HOSTNAME; nothing was changed"
  fi
  NT_CTOKEN=''
  { IFS= read -r NT_CTOKEN < /proc/sys/kernel/random/uuid; } 2>/dev/null
  case $NT_CTOKEN in *-*-*-*-*) ;; *) NT_CTOKEN="$$-$(date +%s%N)" ;; esac
  NT_CTOKEN=$(printf %s "$NT_CTOKEN" | tr -dc 0-9a-f) || :
  [ -n "$NT_CTOKEN" ] || NT_CTOKEN=$$
  ntc_now=$(date +%s) || nt_die 1 "cannot read the clock on $NT_HOSTNAME; nothing was changed"
  NT_CDEADLINE=$((ntc_now + NT_CTIME))
  ntc_sum=${NT_PLAN_SUM:--}
  { cp "$NT_TMP/plan" "$NT_PEND/plan.new" && mv -f "$NT_PEND/plan.new" "$NT_PEND/plan" &&
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$NT_CTOKEN" "$NT_CDEADLINE" "$ntc_sum" "${NT_REPAIR:-0}" "$NT_CTIME" "$NT_GEN" > "$NT_PEND/armed.new" &&
      mv -f "$NT_PEND/armed.new" "$NT_PEND/armed"; } || nt_die 1 "cannot write to $NT_PEND on $NT_HOSTNAME; nothing was changed"
  nt_confirm_spawn
  umask 022
  NT_ARMED=1
  nt_step "arm revert"
}
# Starts the reverter of token NT_CTOKEN (by.TOKEN names it for nt_confirm_stop).
nt_confirm_spawn() {
  ntc_op=revert:$NT_OWNER_ID:$NT_CTOKEN
  if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1 && [ -z "${NT_CONFIRM_NO_SYSTEMD:-}" ]; then
    ntc_u=net-tuning-revert-$NT_OWNER_ID-$NT_CTOKEN
    # due at the deadline the report names (counted from now, not from the arming second: the timer fired up to 2.1 s
    # late with the timeout itself and a 1 s accuracy, tests/vm/confirm.vm)
    ntc_in=$((NT_CDEADLINE - $(date +%s)))
    [ "$ntc_in" -gt 0 ] || ntc_in=1
    if systemd-run --quiet --unit="$ntc_u" --on-active="${ntc_in}s" --timer-property=AccuracySec=100ms /bin/sh "$0" "$NT_KIND" "$ntc_op" > /dev/null 2>&1 9>&-; then
      printf 'timer\t%s\n' "$ntc_u" > "$NT_PEND/by.$NT_CTOKEN" || nt_die 1 "cannot write to $NT_PEND on $NT_HOSTNAME"
      return 0
    fi
  fi
  # detached: its own session (setsid: no SIGHUP when the SSH session ends; it ignores HUP anyway), no descriptor of
  # this session (stdin/stdout/stderr, the lock's fd 9), so the session can end. Two of them, each in a session of its
  # own: while the confirm is awaited they are the host's only program of this apply, and a SIGKILL of one (an OOM
  # kill, an operator's kill) leaves the other. The late one is due 1 s after the deadline: it finds the token still
  # armed only when the first did not revert (nt_revert_main), and the one that reverts stops the other.
  for ntc_late in '' 1; do
    if command -v setsid > /dev/null 2>&1; then
      NT_REVERT_LATE=$ntc_late setsid /bin/sh "$0" "$NT_KIND" "$ntc_op" < /dev/null > /dev/null 2>&1 9>&- &
      ntc_how=group
    else
      NT_REVERT_LATE=$ntc_late nohup /bin/sh "$0" "$NT_KIND" "$ntc_op" < /dev/null > /dev/null 2>&1 9>&- &
      ntc_how=pid
    fi
    printf '%s\t%s\n' "$ntc_how" "$!" > "$NT_PEND/by.$NT_CTOKEN${ntc_late:+.late}" || nt_die 1 "cannot write to $NT_PEND on $NT_HOSTNAME"
  done
}
# Stops every reverter of NT_PEND (by.* files; a reverter that fires anyway finds its token no longer armed).
nt_confirm_stop() {
  for ntc_f in "$NT_PEND"/by.*; do
    [ -f "$ntc_f" ] || continue
    IFS="$NT_TAB" read -r ntc_how ntc_what < "$ntc_f" 2>/dev/null || :
    case $ntc_how:$ntc_what in
      timer:net-tuning-revert-*) systemctl stop "$ntc_what.timer" > /dev/null 2>&1 || : ;;
      group:[1-9]*) case $ntc_what in *[!0-9]*) ;; *) kill -TERM "-$ntc_what" 2>/dev/null || kill -TERM "$ntc_what" 2>/dev/null ;; esac ;;
      pid:[1-9]*) case $ntc_what in *[!0-9]*) ;; *) kill -TERM "$ntc_what" 2>/dev/null ;; esac ;;
    esac
    rm -f "$ntc_f"
  done
  return 0
}
# After a commit (confirm, or a run that needs none) or a restore: no revert any more.
nt_confirm_drop() {
  NT_PEND=$NT_STATE/$NT_OWNER_ID.pending
  [ -d "$NT_PEND" ] || return 0
  rm -f "$NT_PEND/armed" # a reverter waiting for the lock finds nothing armed
  nt_confirm_stop
  rm -rf "$NT_PEND" 2>/dev/null || nt_warn "could not remove $NT_PEND on $NT_HOSTNAME"
  return 0
}
# A rollback of a run that armed: a pending directory this run made goes with its reverter.
nt_confirm_rollback() {
  [ "${NT_ARMED:-0}" = 1 ] || return 0
  NT_ARMED=0
  [ "${NT_PEND_NEW:-0}" = 1 ] || return 0
  nt_confirm_drop
}
nt_utc() { date -u -d "@$1" '+%Y-%m-%dT%H:%M:%SZ' 2>/dev/null || printf '%s s after 1970 UTC' "$1"; }
# Before any change: a plan whose run was reverted is held (exit 7) until it changes; the record of another plan goes.
nt_confirm_hold() {
  NT_REVERTED=$NT_STATE/$NT_OWNER_ID.reverted
  [ -f "$NT_REVERTED" ] || return 0
  ntc_t='' ntc_s=''
  IFS="$NT_TAB" read -r _ ntc_t ntc_s _ < "$NT_REVERTED" 2>/dev/null || :
  if [ -n "$NT_CONFIRMING" ]; then return 0; fi
  if [ "$ntc_s" = "${NT_PLAN_SUM:-}" ]; then
    nt_die 7 "held on $NT_HOSTNAME: this plan was applied without a confirm and the host reverted it at $(nt_utc "$ntc_t"); nothing was changed. Change the plan to apply again (pulumi-net-tuning does not retry a plan that lost its host's connection), or remove $NT_REVERTED on the host to try this plan again"
  fi
  rm -f "$NT_REVERTED"
}
# The confirm (NT_CONFIRMING = the token), under the lock: the token must be armed.
nt_confirm_check() {
  NT_PEND=$NT_STATE/$NT_OWNER_ID.pending
  ntc_t='' ntc_d='' ntc_s='' ntc_r='' ntc_g=''
  [ -f "$NT_PEND/armed" ] && IFS="$NT_TAB" read -r ntc_t ntc_d ntc_s ntc_r _ ntc_g < "$NT_PEND/armed"
  # the apply's repair token and generation: the confirm commits what the apply reported (a create that took over a
  # journal of an uncommitted generation started a new one; its -restore plan names it)
  case $ntc_g in *[!A-Za-z0-9-]*) ntc_g='' ;; esac
  [ -n "$ntc_t" ] && [ "$ntc_t" = "$NT_CONFIRMING" ] && { NT_REPAIR=$ntc_r; NT_CONFIRM_GEN=$ntc_g; return 0; }
  ntc_w='' ntc_k=''
  [ -f "$NT_STATE/$NT_OWNER_ID.reverted" ] && IFS="$NT_TAB" read -r _ ntc_w _ ntc_k _ < "$NT_STATE/$NT_OWNER_ID.reverted"
  if [ -n "$ntc_k" ] && [ "$ntc_k" = "$NT_CONFIRMING" ]; then
    nt_die 7 "not confirmed: the host $NT_HOSTNAME reverted this apply at $(nt_utc "$ntc_w") (its confirm came too late); the plan is held until it changes"
  fi
  # an earlier apply's token (a later apply re-armed or committed, or the -restore child's inputs changed otherwise, e.g.
  # a package upgrade): nothing to confirm
  nt_msg "nothing to confirm on $NT_HOSTNAME: the apply of token $NT_CONFIRMING is no longer armed (a later apply of this resource took over)"
  nt_cleanup
  exit 0
}

# The reverter (engine operation "revert:<owner id>:<token>", started by nt_confirm_spawn; never from a session).
nt_revert_main() {
  ntr_id=$1; ntr_tok=$2
  case $ntr_id in '' | *[!A-Za-z0-9._-]*) exit 5 ;; esac
  case $ntr_tok in '' | *[!0-9a-f-]*) exit 5 ;; esac
  trap '' HUP PIPE
  NT_STATE=$NT_ROOT/$NT_ENGINE_KIND
  NT_PEND=$NT_STATE/$ntr_id.pending
  ntr_t='' ntr_d='' ntr_s=''
  { IFS="$NT_TAB" read -r ntr_t ntr_d ntr_s _ < "$NT_PEND/armed"; } 2>/dev/null
  [ "$ntr_t" = "$ntr_tok" ] || exit 0
  case $ntr_d in '' | *[!0-9]*) exit 5 ;; esac
  # the process writes its own pid (setsid may fork), for nt_confirm_stop; the late one of two detached reverters
  # (nt_confirm_spawn) has a file of its own and is due 1 s later
  ntr_by=$NT_PEND/by.$ntr_tok${NT_REVERT_LATE:+.late}
  [ -z "${NT_REVERT_LATE:-}" ] || ntr_d=$((ntr_d + 1))
  [ -f "$ntr_by" ] && { IFS="$NT_TAB" read -r ntr_how _ < "$ntr_by"; } 2>/dev/null &&
    [ "${ntr_how:-}" = group ] && printf 'group\t%s\n' "$$" > "$ntr_by"
  ntr_i=0
  while ntr_now=$(date +%s) && [ "$ntr_now" -lt "$ntr_d" ] && [ "$ntr_i" -lt 50 ]; do
    sleep $((ntr_d - ntr_now)); ntr_i=$((ntr_i + 1))
  done
  # confirmed, or reverted by the other reverter, meanwhile: nothing to do
  ntr_t=''
  { IFS="$NT_TAB" read -r ntr_t _ < "$NT_PEND/armed"; } 2>/dev/null
  [ "$ntr_t" = "$ntr_tok" ] || exit 0
  nt_init
  NT_GATE_SPEC='' NT_GATE_SOAK='' NT_GATE_FILES='' NT_GATE_IFS='' NT_CONFIRM='' NT_CONFIRMING=''
  NT_PHASE=revert
  nt_parse_plan < "$NT_PEND/plan" 2>/dev/null
  [ "$NT_OWNER_ID" = "$ntr_id" ] || nt_die 5 "revert: the pending plan of $ntr_id names another owner"
  # a confirm or a soak may hold the lock: wait for them (20 min at most)
  NT_LOCK_WAIT=2400
  nt_lock
  ntr_t=''
  { IFS="$NT_TAB" read -r ntr_t _ < "$NT_PEND/armed"; } 2>/dev/null
  if [ "$ntr_t" != "$ntr_tok" ]; then nt_cleanup; exit 0; fi # confirmed (or re-armed) meanwhile
  if [ ! -e "$NT_JOURNAL" ]; then rm -rf "$NT_PEND"; nt_cleanup; exit 0; fi # destroyed meanwhile
  ntr_rev=''
  while IFS= read -r ntr_l; do ntr_rev=$ntr_l$NT_NL$ntr_rev; done < "$NT_PEND/changes"
  ntr_failed=''
  nt_ifs=$IFS; IFS=$NT_NL; set -f
  for ntr_l in $ntr_rev; do IFS=$nt_ifs; set +f
    nt_k=${ntr_l%%"$NT_TAB"*}; nt_v=${ntr_l#*"$NT_TAB"}
    kind_expect "$nt_k" "$nt_v"
    if kind_get "$nt_k" && nt_same "$NT_EXPECT" "$NT_GOT" "$nt_k"; then continue; fi
    if kind_set "$nt_k" "$nt_v" && kind_get "$nt_k" && nt_same "$NT_EXPECT" "$NT_GOT" "$nt_k"; then continue; fi
    ntr_failed="$ntr_failed $nt_k"
  done; IFS=$nt_ifs; set +f
  if [ -f "$NT_PEND/journal.before" ]; then
    cp -p "$NT_PEND/journal.before" "$NT_JOURNAL.net-tuning-undo" && mv -f "$NT_JOURNAL.net-tuning-undo" "$NT_JOURNAL" || ntr_failed="$ntr_failed journal"
  elif [ -z "$ntr_failed" ]; then
    rm -f "$NT_JOURNAL" "${NT_JOURNAL%.orig}.owner"
  fi
  { umask 077; printf 'net-tuning-reverted v1\t%s\t%s\t%s\t%s\n' "$(date +%s)" "$ntr_s" "$ntr_tok" "${ntr_failed# }" > "$NT_STATE/$ntr_id.reverted"; umask 022; }
  # the other reverter, if any, has nothing left to do (this one's own file first: nt_confirm_stop stops every other)
  rm -f "$ntr_by"; nt_confirm_stop
  rm -rf "$NT_PEND"
  nt_step "reverted"
  nt_cleanup
  exit 0
}

# ---------------------------------------------------------------------------------------- apply
# One setting: change only if it differs, then read it back. Records the change for rollback first.
nt_apply_one() { # KEY VALUE LIVE
  kind_expect "$1" "$2"
  if nt_same "$NT_EXPECT" "$3" "$1"; then nt_got "$1" "$3"; return 0; fi
  NT_CHANGED=$NT_CHANGED$1$NT_TAB$3$NT_NL # in memory only: the rollback reads it (nt_rollback)
  # armed: the reverter's copy, on disk before the change
  [ "$NT_ARMED" = 0 ] || printf '%s\t%s\n' "$1" "$3" >> "$NT_PEND/changes" || nt_die 1 "cannot write to $NT_PEND on $NT_HOSTNAME before changing $1"
  if ! kind_set "$1" "$2"; then
    # First pass: a refusal may depend on another key of this run (ip_local_port_range needs
    # ip_unprivileged_port_start lowered first): retry it once after the others.
    if [ "${NT_DEFER:-0}" = 1 ]; then printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$NT_TMP/deferred" || nt_tmp_full; return 0; fi
    nt_step "set $1 (refused)"
    NT_FIX="give $1 a value this host's kernel or driver accepts, or leave it out"
    nt_die 1 "$1 = '$2' was refused on $NT_HOSTNAME: $NT_ERR"
  fi
  nt_step "set $1"
  if [ "$NT_BATCH" = 1 ]; then nt_verify_later "$1" "$2" "$NT_EXPECT"; return 0; fi
  kind_get "$1" || nt_die 1 "$1 cannot be read back on $NT_HOSTNAME after writing '$2'"
  nt_same "$NT_EXPECT" "$NT_GOT" "$1" || nt_die 1 "$1 = '$2' did not stick on $NT_HOSTNAME: read back '$NT_GOT' (expected '$NT_EXPECT')"
  nt_got "$1" "$NT_GOT"
}
# nt_got KEY VALUE: the value read back for the report ($NT_TMP/got, its index kept in step; a value with a tab at
# either end, which the read builtin would strip, drops the index: nt_lookup then reads the file). The lines are
# appended to the file in one go before the report (NT_GOTS): nothing reads it before.
nt_got() {
  NT_GOTS=$NT_GOTS$1$NT_TAB$2$NT_NL
  case $2 in "$NT_TAB"* | *"$NT_TAB") nt_index_drop got ;; *) nt_index_put got "$1" "$2" ;; esac
}

# nt_verify_later KEY VALUE EXPECT: queued for the batch read-back (values with their tabs turned into spaces): the
# lines of $NT_TMP/verify in NT_VF (written in one go before the batch); NT_VPLAIN=0 once a line has an empty field
# (which the read builtin would skip: the lines are then read back from the file).
nt_verify_later() {
  nt_norm "$2"; nt_vv=$NT_NORM
  nt_norm "$3"
  NT_VF=$NT_VF$1$NT_TAB$nt_vv$NT_TAB$NT_NORM$NT_NL
  [ -n "$nt_vv" ] && [ -n "$NT_NORM" ] || NT_VPLAIN=0
}

# Kinds with kind_get_many (one process reads every value) read all changed values back at once, after the writes.
nt_verify_batch() {
  [ -n "$NT_VF" ] || return 0
  printf '%s' "$NT_VF" >> "$NT_TMP/verify" || nt_tmp_full
  kind_get_many "$NT_TMP/verify" "$NT_TMP/verify.got"
  nt_index_text verify.got "$NT_GM"
  if [ "${NT_VPLAIN:-0}" = 1 ]; then
    nt_ifs=$IFS; IFS=$NT_NL; set -f
    for nt_l in $NT_VF; do IFS=$nt_ifs; set +f
      nt_k=${nt_l%%"$NT_TAB"*}; nt_e=${nt_l#*"$NT_TAB"}; nt_v=${nt_e%%"$NT_TAB"*}; nt_e=${nt_e#*"$NT_TAB"}
      nt_verify_one
    done; IFS=$nt_ifs; set +f
  else
    while IFS="$NT_TAB" read -r nt_k nt_v nt_e; do nt_verify_one; done < "$NT_TMP/verify"
  fi
}
nt_verify_one() { # nt_k nt_v nt_e: a line of $NT_TMP/verify
  nt_get verify.got "$nt_k" || nt_die 1 "$nt_k cannot be read back on $NT_HOSTNAME after writing '$nt_v'"
  nt_same "$nt_e" "$NT_FOUND" "$nt_k" || nt_die 1 "$nt_k = '$nt_v' did not stick on $NT_HOSTNAME: read back '$NT_FOUND' (expected '$nt_e')"
  nt_got "$nt_k" "$NT_FOUND"
}

# Live values of the keys in $NT_TMP/keys into $NT_TMP/live (unreadable keys are absent).
nt_snapshot() {
  {
    nt_lines desired; printf '%s' "$NT_LINES"
    nt_lines j.keys; printf '%s' "$NT_LINES" # "key<TAB>value" lines as nt_journal_load printed them
    if command -v kind_snapshot_keys >/dev/null 2>&1; then kind_snapshot_keys; fi
  } > "$NT_TMP/keys"
  : > "$NT_TMP/live"
  nt_index_drop live
  # a batch snapshot is final until the next snapshot: indexed now (the preflight looks values up in it)
  if [ "$NT_BATCH" = 1 ]; then kind_get_many "$NT_TMP/keys" "$NT_TMP/live"; nt_index_text live "$NT_GM"; return 0; fi
  while IFS="$NT_TAB" read -r nt_k _; do
    nt_get live "$nt_k" && continue
    kind_get "$nt_k" && printf '%s\t%s\n' "$nt_k" "$NT_GOT" >> "$NT_TMP/live"
  done < "$NT_TMP/keys"
  return 0
}

nt_apply_main() {
  # The verify gate (issue #34), from "@verify-*" plan lines (nt_gate_directive; empty: no gate, nothing of it runs):
  # SPEC "name<TAB>increase|level<TAB>limit" lines, FILES the sources awk reads (counters.sh nt_counter_files), IFS
  # the interfaces whose `ethtool -S` is read, REPORT the report's "verify" lines; NT_UNDONE what a rollback put back
  # (read back); NT_SLEEP the soak's sleep while it runs; NT_SOAKMARK /run/pulumi-net-tuning.soak while this run soaks.
  NT_GATE_SPEC='' NT_GATE_SOAK='' NT_GATE_FILES='' NT_GATE_IFS='' NT_GATE_REPORT='' NT_UNDONE='' NT_SLEEP='' NT_SOAKMARK=''
  # the confirmed apply: NT_CONFIRM from "@confirm" (nt_confirm_directive), NT_ARMED once this run armed a revert
  NT_CONFIRM='' NT_ARMED=0 NT_PEND_NEW=0 NT_CTOKEN='' NT_CDEADLINE=''
  NT_ON_FAILURE='' # "report" inside a rollout (nt_tolerate)
  nt_init
  nt_index desired # empty here, kept in step by nt_want while the plan is read (no read of the file)
  nt_read_stdin framed
  [ -z "$NT_GATE_SPEC$NT_GATE_SOAK" ] || { [ -n "$NT_GATE_SPEC" ] && [ -n "$NT_GATE_SOAK" ]; } || nt_die 5 "a verify gate needs @verify-soak and a limit"
  # the confirm runs the plan again after the apply's gate passed: no second soak
  [ -z "$NT_CONFIRMING" ] || NT_GATE_SPEC='' NT_GATE_SOAK=''
  nt_index readback # the read-back forms (sysctl @readback lines; final once the plan is read)
  nt_lock
  NT_PHASE=preflight
  NT_BATCH=0
  if command -v kind_get_many >/dev/null 2>&1; then NT_BATCH=1; fi
  if command -v kind_same >/dev/null 2>&1; then NT_KS=1; fi
  nt_journal_load || nt_die 1 "the journal $NT_JOURNAL on $NT_HOSTNAME is unreadable or belongs to another owner id; nothing was changed: move it away only if you know its originals are recorded elsewhere"
  nt_index j.keys # final (printed by nt_journal_load as key<TAB>value, the form nt_lines gives back)
  # An update means this resource was applied here before: without its journal (host rebuilt, /var/lib/pulumi-net-tuning
  # removed) the values found now may be its own, and recording them as originals would make a delete leave the host
  # tuned. The originals are in Pulumi state (the -restore child): the recovery restores them, then creates anew.
  # (a first apply that failed inside a rollout left its marker and nothing else: its next run, an update for Pulumi, is
  # that create again: nt_tolerate)
  # So is the update after a first apply whose confirm did not arrive: the reverter removed the journal it had made,
  # and left its record (<owner id>.reverted; nt_confirm_hold then holds the same plan, or lets a changed one go on)
  if [ "$NT_APPLY_MODE" = update ] && [ "$NT_J_FORMAT" = none ] && { [ -f "$NT_STATE/$NT_OWNER_ID.failed" ] || [ -f "$NT_STATE/$NT_OWNER_ID.reverted" ]; }; then NT_APPLY_MODE=create; fi
  if [ "$NT_APPLY_MODE" = update ] && [ "$NT_J_FORMAT" = none ]; then
    # the exact command that finds this resource's URN (provider/host/programs.ts urnLookup): the owner label is
    # project/stack/name, the type follows from the kind (after "::", or after "$" when it is a child of a component
    # of the user's); a name with other characters is named as such
    nt_c=${NT_OWNER#*/}; nt_c=${nt_c#*/}
    case $NT_KIND in sysctl) nt_t=NetTuning ;; *) nt_t=NicQueues ;; esac
    case $nt_c in *[!A-Za-z0-9._-]* | '') nt_c="<the URN of $nt_t $nt_c (pulumi stack --show-urns)>" ;;
      *) nt_c="\"\$(pulumi stack --show-urns|grep -o 'urn:pulumi:[^ ]*[:\$]net-tuning:index:$nt_t::$(printf %s "$nt_c" | sed 's/[.]/\\./g')\$')\"" ;;
    esac
    nt_die 2 "the journal of original values of this resource ($NT_JOURNAL) is missing on $NT_HOSTNAME although it was applied there before (host rebuilt, or /var/lib/pulumi-net-tuning removed): the values found now may be its own, so they are not recorded as originals; nothing was changed. Restore the originals kept in Pulumi state, then create it again: pulumi destroy --target $nt_c --target-dependents, then pulumi up"
  fi
  # a confirm: its token must still be armed; else a plan the host reverted is held
  if [ -n "$NT_CONFIRMING" ]; then nt_confirm_check; else nt_confirm_hold; fi
  # Snapshot: live values of every desired and every journalled key (a batch kind: before the preflight, which
  # uses it; others: after it, since their preflight resolves the desired settings).
  : > "$NT_TMP/got"; : > "$NT_TMP/verify"; nt_index got # kept in step by nt_got
  NT_GOTS=''; NT_VF=''; NT_VPLAIN=1; NT_CHANGED='' # the lines of got, verify and changed until written
  [ "$NT_BATCH" = 1 ] && nt_snapshot
  nt_secret_collect
  kind_preflight
  nt_check_owners
  [ -z "$NT_GATE_SPEC" ] || nt_gate_before # the first reading: before the first change, its names checked with the rest
  nt_problems_exit
  [ "$NT_BATCH" = 1 ] || { nt_snapshot; nt_secret_collect; }
  # final from here on; desired is indexed again only when a kind appended to it itself (nt_index_drop)
  case $NT_IXS in *" $NT_TMP/live:"*) ;; *) nt_index live ;; esac
  case $NT_IXS in *" $NT_TMP/desired:"*) ;; *) nt_index desired ;; esac
  # a value becomes an original (journal, report, Pulumi state) unless the journal holds one: it must be storable
  nt_unsafe=''
  nt_lines desired; nt_ifs=$IFS; IFS=$NT_NL; set -f
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    nt_get live "$nt_k" || nt_die 2 "$nt_k cannot be read on $NT_HOSTNAME; nothing was changed"
    # shellcheck disable=SC2254 # the kind's character set, a bracket expression on purpose
    case $NT_FOUND in *[!$NT_ORIG_CHARS]*) nt_v=$NT_FOUND; nt_get j.keys "$nt_k" || nt_unsafe="$nt_unsafe $nt_k = '$nt_v';" ;; esac
  done; IFS=$nt_ifs; set +f
  [ -z "$nt_unsafe" ] || nt_die 2 "the value on $NT_HOSTNAME cannot be kept as an original (Pulumi state stores only the characters [$NT_ORIG_CHARS]), so a delete could not restore it:${nt_unsafe%;}; nothing was changed: leave this setting out of this resource, or set it on the host to a value of those characters first"
  nt_lines j.keys; nt_ifs=$IFS; IFS=$NT_NL; set -f
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    nt_get live "$nt_k" || nt_die 2 "$nt_k (recorded in the journal) cannot be read on $NT_HOSTNAME; nothing was changed"
  done; IFS=$nt_ifs; set +f
  if [ "$NT_J_FORMAT" != none ]; then
    if ! cp -p "$NT_JOURNAL" "$NT_TMP/journal.before"; then
      nt_die 1 "cannot copy the journal $NT_JOURNAL to $NT_TMP on $NT_HOSTNAME (/tmp full?); nothing was changed"
    fi
  fi
  if [ "$NT_APPLY_MODE" = create ] || [ -z "$NT_J_GEN" ]; then nt_new_generation; else NT_GEN=$NT_J_GEN; fi
  [ -z "${NT_CONFIRM_GEN:-}" ] || NT_GEN=$NT_CONFIRM_GEN # a confirm: the apply's generation
  # taking over another committed generation: pending until the commit below (a new journal needs no marker)
  NT_JHEAD=$NT_GEN
  [ -n "$NT_J_GEN" ] && [ "$NT_GEN" != "$NT_J_GEN" ] && NT_JHEAD="pending:$NT_GEN$NT_TAB$NT_J_GEN"
  # The files this run persists, and the artefacts of earlier runs it no longer declares (renamed file, other
  # persistence or unit): removed in the same commit, restored if the run fails.
  kind_files
  nt_new_artefacts
  : > "$NT_TMP/arts.all"
  while IFS= read -r nt_a; do
    printf '%s\n' "$nt_a" >> "$NT_TMP/arts.all"
    nt_in_list "$NT_TMP/arts.new" "$nt_a" || kind_drop_artefact "$nt_a"
  done < "$NT_TMP/j.arts"
  while IFS= read -r nt_a; do nt_in_list "$NT_TMP/arts.all" "$nt_a" || printf '%s\n' "$nt_a" >> "$NT_TMP/arts.all"; done < "$NT_TMP/arts.new"
  # Journal first (originals of keys this resource has not touched before, every artefact that may exist), then the changes.
  NT_PHASE=apply
  { nt_lines j.keys; printf '%s' "$NT_LINES"; } > "$NT_TMP/journal.new" || nt_die 1 "cannot prepare the journal in $NT_TMP on $NT_HOSTNAME (/tmp full?)"
  nt_index_text journal.new "${NT_LINES%"$NT_NL"}" # the j.keys lines just written
  nt_lines desired; nt_ifs=$IFS; IFS=$NT_NL; set -f; nt_jt=''
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    nt_get journal.new "$nt_k" && continue
    nt_get live "$nt_k"
    nt_jt=$nt_jt$nt_k$NT_TAB$NT_FOUND$NT_NL # appended to the file after the loop (nothing reads it meanwhile)
    nt_index_put journal.new "$nt_k" "$NT_FOUND"
  done; IFS=$nt_ifs; set +f
  printf '%s' "$nt_jt" >> "$NT_TMP/journal.new" || nt_tmp_full
  if ! nt_file_is "$NT_OWNER$NT_NL" "${NT_JOURNAL%.orig}.owner"; then
    NT_JOURNAL_TOUCHED=1
    nt_write_owner "${NT_JOURNAL%.orig}.owner" || nt_die 1 "cannot write ${NT_JOURNAL%.orig}.owner on $NT_HOSTNAME (read-only or full /var/lib?)"
    nt_step "owner file"
  fi
  nt_journal_write "$NT_TMP/journal.new" "$NT_TMP/arts.all" "before the changes" lines # j.keys and live values: key<TAB>value
  # a confirmed apply arms its revert before the first change (nothing armed when no value changes)
  if nt_confirm_needed; then nt_confirm_arm; fi
  : > "$NT_TMP/deferred"
  NT_DEFER=1
  nt_lines desired; nt_ifs=$IFS; IFS=$NT_NL; set -f
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    nt_get live "$nt_k"
    nt_apply_one "$nt_k" "$nt_v" "$NT_FOUND"
  done; IFS=$nt_ifs; set +f
  NT_DEFER=0
  while IFS="$NT_TAB" read -r nt_k nt_v nt_live; do
    nt_apply_one "$nt_k" "$nt_v" "$nt_live"
  done < "$NT_TMP/deferred"
  # Keys this resource no longer declares go back to their originals.
  : > "$NT_TMP/journal.final"; nt_index journal.final # kept in step: the journal and the report take it from memory
  nt_lines journal.new; nt_ifs=$IFS; IFS=$NT_NL; set -f; nt_jt=''
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    if nt_get desired "$nt_k"; then
      nt_jt=$nt_jt$nt_k$NT_TAB$nt_v$NT_NL # appended to the file after the loop (nothing reads it meanwhile)
      nt_index_put journal.final "$nt_k" "$nt_v"
    else
      nt_get live "$nt_k"
      nt_apply_one "$nt_k" "$nt_v" "$NT_FOUND"
    fi
  done; IFS=$nt_ifs; set +f
  printf '%s' "$nt_jt" >> "$NT_TMP/journal.final" || nt_tmp_full
  nt_verify_batch
  [ -z "$NT_GATE_SPEC" ] || nt_gate_soak # before the commit: a failed gate rolls back runtime values only
  # armed: no file, no final journal, no record until the confirm (a reboot before it boots into the old values)
  if [ "$NT_ARMED" = 1 ]; then
    NT_PHASE=finished
    printf '%s' "$NT_GOTS" >> "$NT_TMP/got" || nt_tmp_full
    case $NT_IXS in *" $NT_TMP/got:"*) ;; *) nt_index got ;; esac
    nt_report "$NT_TMP/journal.final"
    nt_cleanup
    exit 0
  fi
  nt_commit_files
  NT_JHEAD=$NT_GEN # the commit: this generation owns the machine from here on
  nt_journal_write "$NT_TMP/journal.final" "$NT_TMP/arts.new" "after the commit" lines
  kind_after_commit
  nt_confirm_drop # confirmed (or committed by a run that needs no confirm): no revert
  NT_PHASE=finished
  printf '%s' "$NT_GOTS" >> "$NT_TMP/got" || nt_tmp_full
  case $NT_IXS in *" $NT_TMP/got:"*) ;; *) nt_index got ;; esac # the report's values (final)
  nt_report "$NT_TMP/journal.final"
  [ "$NT_ON_FAILURE" != report ] || nt_last_write
  nt_converged_write
  nt_cleanup
  exit 0
}

# The report is assembled in a file and printed in one go at the very end. A closed stdout (lost session) is
# ignored: the run is complete on the host, and the next `up` converges.
nt_report() { # JOURNAL
  : > "$NT_TMP/conv.applied"
  nt_report_body "$1" > "$NT_TMP/report"
  # a confirm (operation "confirm:…") prints no report (Pulumi would store it in the -restore child; the apply's report
  # holds the values and originals): its warnings go to stderr
  { while IFS= read -r nt_l; do
      if [ -z "$NT_CONFIRMING" ]; then printf '%s\n' "$nt_l"
      else case $nt_l in warning"$NT_TAB"*) printf 'net-tuning: warning: %s\n' "${nt_l#warning"$NT_TAB"}" >&2 ;; esac; fi
    done < "$NT_TMP/report"; } 2>/dev/null
  return 0
}

nt_report_body() {
  printf 'net-tuning-report v1\n'
  [ -n "$NT_GEN" ] && printf 'generation\t%s\n' "$NT_GEN"
  # NT_REPORT_SAME=omit (set by main.sh for kinds whose plan keys and values the component knows): an applied
  # value that reads back equal to the plan's is left out ("same-as-plan" says so); a key not read is "unread".
  [ "${NT_REPORT_SAME:-}" = omit ] && printf 'same-as-plan\t1\n'
  nt_pv=previous-values # unless a desired key is left out of the key list below (see the originals)
  nt_lines desired; nt_ifs=$IFS; IFS=$NT_NL; set -f
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    if kind_report_value "$nt_k"; then
      [ "${NT_REPORT_SAME:-}" = omit ] && nt_same "$nt_v" "$NT_GOT" && continue
      nt_norm "$NT_GOT"; printf 'applied\t%s\t%s\n' "$nt_k" "$NT_NORM"
      printf '%s\t%s\n' "$nt_k" "$NT_NORM" >> "$NT_TMP/conv.applied" # for the converged record (no re-read of the report)
    else
      if [ "${NT_REPORT_SAME:-}" = omit ]; then printf 'unread\t%s\n' "$nt_k"; else nt_pv=''; fi
      printf 'warning\t%s\n' "$nt_k cannot be read back on $NT_HOSTNAME for this report (it read back as set right after the change); check it by hand"
    fi
  done; IFS=$nt_ifs; set +f
  # The originals of the desired keys as values only, in the order of the report's key list, on one line
  # ("previous-values"; the component pairs them with the keys): the plan's keys with NT_REPORT_SAME=omit, else the
  # "applied" lines (when every desired key has one); only when every desired key has an original. The journal's
  # other keys as "previous" lines (all of them without "previous-values").
  if [ -n "$nt_pv" ]; then
    nt_lines desired; nt_ifs=$IFS; IFS=$NT_NL; set -f
    for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
      if nt_lookup "$1" "$nt_k"; then nt_norm "$NT_FOUND"; nt_pv="$nt_pv$NT_TAB$NT_NORM"; else nt_pv=''; break; fi
    done; IFS=$nt_ifs; set +f
    [ -z "$nt_pv" ] || printf '%s\n' "$nt_pv"
  fi
  nt_lines "${1#"$NT_TMP/"}"; nt_ifs=$IFS; IFS=$NT_NL; set -f # $1: a file of $NT_TMP (journal.final)
  for nt_l in $NT_LINES; do IFS=$nt_ifs; set +f; nt_kv "$nt_l"
    [ -n "$nt_pv" ] && nt_get desired "$nt_k" && continue
    nt_norm "$nt_v"; printf 'previous\t%s\t%s\n' "$nt_k" "$NT_NORM"
  done; IFS=$nt_ifs; set +f
  while IFS= read -r nt_w; do printf 'warning\t%s\n' "$nt_w"; done < "$NT_TMP/warnings"
  [ -z "$NT_GATE_REPORT" ] || printf '%s' "$NT_GATE_REPORT"
  [ "${NT_ARMED:-0}" = 0 ] || printf 'confirm\t%s\t%s\n' "$NT_CTOKEN" "$NT_CDEADLINE"
  if command -v kind_report >/dev/null 2>&1; then kind_report; fi
  printf 'end\n'
}

# Default: the report reads the value again (kinds whose values interact, like channels and RPS queues); a kind may
# define kind_report_value to reuse the read-back of the apply instead.
if ! command -v kind_report_value >/dev/null 2>&1; then
  kind_report_value() { kind_get "$1"; }
fi

# ---------------------------------------------------------------------------------------- restore
# Delete: originals from Pulumi state (@orig lines), merged with the host's journal when it still exists
# (the journal wins: it holds the first original recorded on this host). A restore whose @generation differs from
# the journal's committed one changes nothing: a newer apply of this resource took this machine over (a move between
# two addresses of one machine: the new apply ran first). A pending newer generation (its create died before its
# commit) does not count: the older plan restores.
nt_restore_main() {
  nt_init
  nt_read_stdin plain # checked by the restore bootstrap (its @end line)
  nt_lock
  NT_PHASE=restore-check
  nt_journal_load || nt_die 1 "the journal $NT_JOURNAL on $NT_HOSTNAME is unreadable or belongs to another owner id; nothing was restored"
  if [ "$NT_J_FORMAT" = v2 ] && [ -n "$NT_RESTORE_GEN" ] && [ -n "$NT_J_GEN" ] && [ "$NT_J_GEN" != "$NT_RESTORE_GEN" ]; then
    nt_msg "not restoring anything on $NT_HOSTNAME: a newer apply of this resource (generation $NT_J_GEN) took this machine over after the apply this restore belongs to (generation $NT_RESTORE_GEN), e.g. connection moved to another address of the same machine; its values, files and journal were left as they are"
    nt_warn "restore skipped on $NT_HOSTNAME: a newer apply of this resource (generation $NT_J_GEN) owns this machine now"
    nt_restore_report
    nt_cleanup
    exit 0
  fi
  # an apply still waiting for its confirm: its reverter goes (the journal holds the originals), and a revert's record
  nt_confirm_drop; rm -f "$NT_STATE/$NT_OWNER_ID.reverted" "$NT_STATE/$NT_OWNER_ID.last" "$NT_STATE/$NT_OWNER_ID.failed"
  { while IFS= read -r nt_l; do printf '%s\n' "$nt_l"; done < "$NT_TMP/j.keys"; } > "$NT_TMP/origs" || nt_die 1 "cannot copy the journal to $NT_TMP on $NT_HOSTNAME (/tmp full?); nothing was restored"
  if [ "$NT_J_FORMAT" = none ]; then
    nt_warn "the host's journal $NT_JOURNAL is missing; restoring the originals kept in Pulumi state"
    nt_msg "warning: the host's journal $NT_JOURNAL is missing on $NT_HOSTNAME; restoring the originals kept in Pulumi state (if this resource was moved to another address of this machine, this reverts the newer apply)"
  fi
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    nt_lookup "$NT_TMP/origs" "$nt_k" || printf '%s\t%s\n' "$nt_k" "$nt_v" >> "$NT_TMP/origs"
  done < "$NT_TMP/orig.state"
  NT_PHASE=restore
  nt_failed=''
  NT_BATCH=0
  if command -v kind_get_many >/dev/null 2>&1; then NT_BATCH=1; kind_get_many "$NT_TMP/origs" "$NT_TMP/live"; fi
  NT_VF=''
  if [ "${NT_RESTORE:-1}" = 1 ]; then
    while IFS="$NT_TAB" read -r nt_k nt_v; do
      # kind_get: 1 = the key no longer exists (a warning), 2 = it cannot be read now (NT_ERR: a tool missing or
      # failing): a failure of that key, so journal and boot files stay for a retry
      # (a key the batch left out is read alone: absent and unreadable differ there)
      if [ "$NT_BATCH" = 1 ] && nt_lookup "$NT_TMP/live" "$nt_k"; then NT_GOT=$NT_FOUND; else kind_get "$nt_k"; fi
      case $? in
        0) ;;
        1) nt_warn "$nt_k no longer exists on $NT_HOSTNAME; its original '$nt_v' was not restored"; continue ;;
        *) nt_failed="$nt_failed $nt_k"; nt_msg "cannot read $nt_k to restore '$nt_v': $NT_ERR"; continue ;;
      esac
      kind_expect "$nt_k" "$nt_v"
      nt_same "$NT_EXPECT" "$NT_GOT" "$nt_k" && continue
      if ! kind_set "$nt_k" "$nt_v"; then nt_failed="$nt_failed $nt_k"; nt_msg "could not restore $nt_k = '$nt_v': $NT_ERR"; continue; fi
      if [ "$NT_BATCH" = 1 ]; then
        # Read back in one batch below; until then the value counts as restored (a signal names it).
        nt_verify_later "$nt_k" "$nt_v" "$NT_EXPECT"
        nt_norm "$nt_v"; printf '%s\t%s\n' "$nt_k" "$NT_NORM" >> "$NT_TMP/restored"
      elif kind_get "$nt_k" && nt_same "$NT_EXPECT" "$NT_GOT" "$nt_k"; then
        nt_norm "$nt_v"; printf '%s\t%s\n' "$nt_k" "$NT_NORM" >> "$NT_TMP/restored"
      else
        nt_failed="$nt_failed $nt_k"; nt_msg "restored $nt_k = '$nt_v' but it reads back '$NT_GOT'"
      fi
      nt_step "restore $nt_k"
    done < "$NT_TMP/origs"
    if [ -n "$NT_VF" ]; then
      printf %s "$NT_VF" > "$NT_TMP/verify"
      kind_get_many "$NT_TMP/verify" "$NT_TMP/verify.got"
      while IFS="$NT_TAB" read -r nt_k nt_v nt_e; do
        if nt_lookup "$NT_TMP/verify.got" "$nt_k" && nt_same "$nt_e" "$NT_FOUND" "$nt_k"; then continue; fi
        nt_failed="$nt_failed $nt_k"; nt_msg "restored $nt_k = '$nt_v' but it reads back '$NT_FOUND'"
      done < "$NT_TMP/verify"
    fi
  fi
  if [ -n "$nt_failed" ]; then
    nt_msg "could not restore on $NT_HOSTNAME:$nt_failed; $(nt_restored_so_far)"
    nt_cleanup; exit 1
  fi
  kind_restore_files
  while IFS= read -r nt_a; do kind_drop_artefact "$nt_a"; done < "$NT_TMP/j.arts"
  NT_PHASE=restore-files
  nt_commit_files_restore
  if command -v kind_after_restore >/dev/null 2>&1; then kind_after_restore; fi
  NT_PHASE=finished
  rm -f "$NT_JOURNAL" "${NT_JOURNAL%.orig}.owner" 2>/dev/null
  if [ -e "$NT_JOURNAL" ] || [ -e "${NT_JOURNAL%.orig}.owner" ]; then
    nt_msg "every original was restored and every boot file removed on $NT_HOSTNAME, but the journal $NT_JOURNAL could not be removed: remove it (and ${NT_JOURNAL%.orig}.owner) by hand, or other resources may be refused these keys"
    nt_cleanup; exit 1
  fi
  nt_step "journal removed"
  nt_converged_remove
  nt_clean_engine
  nt_restore_report
  nt_cleanup
  exit 0
}

# After a restore: this owner's own staged engine copies go (a delivery of its own, engine.<owner id>.sh, and those of
# 0.2.0, engine-<sha256>.<owner id>.sh; root's stage and the SSH user's); the staged copy of this resource's delivery
# (engine.<token>.sh, shared by the resources of its stack on this address) when no journal of its stack remains here
# (owner ids start with <project>.<stack>.: the label's first two parts; a prefix another stack shares only keeps the
# file); and when no journal of any owner remains: any other staged copy made more than 10 minutes ago (another
# stack's, whose resources are gone; a younger one may belong to an apply about to run), the installed engines and
# the empty directories this product created (the lock file in /run stays: removing a lock file others may have
# opened breaks the lock; /run is emptied at boot). Every removal is checked; one that fails is a warning (the values
# and boot files are restored, the journal gone).
nt_clean_engine() {
  [ ! -L "$NT_STAGE_HOME" ] || NT_STAGE_HOME=''
  ntc_p=${NT_OWNER%%/*}.${NT_OWNER#*/}; ntc_p=${ntc_p%%/*}.
  case $ntc_p in *[!A-Za-z0-9._-]* | .* | *..*) ntc_p='' ;; esac
  if [ -n "$ntc_p" ]; then for ntc_f in "$NT_ROOT"/*/"$ntc_p"*.orig; do if [ -e "$ntc_f" ]; then ntc_p=''; break; fi; done; fi
  for ntc_d in "$NT_ROOT"/incoming ${NT_STAGE_HOME:+"$NT_STAGE_HOME"}; do
    nt_rm_file "$ntc_d/engine.$NT_OWNER_ID.sh"
    [ -z "$ntc_p" ] || [ -z "$NT_TOKEN" ] || nt_rm_file "$ntc_d/engine.$NT_TOKEN.sh"
    for ntc_f in "$ntc_d"/engine-*."$NT_OWNER_ID".sh; do
      # only engine-<sha256>.<this owner id>.sh (not another owner whose id ends with this one)
      ntc_s=${ntc_f##*/engine-}; ntc_s=${ntc_s%."$NT_OWNER_ID".sh}
      case "$ntc_s" in *[!0-9a-f]*) ;; *) [ "${#ntc_s}" = 64 ] && nt_rm_file "$ntc_f" ;; esac
    done
  done
  for ntc_f in "$NT_ROOT"/*/*.orig; do [ -e "$ntc_f" ] && { rmdir "${NT_STAGE_HOME:-/-}" 2>/dev/null; return 0; }; done
  for ntc_d in "$NT_ROOT"/incoming ${NT_STAGE_HOME:+"$NT_STAGE_HOME"}; do
    [ -z "$NT_TOKEN" ] || nt_rm_file "$ntc_d/engine.$NT_TOKEN.sh"
    if [ -d "$ntc_d" ] && [ ! -L "$ntc_d" ]; then
      find "$ntc_d" -maxdepth 1 \( -name 'engine.*.sh' -o -name 'engine-*.sh' \) -mmin +10 2>/dev/null | while IFS= read -r ntc_f; do nt_rm_file "$ntc_f"; done
    fi
  done
  rmdir "${NT_STAGE_HOME:-/-}" 2>/dev/null
  ntc_e=/usr/local/lib/pulumi-net-tuning # provider/host/engine.ts ENGINE_INSTALL_DIR
  if [ -O "$ntc_e" ] && [ ! -L "$ntc_e" ]; then for ntc_f in "$ntc_e"/engine-*.sh; do nt_rm_file "$ntc_f"; done; fi
  # Empty directories only: one holding another stack's staged copy, an engine being installed (.new.*) or
  # anything this product did not write stays.
  rmdir "$ntc_e" "$NT_ROOT"/incoming "$NT_ROOT"/sysctl "$NT_ROOT"/nic "$NT_ROOT" 2>/dev/null
  return 0
}

nt_rm_file() { # PATH: removes a file or symlink if present; a failure is a warning
  [ -f "$1" ] || [ -L "$1" ] || return 0
  rm -f "$1" 2>/dev/null
  if [ -e "$1" ] || [ -L "$1" ]; then nt_warn "cannot remove $1 on $NT_HOSTNAME: remove it by hand"; fi
}

# A restore's report: its warnings (nobody parses a delete's output; the warnings are for the user).
nt_restore_report() {
  {
    printf 'net-tuning-report v1\n'
    [ -z "${NT_RESTORED_BY:-}" ] || printf 'restored-by\t%s\n' "$NT_RESTORED_BY"
    while IFS= read -r nt_w; do printf 'warning\t%s\n' "$nt_w"; done < "$NT_TMP/warnings"
    printf 'end\n'
  } 2>/dev/null
  return 0
}

# The file commit of a restore: a failure puts the removed files back (boot persistence stays as Pulumi state
# says, the delete can be retried) and says which values were already restored.
nt_commit_files_restore() {
  NT_PHASE=restore-commit
  nt_rc_fail=''
  nt_n=0
  while IFS="$NT_TAB" read -r nt_op nt_dest nt_src nt_mode; do
    nt_n=$((nt_n + 1))
    if [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then
      if ! cp -pP "$nt_dest" "$NT_TMP/backup.$nt_n"; then nt_rc_fail="cannot back up $nt_dest"; break; fi
      printf '%s\t%s\n' "$nt_dest" "$NT_TMP/backup.$nt_n" >> "$NT_TMP/file-undo" || nt_tmp_full
    else
      printf '%s\t-\n' "$nt_dest" >> "$NT_TMP/file-undo" || nt_tmp_full
    fi
    if [ "$nt_op" = put ]; then
      nt_write_atomic "$nt_dest" "$nt_src" "$nt_mode" || { nt_rc_fail="cannot write $nt_dest"; break; }
    elif [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then
      rm -f "$nt_dest" 2>/dev/null
      if [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then nt_rc_fail="cannot remove $nt_dest"; break; fi
    fi
    nt_step "restore file $nt_dest"
  done < "$NT_TMP/files"
  [ -z "$nt_rc_fail" ] && return 0
  nt_undo_files
  if [ -z "$NT_UNDO_FAILED" ]; then nt_kept='the boot files were put back as they were'
  else nt_kept="putting the boot files back failed too:${NT_UNDO_FAILED%;}"; fi
  NT_PHASE=restore
  nt_die 1 "$nt_rc_fail on $NT_HOSTNAME after the values were restored; $nt_kept"
}

# ---------------------------------------------------------------------------------------- converged record (issue #13)
# What the last successful apply of an owner left on this host, for live previews: world-readable (the values are not
# secret: /proc/sys and ethtool are readable by any user), so a read as a non-root user needs no sudo. One file per
# owner, outside $NT_ROOT (mode 0700, the journals):
#   line 1  "net-tuning-converged v1<TAB>owner-id<TAB>repair token<TAB>owner"
#   plan<TAB>sha256                       the plan applied (its @end sum): a preview of another plan proposes an
#                                         update even when the state holds that plan (a run that failed on the host)
#   value<TAB>key<TAB>value read back     every desired setting (values any user may read)
#   unknown<TAB>key                       a sysctl whose /proc/sys file is not world-readable (0600, e.g.
#                                         net.ipv4.tcp_fastopen_key): its value is not republished here, so not
#                                         checked for drift
#   file<TAB>path<TAB>digest              every artefact (nt_digest) outside $NT_ROOT
# The repair token comes from the apply's operation ("apply-update@<token>", provider/host/programs.ts): a preview
# finding no drift proposes the recorded token again (no change); drift proposes a new one (an update that repairs).
NT_CONVERGED_DIR=/var/lib/pulumi-net-tuning-converged
NT_REPAIR=${NT_REPAIR:-0}

# nt_digest PATH OWNER: "CRC SIZE" (cksum) of the file, or for rc.local of this owner's BEGIN…END blocks only
# (edits elsewhere in rc.local are not ours); "-" when absent; "?" when this user cannot tell (the file, or a
# directory above it, is not readable: a live read as a non-root user), which is not drift.
nt_digest() {
  if [ ! -e "$1" ]; then
    # absent only if the nearest existing directory above it can be searched by this user
    ntd_d=$1
    while :; do
      ntd_d=${ntd_d%/*}
      [ -n "$ntd_d" ] || { printf '%s\n' -; return 0; }
      [ -e "$ntd_d" ] && break
    done
    if [ -x "$ntd_d" ]; then printf '%s\n' -; else printf '%s\n' '?'; fi
    return 0
  fi
  if [ ! -f "$1" ]; then printf '%s\n' -; return 0; fi
  if [ ! -r "$1" ]; then printf '%s\n' '?'; return 0; fi
  case "$1" in
    */rc.local) awk -v b="# BEGIN pulumi-net-tuning $2 " -v e="# END pulumi-net-tuning $2 " \
      'index($0, b) == 1 { on = 1 } on { print } on && index($0, e) == 1 { on = 0 }' "$1" 2>/dev/null | cksum ;;
    *) cksum < "$1" 2>/dev/null || printf '%s\n' '?' ;;
  esac
}

# nt_world_readable_list: $NT_TMP/conv.readable = the /proc/sys files of the desired sysctl keys that exist and that
# any user may read ("r" in the others' triplet of ls -l), one path a line; one ls for all keys (no fork per key).
nt_world_readable_list() {
  [ "$NT_KIND" = sysctl ] || { : > "$NT_TMP/conv.readable"; return 0; }
  # The sysctl preflight listed the modes of the same paths (`ls -lLd` of every desired key, checked to exist) and
  # wrote this list while checking them: a value written does not change a mode, so no second ls or pass.
  if [ -s "$NT_TMP/ro" ] && [ -f "$NT_TMP/conv.readable" ]; then
    case $NT_IXS in *" $NT_TMP/conv.readable:"*) ;; *) nt_index conv.readable ;; esac; return 0
  fi
  : > "$NT_TMP/conv.readable"
  set --
  nt_lines desired; ntw_ifs=$IFS; IFS=$NT_NL; set -f
  for ntw_l in $NT_LINES; do IFS=$ntw_ifs; set +f; nt_kv "$ntw_l"; nts_path "$nt_k" && set -- "$@" "$NTS_PATH"; done; IFS=$ntw_ifs; set +f
  [ $# -gt 0 ] || return 0
  # shellcheck disable=SC2012 # /proc/sys paths: no blanks; ls is one process for every mode
  ls -ldL -- "$@" > "$NT_TMP/conv.modes" 2>/dev/null
  while read -r ntw_m ntw_rest; do
    case "$ntw_m" in ???????r*) printf '%s\n' "${ntw_rest##* }" ;; esac
  done < "$NT_TMP/conv.modes" > "$NT_TMP/conv.readable"
  nt_index conv.readable # paths (no tab): a line is its own key
}

# nt_world_readable PATH: PATH is in $NT_TMP/conv.readable (builtins only).
nt_world_readable() {
  case $NT_IXS in *" $NT_TMP/conv.readable:"*) nt_get conv.readable "$1"; return ;; esac
  while IFS= read -r ntw_p; do [ "$ntw_p" = "$1" ] && return 0; done < "$NT_TMP/conv.readable"
  return 1
}

# After a successful apply (the report already printed): a failure here is only a message (the next preview then
# proposes an update, which writes it again).
nt_converged_write() {
  case "$NT_REPAIR" in '' | *[!0-9a-f]*) NT_REPAIR=0 ;; esac
  {
    printf 'net-tuning-converged v1\t%s\t%s\t%s\n' "$NT_OWNER_ID" "$NT_REPAIR" "$NT_OWNER"
    case ${NT_PLAN_SUM:-} in '' | *[!0-9a-f]*) ;; *) printf 'plan\t%s\n' "$NT_PLAN_SUM" ;; esac
    # conv.applied: the report's applied lines (written by nt_report_body)
    nt_index conv.applied
    # no applied line (a create whose values all read back as planned): no key is found there
    nt_lines conv.applied; ntc_ap=$NT_LINES
    nt_world_readable_list
    nt_lines desired; ntc_ifs=$IFS; IFS=$NT_NL; set -f
    for ntc_l in $NT_LINES; do IFS=$ntc_ifs; set +f; nt_kv "$ntc_l"; ntc_k=$nt_k; ntc_v=$nt_v
      if [ "$NT_KIND" = sysctl ] && nts_path "$ntc_k" && ! nt_world_readable "$NTS_PATH"; then
        printf 'unknown\t%s\n' "$ntc_k"; continue
      fi
      [ -n "$ntc_ap" ] && nt_lookup "$NT_TMP/conv.applied" "$ntc_k" && ntc_v=$NT_FOUND
      nt_norm "$ntc_v"
      # a secret value is recorded as the sha256 of its words (the record is world-readable)
      if nt_secret "$ntc_k"; then NT_NORM="#sha256:$(printf '%s' "$NT_NORM" | sha256sum)"; NT_NORM=${NT_NORM%% *}; fi
      printf 'value\t%s\t%s\n' "$ntc_k" "$NT_NORM"
    done; IFS=$ntc_ifs; set +f
    # not the files under the 0700 state dir (adoption stages originals there): no other user can read them
    while IFS= read -r ntc_a; do
      case "$ntc_a" in "$NT_ROOT"/*) continue ;; esac
      printf 'file\t%s\t' "$ntc_a"
      # a kind may know the bytes its digest covers (NicQueues: the rc.local block it just wrote): one cksum of them
      # instead of the awk | cksum that cuts them out of the file (the live read cuts them out, and gets the same)
      if command -v kind_digest_src >/dev/null 2>&1 && kind_digest_src "$ntc_a"; then cksum < "$NT_DIGEST_SRC" 2>/dev/null || printf '%s\n' '?'
      else nt_digest "$ntc_a" "$NT_OWNER"; fi
    done < "$NT_TMP/arts.new"
  } > "$NT_TMP/converged" 2>/dev/null
  nt_same_file "$NT_TMP/converged" "$NT_CONVERGED_DIR/$NT_OWNER_ID" && return 0 # unchanged: no write
  if [ -d "$NT_CONVERGED_DIR" ] || mkdir -m 755 "$NT_CONVERGED_DIR"; then
    nt_write_atomic "$NT_CONVERGED_DIR/$NT_OWNER_ID" "$NT_TMP/converged" 0644 && return 0
  fi
  nt_msg "warning: cannot write $NT_CONVERGED_DIR/$NT_OWNER_ID on $NT_HOSTNAME: the next preview shows this resource as changing"
  return 0
}

# After a successful restore: the record goes, and its directory when empty.
nt_converged_remove() {
  nt_rm_file "$NT_CONVERGED_DIR/$NT_OWNER_ID"
  rmdir "$NT_CONVERGED_DIR" 2>/dev/null
  return 0
}

# The live read (engine operation "live", sent on stdin to `/bin/sh -s live live`, never installed): reads only, as
# whatever user logs in (no sudo: sudo itself writes to the auth log); no lock, no temporary file, no write.
# $NT_LIVE_REQ: one "kind<TAB>owner-id<TAB>keys" line per resource (keys space-separated; IF/rps.rx-*, IF/rfs.rx-*
# and IF/irq.* expand to the host's queues and IRQs). Answer, per resource: "!owner ID", the record ("!record" and
# its lines prefixed "|", or "!no-record" (with " journal" when this owner's journal exists) / "!record-unreadable"),
# "digest<TAB>path<TAB>digest" for every recorded file, "value<TAB>key<TAB>value" or "missing<TAB>key" /
# "unreadable<TAB>key", for a ring or channel also "max<TAB>key<TAB>maximum", for a feature or coalescing parameter
# "shown<TAB>key<TAB>text" or "absent<TAB>key", per interface and ethtool group that fails
# "unsupported<TAB>IF<TAB>group<TAB>said", and once per interface "driver<TAB>IF<TAB>name" (nn_live_ethtool), after
# missing keys the "host<TAB>…" lines (nt_live_host), for a declared net.ipv4.tcp_congestion_control the
# "host<TAB>cc-…" lines (sysctl.sh nts_live_cc); then "!end".
# A request line may go on after its keys (compatible: without them, as before): a sysctl line with the boot-order
# check's fields (sysctl.sh nts_live_boot: "boot<TAB>mask|override<TAB>finding" lines), a nic line with its interface
# (nic.sh nn_live_iface: "no-interface<TAB>IF<TAB>interfaces" or "no-ethtool", and "host<TAB>hostname<TAB>name").
# Lines of other types are ignored by the reader (compatible additions).
nt_live_main() {
  printf 'net-tuning-live v2\n'
  # shellcheck disable=SC2153 # set by the first line of the read (provider/live/read.ts)
  nt_live_req=$NT_LIVE_REQ
  while [ -n "$nt_live_req" ]; do
    ntl_line=${nt_live_req%%"
"*}
    case "$nt_live_req" in *"
"*) nt_live_req=${nt_live_req#*"
"} ;; *) nt_live_req='' ;; esac
    ntl_kind=${ntl_line%%"$NT_TAB"*}; ntl_rest=${ntl_line#*"$NT_TAB"}
    ntl_id=${ntl_rest%%"$NT_TAB"*}; ntl_keys=${ntl_rest#*"$NT_TAB"}
    # (fields after the keys: sysctl's boot-order check, nic's interface)
    ntl_more=''; case $ntl_keys in *"$NT_TAB"*) ntl_more=${ntl_keys#*"$NT_TAB"}; ntl_keys=${ntl_keys%%"$NT_TAB"*} ;; esac
    case "$ntl_id" in '' | *[!A-Za-z0-9._-]*) continue ;; esac
    case "$ntl_kind" in sysctl) nt_kind_sysctl ;; nic) nt_kind_nic ;; *) continue ;; esac
    printf '!owner %s\n' "$ntl_id"
    ntl_f=$NT_CONVERGED_DIR/$ntl_id
    ntl_recorded=''
    if [ -f "$ntl_f" ] && [ -r "$ntl_f" ]; then
      printf '!record\n'
      ntl_owner=''
      while IFS= read -r ntl_l; do
        printf '|%s\n' "$ntl_l"
        case "$ntl_l" in
          "net-tuning-converged v1$NT_TAB"*) ntl_owner=${ntl_l#*"$NT_TAB"*"$NT_TAB"*"$NT_TAB"} ;;
          "value$NT_TAB"*) ntl_k=${ntl_l#value"$NT_TAB"}; ntl_recorded="$ntl_recorded ${ntl_k%%"$NT_TAB"*}" ;;
        esac
      done < "$ntl_f"
      while IFS="$NT_TAB" read -r ntl_t ntl_p _; do
        [ "$ntl_t" = file ] && printf 'digest\t%s\t%s\n' "$ntl_p" "$(nt_digest "$ntl_p" "$ntl_owner")"
      done < "$ntl_f"
    elif [ -e "$ntl_f" ]; then
      printf '!record-unreadable\n'
    elif [ -e "$NT_ROOT/$ntl_kind/$ntl_id.orig" ]; then
      # no record, but this owner's journal of originals: applied here before, its record removed (a read as root; the
      # 0700 state dir hides the journal from other users, whose read then says no record, like before any apply)
      printf '!no-record journal\n'
    elif [ -e "$NT_ROOT/$ntl_kind/$ntl_id.failed" ]; then
      # a first create that failed inside a rollout (nt_tolerate; a read as root): the next `up` runs it again
      printf '!no-record failed\n'
    else
      printf '!no-record\n'
    fi
    # a revert of an unconfirmed apply (root's state dir: a read as root only): "reverted<TAB>time<TAB>plan sum"
    ntl_rv=$NT_ROOT/$ntl_kind/$ntl_id.reverted
    if [ -f "$ntl_rv" ] && [ -r "$ntl_rv" ] && IFS="$NT_TAB" read -r _ ntl_t ntl_s _ < "$ntl_rv"; then printf 'reverted\t%s\t%s\n' "$ntl_t" "$ntl_s"; fi
    set -f
    # shellcheck disable=SC2086 # keys are words (validated by the component, checked again here)
    set -- $ntl_keys $ntl_recorded
    set +f
    ntl_missing=0
    for ntl_k do nt_live_key "$ntl_k"; done
    # another owner's journal holding a declared key (the preflight's nt_check_owners; journals are root's: a read
    # as root only, NT_LIVE_ROOT=1 from provider/live/read.ts renderLiveRead)
    if [ "${NT_LIVE_ROOT:-0}" = 1 ]; then
      ntl_kl=''; set -f; for ntl_k in $ntl_keys; do ntl_kl=$ntl_kl$ntl_k$NT_NL; done; set +f
      NT_STATE=$NT_ROOT/$ntl_kind NT_JOURNAL=$NT_ROOT/$ntl_kind/$ntl_id.orig
      nt_owner_conflicts nt_live_refuse "$ntl_kl" ''
    fi
    [ "$ntl_missing" = 0 ] || nt_live_host
    case "$ntl_kind: $ntl_keys " in "sysctl:"*" net.ipv4.tcp_congestion_control "*) nts_live_cc ;; esac
    if [ -n "$ntl_more" ]; then case $ntl_kind in sysctl) nts_live_boot "$ntl_more" ;; nic) nn_live_iface "$ntl_more" ;; esac; fi
  done
  printf '!end\n'
}

# nt_live_refuse TEXT: a refusal of the preflight, found by the live read with the preflight's own rule (a kind's
# *_refusals function), as the read's "refuse<TAB>text" line (provider/live/read.ts LiveSection.refusals).
nt_live_refuse() { printf 'refuse\t%s\n' "$1"; }

# After a section with keys this kernel lacks, what the preflight's refusal of them names (provider/host/messages.ts
# KEYS_ABSENT): "host<TAB>kernel<TAB>uname -r" and "host<TAB>netns<TAB>1" when this is not the initial network
# namespace (else 0). Read once per read, only when a key is missing.
nt_live_host() {
  [ -n "${ntl_kernel:-}" ] || { ntl_kernel=$(uname -r); ntl_netns=0; nts_child_netns && ntl_netns=1; }
  printf 'host\tkernel\t%s\nhost\tnetns\t%s\n' "$ntl_kernel" "$ntl_netns"
}

nt_live_key() { # KEY (wildcards expanded); uses ntl_kind
  case "$1" in
    */rps.rx-\* | */rfs.rx-\*)
      ntl_if=${1%%/*}; ntl_p=${1#*/}; ntl_p=${ntl_p%%.*}
      nn_valid_if "$ntl_if" || return 0
      for ntl_q in "$NN_SYS/$ntl_if"/queues/rx-*; do [ -d "$ntl_q" ] && nt_live_key "$ntl_if/$ntl_p.${ntl_q##*/}"; done
      return 0 ;;
    */irq.\*)
      NN_IF=${1%%/*}
      nn_valid_if "$NN_IF" || return 0
      for ntl_n in $(nn_irqs); do nt_live_key "$NN_IF/irq.$ntl_n"; done
      return 0 ;;
  esac
  nt_valid_word "$1" || return 0
  [ "$ntl_kind" = nic ] && nn_live_ethtool "$1" && return 0
  if kind_get "$1"; then nt_norm "$NT_GOT"; printf 'value\t%s\t%s\n' "$1" "$NT_NORM"
  elif [ "$ntl_kind" = sysctl ] && nts_path "$1" && [ ! -e "$NTS_PATH" ]; then printf 'missing\t%s\n' "$1"; ntl_missing=1
  else printf 'unreadable\t%s\n' "$1"; fi
}
