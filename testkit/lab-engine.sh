# pulumi-net-tuning: the lab's fault-injection overlay of the host engine (never part of the package's engine).
# testkit/labEngine.ts builds the lab's engine as the package's, with this text after the runtime: it redefines the
# runtime's inert step markers (nt_step, nt_mark; provider/host/sh/runtime.sh, "step markers") and shadows `cp`.
# It acts only when a lab test wrote $NT_LAB_HOOKS (root-owned, not writable by others); tests/safety/hooks.ts writes
# and clears it. Lab hosts have a private /etc, so a hook never reaches the machine. Lines of that file:
#   kill-after-step K          SIGKILL right after the K-th mutating step
#   pause-after-step K SECONDS write the pid to /run/nt-paused, then wait while /run/nt-hold exists (at most SECONDS)
#   hang-after-step K          run `sleep 3600` after the K-th mutating step (a command that does not return)
#   deadline SECONDS GRACE     the run's deadline and its rollback's grace (NT_DEADLINE, NT_DEADLINE_GRACE)
#   pause-after-set KEY SECONDS  the same pause right after the step that set KEY (a test injects a fault meanwhile:
#                              SSH sessions in the lab cannot mount, so a test makes a key read-only from outside)
#   fail-journal-backup        the copy of the journal (before an apply) fails
#   trace FILE                 "enter|leave PID OWNER" lines when the lock is taken and given back
#   steps FILE                 one "K KIND WHAT" line per mutating step
# shellcheck disable=SC2317 # functions are called indirectly (the runtime's markers)
NT_LAB_HOOKS=/etc/pulumi-net-tuning-test-hooks
NT_LAB_ON=0
NT_LAB_STEP=0

nt_lab_load() {
  NT_LAB_ON=0
  [ -f "$NT_LAB_HOOKS" ] || return 0
  nt_l=$(ls -ln "$NT_LAB_HOOKS" 2>/dev/null) || return 0
  set -f
  # shellcheck disable=SC2086 # split ls's fields
  set -- $nt_l
  set +f
  case "$1" in -rw-[r-]--[r-]--*|-rw-------*) ;; *) return 0 ;; esac
  [ "$3" = 0 ] && [ "$4" = 0 ] && NT_LAB_ON=1
  return 0
}

# nt_lab_hook NAME: sets NT_LAB_ARG (the rest of the first line "NAME …"); 1 when absent or the hooks are off
nt_lab_hook() {
  NT_LAB_ARG=''
  [ "$NT_LAB_ON" = 1 ] || return 1
  while IFS=' ' read -r ntl_n ntl_a || [ -n "$ntl_n" ]; do
    if [ "$ntl_n" = "$1" ]; then NT_LAB_ARG=$ntl_a; return 0; fi
  done < "$NT_LAB_HOOKS"
  return 1
}

nt_lab_trace() { nt_lab_hook trace && printf '%s %s %s\n' "$1" "$$" "$NT_OWNER_ID" >> "$NT_LAB_ARG"; return 0; }

nt_mark() {
  case $1 in
    setup)
      nt_lab_load
      if nt_lab_hook deadline; then NT_DEADLINE=${NT_LAB_ARG%% *} NT_DEADLINE_GRACE=${NT_LAB_ARG#* }; fi ;;
    locked) nt_lab_trace enter ;;
    unlocked) nt_lab_trace leave ;;
  esac
  return 0
}

nt_step() {
  NT_LAB_STEP=$((NT_LAB_STEP + 1))
  [ "$NT_LAB_ON" = 1 ] || return 0
  nt_lab_hook steps && printf '%s %s %s\n' "$NT_LAB_STEP" "$NT_KIND" "$1" >> "$NT_LAB_ARG"
  if nt_lab_hook kill-after-step && [ "$NT_LAB_ARG" = "$NT_LAB_STEP" ]; then kill -KILL "$$"; fi
  if nt_lab_hook hang-after-step && [ "$NT_LAB_ARG" = "$NT_LAB_STEP" ]; then sleep 3600; fi
  if nt_lab_hook pause-after-step && [ "${NT_LAB_ARG%% *}" = "$NT_LAB_STEP" ]; then nt_lab_pause "${NT_LAB_ARG#* }"; fi
  if nt_lab_hook pause-after-set && [ "set ${NT_LAB_ARG%% *}" = "$1" ]; then nt_lab_pause "${NT_LAB_ARG#* }"; fi
  return 0
}

# Short sleeps: a signal sent meanwhile is handled within 0.1 s. Bounded by $1 seconds; ends when /run/nt-hold goes.
nt_lab_pause() {
  printf '%s\n' "$$" > /run/nt-paused
  ntl_w=0
  while [ -e /run/nt-hold ] && [ "$ntl_w" -lt $(($1 * 10)) ]; do sleep 0.1; ntl_w=$((ntl_w + 1)); done
}

# fail-journal-backup: the engine's one `cp -p JOURNAL WORKDIR/journal.before` fails as on a full /tmp.
cp() {
  if [ "$#" = 3 ] && [ "$1" = -p ] && [ "$3" = "$NT_TMP/journal.before" ] && nt_lab_hook fail-journal-backup; then
    printf 'cp: error writing %s: No space left on device (lab hook fail-journal-backup)\n' "$3" >&2
    return 1
  fi
  command cp "$@"
}
