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

NT_TAB=$(printf '\t')
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
NT_HOSTNAME=$(uname -n 2>/dev/null || echo host)

nt_msg() { printf 'net-tuning: %s\n' "$*" >&2; }

# $1: the bootstrap's private directory holding this program and its stdin, removed at exit.
NT_INPUT_DIR=${1:-}

nt_cleanup() {
  if [ "$NT_LOCKED" = 1 ]; then rm -rf "$NT_ROOT/.lock"; NT_LOCKED=0; fi
  if [ -n "$NT_TMP" ]; then rm -rf "$NT_TMP"; NT_TMP=''; fi
  case "$NT_INPUT_DIR" in /tmp/net-tuning-in.*) rm -rf "$NT_INPUT_DIR"; NT_INPUT_DIR='' ;; esac
}

# nt_die CODE MESSAGE: rolls back when a change is in progress, then exits.
nt_die() {
  nt_code=$1; shift
  nt_msg "$*"
  if [ "$NT_PHASE" = apply ]; then nt_rollback; fi
  nt_cleanup
  exit "$nt_code"
}

nt_on_signal() {
  trap '' HUP INT TERM PIPE
  case "$NT_PHASE" in
    apply) nt_die 1 "interrupted while applying on $NT_HOSTNAME; every change of this run was rolled back" ;;
    finished) nt_cleanup; exit 1 ;;
    *) nt_die 1 "interrupted during $NT_PHASE on $NT_HOSTNAME; nothing was changed by this run" ;;
  esac
}

nt_init() {
  if [ "$(id -u)" != 0 ]; then
    nt_msg "must run as root, but runs as $(id -un) on $NT_HOSTNAME: connect as root or set become: \"sudo\" with passwordless sudo (NOPASSWD) for this user"
    nt_cleanup
    exit 3
  fi
  NT_TMP=$(mktemp -d /tmp/net-tuning.XXXXXX) || { nt_msg "cannot create a temporary directory in /tmp on $NT_HOSTNAME"; exit 1; }
  trap 'nt_on_signal' HUP INT TERM PIPE
  : > "$NT_TMP/desired"; : > "$NT_TMP/changed"; : > "$NT_TMP/warnings"; : > "$NT_TMP/files"; : > "$NT_TMP/orig.state"
  : > "$NT_TMP/problems"
}

nt_valid_word() { # KEY-like words: letters, digits and ._-:/@ only
  case "$1" in ''|*[!A-Za-z0-9._:/@-]*) return 1 ;; esac
  return 0
}

# Reads the plan from stdin: "@name value" directives, then "@content" and the content lines, up to "@program"
# (the program itself follows; the bootstrap cut it off and runs it).
nt_read_stdin() {
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
          orig) printf '%s\n' "$nt_value" >> "$NT_TMP/orig.state" ;;
          restore) NT_RESTORE=$nt_value ;;
          *) kind_directive "$nt_name" "$nt_value" || nt_die 5 "unknown plan directive @$nt_name (plan written by a newer pulumi-net-tuning?)" ;;
        esac ;;
      ''|'#'*) ;;
      *) nt_die 5 "malformed plan line: $nt_line" ;;
    esac
  done
  [ "$nt_seen_header" = 1 ] || nt_die 5 "stdin is not a pulumi-net-tuning v1 plan"
  case "$NT_OWNER_ID" in ''|*[!A-Za-z0-9._-]*) nt_die 5 "invalid owner id '$NT_OWNER_ID'" ;; esac
  case "$NT_KIND" in sysctl|nic) ;; *) nt_die 5 "invalid kind '$NT_KIND'" ;; esac
  case "$NT_OWNER" in ''|*[!A-Za-z0-9._:/@\ -]*) nt_die 5 "invalid owner '$NT_OWNER'" ;; esac
  NT_STATE=$NT_ROOT/$NT_KIND
  NT_JOURNAL=$NT_STATE/$NT_OWNER_ID.orig
}

# A mkdir lock shared by every resource on this host, waited for at most 60 s; stale locks (dead pid) are broken.
nt_lock() {
  { mkdir -p "$NT_STATE" && chmod 0700 "$NT_ROOT"; } || nt_die 1 "cannot create $NT_STATE on $NT_HOSTNAME (read-only or full /var/lib?)"
  nt_i=0
  while ! mkdir "$NT_ROOT/.lock" 2>/dev/null; do
    nt_pid=$(cat "$NT_ROOT/.lock/pid" 2>/dev/null || echo '')
    if [ -n "$nt_pid" ] && ! kill -0 "$nt_pid" 2>/dev/null; then rm -rf "$NT_ROOT/.lock"; continue; fi
    nt_i=$((nt_i + 1))
    [ "$nt_i" -gt 120 ] && { nt_msg "another pulumi-net-tuning run (pid ${nt_pid:-?}) holds $NT_ROOT/.lock on $NT_HOSTNAME for more than 60 s; retry later"; nt_cleanup; exit 4; }
    sleep 0.5 2>/dev/null || sleep 1
  done
  NT_LOCKED=1
  echo "$$" > "$NT_ROOT/.lock/pid"
}

