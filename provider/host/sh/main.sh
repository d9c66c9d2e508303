# pulumi-net-tuning engine: entry point and dispatch (POSIX sh): nt_engine_main (every path of it exits).
# The engine file is assembled by provider/host/engine.ts as: prelude (this file's NT_ENGINE_* lines, first),
# runtime.sh, this file, then each kind file wrapped in a loader function (nt_kind_sysctl, then nt_kind_nic), each
# followed by "nt_engine_main; exit" where the run needs no later part of the file: a sysctl run (not "live")
# dispatches right after nt_kind_sysctl is defined, so the shell never parses the nic kind (issue #12: the shell
# parses a function definition when it reaches it, and the nic kind is the larger part of the file); the nic kind,
# "live" (both kinds) and anything else at the end.
#
# Contract (what the apply bootstrap of provider/host/programs.ts runs, as root):
#   /bin/sh /usr/local/lib/pulumi-net-tuning/engine-<sha256>.sh KIND OP < plan
#   KIND  sysctl | nic            which kind file is loaded
#   OP    apply-create            the Command's create (first apply of this resource on this machine, or a
#                                 replacement after a move): NT_APPLY_MODE=create, a new generation starts
#         apply-update            the Command's update: NT_APPLY_MODE=update, the journal's generation is kept
#   stdin the plan without its first line: the bootstrap has read and checked "@engine <version> <sha256>"
#         (that line names this file; the rest is "@directive value" lines, then "@content" and the content).
#         restore         the -restore child's delete (RESTORE_BOOT of programs.ts) when this exact engine is
#                               installed: nt_restore_main with the kind loaded; arguments 3 and 4 are the bootstrap's
#                               private directory and the SSH user's staging directory (runtime.sh $1, $2); stdin
#                               starts with the plan's "@engine" line (ignored by nt_read_stdin). Only the engine the
#                               plan names restores: a plan is only ever read by the engine version that wrote it.
#                               Without it the fallback program in the plan restores (provider/host/sh/restore*.sh).
# Exit codes: those of runtime.sh; 5 for a bad KIND or OP (a bug in the bootstrap).
# stdout: the report of runtime.sh (for sysctl with NT_REPORT_SAME=omit: applied values equal to the plan's are
#   left out, the component fills them in from its plan); after a successful run one more line follows its "end":
#   host<TAB>gzip base64   when both tools exist here (the component then stores the -restore stdin's originals and
#                          fallback program as one gzip|base64 stream)
# shellcheck shell=sh

nt_engine_exit() {
  if [ "$1" = 0 ] && [ "${NT_ENGINE_OP%%:*}" != confirm ] && command -v gzip >/dev/null 2>&1 && command -v base64 >/dev/null 2>&1; then
    printf 'host\tgzip base64\n' 2>/dev/null || :
  fi
}
nt_engine_main() {
  # "live": the read-only live read (nt_live_main); previews send a tree-shaken copy on stdin (programs.ts liveProgram). "apply-*@TOKEN": the repair token
  # of a live preview (recorded by nt_converged_write).
  if [ "$NT_ENGINE_OP" = live ]; then nt_live_main; exit 0; fi
  if [ "$NT_ENGINE_OP" = restore ]; then
    case "$NT_ENGINE_KIND" in
      sysctl) nt_kind_sysctl ;;
      nic) nt_kind_nic ;;
      *) printf 'net-tuning: engine called for kind "%s" (expected sysctl or nic)\n' "$NT_ENGINE_KIND" >&2; exit 5 ;;
    esac
    # shellcheck disable=SC2034 # read by nt_restore_report (runtime.sh)
    NT_RESTORED_BY="engine ${0##*/}"
    nt_restore_main
  fi
  case "$NT_ENGINE_OP" in
    # the reverter of a confirmed apply (runtime.sh nt_confirm_spawn): never from a session
    revert:*:*)
      case "$NT_ENGINE_KIND" in sysctl) nt_kind_sysctl ;; nic) nt_kind_nic ;; *) exit 5 ;; esac
      nt_ops=${NT_ENGINE_OP#revert:}
      nt_revert_main "${nt_ops%%:*}" "${nt_ops#*:}" ;;
  esac
  case "$NT_ENGINE_OP" in *@*) NT_REPAIR=${NT_ENGINE_OP#*@}; NT_ENGINE_OP=${NT_ENGINE_OP%%@*} ;; esac
  trap 'nt_engine_exit $?' EXIT

  case "$NT_ENGINE_OP" in
    apply-create) NT_APPLY_MODE=create ;;
    apply-update | confirm:*:*) NT_APPLY_MODE=update ;;
    *) printf 'net-tuning: engine called with operation "%s" (expected apply-create or apply-update)\n' "$NT_ENGINE_OP" >&2; exit 5 ;;
  esac
  export NT_APPLY_MODE
  NT_REPORT_SAME=''
  # shellcheck disable=SC2034 # NT_REPORT_SAME is read by nt_report_body (runtime.sh)
  case "$NT_ENGINE_KIND" in
    sysctl) NT_REPORT_SAME=omit; nt_kind_sysctl ;;
    nic) nt_kind_nic ;;
    *) printf 'net-tuning: engine called for kind "%s" (expected sysctl or nic)\n' "$NT_ENGINE_KIND" >&2; exit 5 ;;
  esac
  case $NT_ENGINE_OP in confirm:*) nt_confirm_main "${NT_ENGINE_OP#confirm:}" ;; esac
  nt_apply_main
}

# The confirm of a confirmed apply (operation "confirm:<owner id>:<token>", the -restore child's create after an apply
# that armed a revert; its stdin is not read): the apply's saved plan run again (runtime.sh nt_confirm_check, under the
# lock: the token must still be armed), which commits.
nt_confirm_main() {
  ntc_w=@confirm ntc_id=${1%%:*} ntc_tok=${1#*:}
  case $ntc_id in '' | *[!A-Za-z0-9._-]*) ntc_w=bad ;; esac
  case $ntc_tok in '' | *[!0-9a-f-]*) ntc_w=bad ;; esac
  case $ntc_w in
    @confirm) NT_CONFIRMING=$ntc_tok
      ntc_p=$NT_ROOT/$NT_ENGINE_KIND/$ntc_id.pending
      ntc_s=''
      if [ -f "$ntc_p/plan" ] && IFS="$NT_TAB" read -r _ _ ntc_s _ < "$ntc_p/armed" 2>/dev/null; then
        { cat "$ntc_p/plan" && printf '@end %s\n' "$ntc_s"; } | nt_apply_main
        exit $?
      fi
      # nothing armed: nt_confirm_check says why (reverted, or superseded)
      NT_OWNER_ID=$ntc_id NT_KIND=$NT_ENGINE_KIND NT_STATE=$NT_ROOT/$NT_ENGINE_KIND
      nt_init; nt_lock; nt_confirm_check ;;
  esac
  printf 'net-tuning: the confirm expects the operation confirm:<owner id>:<token>\n' >&2
  exit 5
}