nt_warn() { printf '%s\n' "$*" >> "$NT_TMP/warnings"; }

nt_problem() {
  NT_PROBLEMS=$((NT_PROBLEMS + 1))
  printf '  - %s\n' "$*" >> "$NT_TMP/problems"
}

nt_problems_exit() {
  [ "$NT_PROBLEMS" = 0 ] && return 0
  nt_msg "preflight refused the change on $NT_HOSTNAME ($(uname -r)): $NT_PROBLEMS problem(s), nothing was changed:"
  cat "$NT_TMP/problems" >&2
  nt_cleanup
  exit 2
}

# nt_want KEY VALUE: adds a desired setting.
nt_want() { printf '%s\t%s\n' "$1" "$2" >> "$NT_TMP/desired"; }

# nt_lookup FILE KEY: sets NT_FOUND to the value of KEY in a key<TAB>value file; returns 1 when absent.
nt_lookup() {
  NT_FOUND=''
  [ -f "$1" ] || return 1
  while IFS="$NT_TAB" read -r ntl_k ntl_v; do
    if [ "$ntl_k" = "$2" ]; then NT_FOUND=$ntl_v; return 0; fi
  done < "$1"
  return 1
}

# Words of a value joined by single spaces (the kernel reads back multi-values tab-separated).
nt_norm() {
  nt_save_ifs=$IFS; IFS=" $NT_TAB"
  set -f
  # shellcheck disable=SC2086 # word splitting is the point
  set -- $1
  set +f
  IFS=$nt_save_ifs
  NT_NORM="$*"
}

nt_same() { # nt_same A B
  nt_norm "$1"; nt_a=$NT_NORM
  nt_norm "$2"
  [ "$nt_a" = "$NT_NORM" ]
}

# Refuses keys that another owner's journal on this host already holds: never last-writer-wins.
nt_check_owners() {
  for nt_j in "$NT_STATE"/*.orig; do
    [ -f "$nt_j" ] || continue
    [ "$nt_j" = "$NT_JOURNAL" ] && continue
    nt_other=$(cat "${nt_j%.orig}.owner" 2>/dev/null || echo "${nt_j##*/}")
    while IFS="$NT_TAB" read -r nt_k nt_v; do
      if nt_lookup "$nt_j" "$nt_k"; then
        nt_problem "$nt_k is already managed by $nt_other on this host (journal $nt_j): manage it in one resource only, or remove it there first"
      fi
    done < "$NT_TMP/desired"
  done
}

# Files: nt_stage_file DEST SRC MODE replaces DEST atomically at commit; nt_stage_remove DEST removes it.
nt_stage_file() { printf 'put\t%s\t%s\t%s\n' "$1" "$2" "$3" >> "$NT_TMP/files"; }
nt_stage_remove() { printf 'rm\t%s\t-\t-\n' "$1" >> "$NT_TMP/files"; }

nt_write_atomic() { # DEST SRC MODE
  nt_dir=${1%/*}; nt_base=${1##*/}
  mkdir -p "$nt_dir" || return 1
  nt_new="$nt_dir/.$nt_base.net-tuning-new"
  dd if="$2" of="$nt_new" bs=65536 conv=fsync 2>/dev/null || { rm -f "$nt_new"; return 1; }
  chmod "$3" "$nt_new" && mv -f "$nt_new" "$1"
}

nt_commit_files() {
  nt_n=0
  while IFS="$NT_TAB" read -r nt_op nt_dest nt_src nt_mode; do
    nt_n=$((nt_n + 1))
    if [ -e "$nt_dest" ] || [ -L "$nt_dest" ]; then
      cp -p "$nt_dest" "$NT_TMP/backup.$nt_n" || nt_die 1 "cannot back up $nt_dest"
      printf '%s\t%s\n' "$nt_dest" "$NT_TMP/backup.$nt_n" >> "$NT_TMP/file-undo"
    else
      printf '%s\t-\n' "$nt_dest" >> "$NT_TMP/file-undo"
    fi
    if [ "$nt_op" = put ]; then
      nt_write_atomic "$nt_dest" "$nt_src" "$nt_mode" || nt_die 1 "cannot write $nt_dest on $NT_HOSTNAME (read-only or full filesystem?); every change of this run was rolled back"
    else
      rm -f "$nt_dest" || nt_die 1 "cannot remove $nt_dest on $NT_HOSTNAME; every change of this run was rolled back"
    fi
  done < "$NT_TMP/files"
}

nt_rollback() {
  NT_PHASE=rollback
  if [ -s "$NT_TMP/changed" ]; then
    # Newest change first.
    sed -n '1!G;h;$p' "$NT_TMP/changed" > "$NT_TMP/changed.rev"
    while IFS="$NT_TAB" read -r nt_k nt_v; do
      kind_set "$nt_k" "$nt_v" || nt_msg "ROLLBACK FAILED for $nt_k (wanted '$nt_v' back): $NT_ERR"
    done < "$NT_TMP/changed.rev"
  fi
  if [ -f "$NT_TMP/file-undo" ]; then
    while IFS="$NT_TAB" read -r nt_dest nt_bak; do
      if [ "$nt_bak" = - ]; then rm -f "$nt_dest"; else cp -p "$nt_bak" "$nt_dest.net-tuning-undo" && mv -f "$nt_dest.net-tuning-undo" "$nt_dest"; fi
    done < "$NT_TMP/file-undo"
  fi
  if [ -f "$NT_TMP/journal.before" ]; then
    cp -p "$NT_TMP/journal.before" "$NT_JOURNAL"
  elif [ -n "${NT_JOURNAL:-}" ]; then
    rm -f "$NT_JOURNAL" "${NT_JOURNAL%.orig}.owner"
  fi
  command -v kind_rollback >/dev/null 2>&1 && kind_rollback
  NT_PHASE=rolledback
}

# One setting: change only if it differs, then read it back. Records the change for rollback first.
nt_apply_one() { # KEY VALUE LIVE
  kind_expect "$1" "$2"
  nt_same "$NT_EXPECT" "$3" && return 0
  printf '%s\t%s\n' "$1" "$3" >> "$NT_TMP/changed"
  if ! kind_set "$1" "$2"; then
    # First pass: a refusal may depend on another key of this run (ip_local_port_range needs
    # ip_unprivileged_port_start lowered first): retry it once after the others.
    if [ "${NT_DEFER:-0}" = 1 ]; then printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$NT_TMP/deferred"; return 0; fi
    nt_die 1 "$1 = '$2' was refused on $NT_HOSTNAME: $NT_ERR; every change of this run was rolled back"
  fi
  kind_get "$1" || nt_die 1 "$1 cannot be read back on $NT_HOSTNAME after writing '$2'; every change of this run was rolled back"
  nt_same "$NT_EXPECT" "$NT_GOT" || nt_die 1 "$1 = '$2' did not stick on $NT_HOSTNAME: read back '$NT_GOT' (expected '$NT_EXPECT'); every change of this run was rolled back"
}

nt_apply_main() {
  nt_init
  nt_read_stdin
  nt_lock
  NT_PHASE=preflight
  kind_preflight
  nt_check_owners
  nt_problems_exit
  # Snapshot: live values of every desired and every journalled key.
  : > "$NT_TMP/live"
  [ -f "$NT_JOURNAL" ] && cp -p "$NT_JOURNAL" "$NT_TMP/journal.before"
  cat "$NT_TMP/desired" > "$NT_TMP/keys"
  [ -f "$NT_JOURNAL" ] && cat "$NT_JOURNAL" >> "$NT_TMP/keys"
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    nt_lookup "$NT_TMP/live" "$nt_k" && continue
    kind_get "$nt_k" || nt_die 2 "$nt_k cannot be read on $NT_HOSTNAME; nothing was changed"
    printf '%s\t%s\n' "$nt_k" "$NT_GOT" >> "$NT_TMP/live"
  done < "$NT_TMP/keys"
  # Journal first (originals of keys this resource has not touched before), then the changes.
  NT_PHASE=apply
  [ -f "$NT_JOURNAL" ] && cat "$NT_JOURNAL" > "$NT_TMP/journal.new"
  [ -f "$NT_JOURNAL" ] || : > "$NT_TMP/journal.new"
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    nt_lookup "$NT_TMP/journal.new" "$nt_k" && continue
    nt_lookup "$NT_TMP/live" "$nt_k"
    printf '%s\t%s\n' "$nt_k" "$NT_FOUND" >> "$NT_TMP/journal.new"
  done < "$NT_TMP/desired"
  printf '%s\n' "$NT_OWNER" > "$NT_TMP/owner"
  if ! cmp -s "$NT_TMP/owner" "${NT_JOURNAL%.orig}.owner"; then
    nt_write_atomic "${NT_JOURNAL%.orig}.owner" "$NT_TMP/owner" 0600 || nt_die 1 "cannot write ${NT_JOURNAL%.orig}.owner on $NT_HOSTNAME (read-only or full /var/lib?)"
  fi
  if ! cmp -s "$NT_TMP/journal.new" "$NT_JOURNAL"; then
    nt_write_atomic "$NT_JOURNAL" "$NT_TMP/journal.new" 0600 || nt_die 1 "cannot write $NT_JOURNAL on $NT_HOSTNAME (read-only or full /var/lib?)"
  fi
  : > "$NT_TMP/deferred"
  NT_DEFER=1
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    nt_lookup "$NT_TMP/live" "$nt_k"
    nt_apply_one "$nt_k" "$nt_v" "$NT_FOUND"
  done < "$NT_TMP/desired"
  NT_DEFER=0
  while IFS="$NT_TAB" read -r nt_k nt_v nt_live; do
    nt_apply_one "$nt_k" "$nt_v" "$nt_live"
  done < "$NT_TMP/deferred"
  # Keys this resource no longer declares go back to their originals.
  : > "$NT_TMP/journal.final"
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    if nt_lookup "$NT_TMP/desired" "$nt_k"; then
      printf '%s\t%s\n' "$nt_k" "$nt_v" >> "$NT_TMP/journal.final"
    else
      nt_lookup "$NT_TMP/live" "$nt_k"
      nt_apply_one "$nt_k" "$nt_v" "$NT_FOUND"
    fi
  done < "$NT_TMP/journal.new"
  kind_files
  nt_commit_files
  if ! cmp -s "$NT_TMP/journal.final" "$NT_JOURNAL"; then
    nt_write_atomic "$NT_JOURNAL" "$NT_TMP/journal.final" 0600 || nt_die 1 "cannot write $NT_JOURNAL on $NT_HOSTNAME"
  fi
  kind_after_commit
  NT_PHASE=finished
  nt_report "$NT_TMP/journal.final"
  nt_cleanup
  exit 0
}

nt_report() { # JOURNAL: the report is assembled in a file and printed in one go at the very end
  nt_report_body "$1" > "$NT_TMP/report"
  cat "$NT_TMP/report"
}

nt_report_body() {
  printf 'net-tuning-report v1\n'
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    kind_get "$nt_k" && nt_norm "$NT_GOT" && printf 'applied\t%s\t%s\n' "$nt_k" "$NT_NORM"
  done < "$NT_TMP/desired"
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    nt_norm "$nt_v"; printf 'previous\t%s\t%s\n' "$nt_k" "$NT_NORM"
  done < "$1"
  while IFS= read -r nt_w; do printf 'warning\t%s\n' "$nt_w"; done < "$NT_TMP/warnings"
  command -v kind_report >/dev/null 2>&1 && kind_report
  printf 'end\n'
}

# Delete: originals from Pulumi state (@orig lines), merged with the host's journal when it still exists
# (the journal wins: it holds the first original recorded on this host).
nt_restore_main() {
  nt_init
  nt_read_stdin
  nt_lock
  NT_PHASE=restore
  : > "$NT_TMP/origs"
  [ -f "$NT_JOURNAL" ] && cat "$NT_JOURNAL" >> "$NT_TMP/origs"
  [ -f "$NT_JOURNAL" ] || nt_warn "the host's journal $NT_JOURNAL is missing; restoring the originals kept in Pulumi state"
  while IFS="$NT_TAB" read -r nt_k nt_v; do
    nt_lookup "$NT_TMP/origs" "$nt_k" || printf '%s\t%s\n' "$nt_k" "$nt_v" >> "$NT_TMP/origs"
  done < "$NT_TMP/orig.state"
  nt_failed=0
  if [ "${NT_RESTORE:-1}" = 1 ]; then
    while IFS="$NT_TAB" read -r nt_k nt_v; do
      if ! kind_get "$nt_k"; then nt_warn "$nt_k no longer exists on $NT_HOSTNAME; its original '$nt_v' was not restored"; continue; fi
      kind_expect "$nt_k" "$nt_v"
      nt_same "$NT_EXPECT" "$NT_GOT" && continue
      if ! kind_set "$nt_k" "$nt_v"; then nt_failed=$((nt_failed + 1)); nt_msg "could not restore $nt_k = '$nt_v': $NT_ERR"; continue; fi
      kind_get "$nt_k"
      nt_same "$NT_EXPECT" "$NT_GOT" || { nt_failed=$((nt_failed + 1)); nt_msg "restored $nt_k = '$nt_v' but it reads back '$NT_GOT'"; }
    done < "$NT_TMP/origs"
  fi
  if [ "$nt_failed" != 0 ]; then
    nt_msg "$nt_failed original value(s) could not be restored on $NT_HOSTNAME; the journal and files were kept so that the delete can be retried"
    nt_cleanup; exit 1
  fi
  kind_restore_files
  NT_PHASE=apply
  nt_commit_files
  command -v kind_after_restore >/dev/null 2>&1 && kind_after_restore
  NT_PHASE=finished
  rm -f "$NT_JOURNAL" "${NT_JOURNAL%.orig}.owner"
  : > "$NT_TMP/desired"
  nt_report "$NT_TMP/origs"
  nt_cleanup
  exit 0
}
