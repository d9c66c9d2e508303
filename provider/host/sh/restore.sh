# pulumi-net-tuning fallback restore
# Run by the restore bootstrap (provider/host/programs.ts RESTORE_BOOT). Its first step runs the installed engine the
# plan names instead, when that exact file is there (its sha256), root's, in a root-owned directory. Otherwise it
# restores: a second, minimal implementation of the engine's restore (runtime.sh nt_restore_main), written for size:
# it travels gzip|base64 in the -restore child's stdin (Pulumi state), assembled from this file and restore-<kind>.sh
# with comments, indentation and the leading comment lines stripped. Same host lock, exit codes (1 failed, 2 flock
# missing, 3 not root, 4 lock busy, 5 bad plan) and generation check as the engine; every value is read back.
# The kind part defines: RK (its kind), k_dir LINE (a kind directive; 1 = unknown), k_ok KEY VALUE (valid?),
# k_get KEY ORIGINAL (g = the live value, e = the original as it reads back; 1 = the key is absent, 2 = it cannot be
# read now: z says why), k_set KEY ORIGINAL (called after k_get of the same key; z = the tool's answer on failure),
# k_files (removes the files this owner wrote, with ours/rmf; the journal's artefacts are in $D/a; then calls a_put
# where the engine calls kind_after_restore). A plan that adopts gets the kind's adoption part too
# (restore-adopt-<kind>.sh, last): it redefines the kind part's stubs a_put and (sysctl) a_dir, and uses a_w below.
# $1: the bootstrap's private directory (this program, its stdin as the file `in`); $2: the SSH user's staging
# directory (sudo); $3: the token of the resource's engine delivery (its staged file goes with the host's last journal).
# (shellcheck: functions are called from r_main; variables are shared with the kind part; $B needs no quotes;
# y splits words on purpose)
# shellcheck disable=SC2317,SC2034,SC2154,SC2231,SC2086
set -u
umask 022
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH" LC_ALL=C
T='	'
D=$1
S=
V=${3:-}
case ${2:-} in /*/.cache/pulumi-net-tuning) [ -L "$2" ] || S=$2 ;; esac
case $V in *[!A-Za-z0-9._-]* | [._-]*) V= ;; esac
H=$(uname -n)
B=/var/lib/pulumi-net-tuning
# messages go to fd 3 (the real stderr); everything else a tool says on stderr is dropped
exec 3>&2 2> /dev/null
# x CODE MESSAGE: says it (naming the host), removes the work directory, exits CODE
x() {
  echo "net-tuning: $2 on $H (fallback restore)" >&3
  rm -rf "$D"
  exit "$1"
}
w() { echo "$*" >> "$D/w"; }
# y VALUE: n = its words joined by single spaces (the kernel reads multi-values back tab-separated)
y() {
  set -f
  set -- $1
  set +f
  n="$*"
}
# c: the live value g equals the expected e (both whitespace-folded)
c() {
  y "$e"
  e=$n
  y "$g"
  [ "$n" = "$e" ]
}
ours() { [ -f "$1" ] && grep -qxF "# pulumi-net-tuning owner: $O" "$1"; }
rmf() {
  rm -f "$1"
  if [ -e "$1" ] || [ -L "$1" ]; then x 1 "values restored, but cannot remove $1"; fi
}
# a_w SOURCE DEST MODE UID:GID MTIME: DEST = the bytes of SOURCE with that mode, owner and modification time (seconds
# since the epoch, with a fraction where touch takes one; empty: now), written next to DEST and renamed over it; 1
# when a step fails (the temporary file removed, DEST as it was). For the adoption parts (restore-adopt-<kind>.sh).
a_w() {
  aq=${2%/*}/.${2##*/}.net-tuning-adopt
  rm -f "$aq"
  { cat "$1" > "$aq" && chmod "$3" "$aq" && chown "$4" "$aq" && { [ -z "$5" ] || touch -c -d "@$5" "$aq" || touch -c -d "@${5%.*}" "$aq"; } && mv -f "$aq" "$2"; } && return
  rm -f "$aq"
  return 1
}
# the report (nobody parses a delete's output): which program ran, the warnings
rep() {
  printf 'net-tuning-report v1\nrestored-by\tfallback\n'
  sed 's/^/warning\t/' "$D/w"
  echo end
  rm -rf "$D"
  exit 0
}
r_main() {
  trap '' HUP PIPE
  case $D in /tmp/net-tuning-in.*) [ -O "$D" ] || exit 1 ;; *) exit 1 ;; esac
  # the installed engine the plan names (its second line) restores when it is there, root's and intact (its sha256)
  { read -r l; read -r l l v; } < "$D/in"
  case $v in *[!0-9a-f]* | '') ;; *)
    l=/usr/local/lib/pulumi-net-tuning/engine-$v.sh
    [ -O "$l" ] && [ -O "${l%/*}" ] && [ "$(sha256sum < "$l")" = "$v  -" ] && exec /bin/sh "$l" $RK restore "$D" "$S" "$V" 2>&3 3>&- ;;
  esac
  [ "$(id -u)" = 0 ] || x 3 'must run as root: connect as root or set become: "sudo" (NOPASSWD)'
  cd "$D" && : > o && : > w && : > a || exit 1
  K='' O='' I='' G='' R=1 h=0
  while read -r l; do
    v=${l#* }
    case $l in
      @program) break ;;
      '@net-tuning v1') h=1 ;;
      '@engine '* | '@secret '* | '#'* | '') ;;
      '@kind '*) K=$v ;;
      '@owner '*) O=$v ;;
      '@owner-id '*) I=$v ;;
      '@generation '*) G=$v ;;
      '@restore '*) R=$v ;;
      '@orig '*) printf '%s\n' "$v" >> o ;;
      *) k_dir "$l" || x 5 "bad plan line '$l'" ;;
    esac
  done
  [ "$h$K" = "1$RK" ] || x 5 "stdin is not a $RK plan"
  case $I$O$G in *[!A-Za-z0-9._:/@\ -]*) x 5 "bad owner or generation" ;; esac
  case $I in '' | *[!A-Za-z0-9._-]*) x 5 "bad owner id" ;; esac
  J=$B/$K/$I.orig
  # the engine's host lock (runtime.sh nt_lock)
  command -v flock > /dev/null || x 2 "flock missing: install util-linux"
  L=/run/pulumi-net-tuning.lock
  [ -d /run ] || { L=$B/.flock; [ -d $B ] || mkdir -m 700 $B; }
  # (a failing redirection of exec would end the shell without a word: try it on a regular builtin first)
  true >> $L || x 1 "cannot open $L"
  exec 9>> $L
  i=0
  until flock -n 9; do
    i=$((i + 1))
    [ $i -le 120 ] || x 4 "$L held by another run for 60 s; nothing changed: retry"
    sleep 0.5 || sleep 1
  done
  # the journal: its committed generation decides (line 1's last field: a create's pending generation comes before
  # it, runtime.sh nt_journal_load), its originals (the first recorded here) win over the plan's
  j=/dev/null
  if [ -e "$J" ]; then
    j=$J
    IFS= read -r l < "$J"
    case $l in
      "net-tuning-journal v2$T$I$T"*)
        l=${l##*"$T"}
        if [ -n "$G" ] && [ -n "$l" ] && [ "$G" != "$l" ]; then
          w "restore skipped on $H: a newer apply of this resource (generation $l, not $G) owns this machine now; nothing was changed"
          cat w >&3
          rep
        fi ;;
      net-tuning-journal*) x 1 "$J is another owner's; nothing restored" ;;
    esac
  else
    w "the host's journal $J is missing; restoring the originals kept in Pulumi state"
  fi
  awk -F "$T" 'FNR == 1 && /^net-tuning-journal/ { next } $1 == "artefact" { print $2 > "a"; next } $1 != "" && !s[$1]++' "$j" o > kv || x 1 "cannot read $J"
  # every original validated before anything changes
  while IFS=$T read -r k v; do k_ok "$k" "$v" || x 5 "bad original $k = '$v'; nothing restored"; done < kv
  f=
  while [ "$R" = 1 ] && IFS=$T read -r k v; do
    k_get "$k" "$v"
    case $? in
      1) w "$k no longer exists on $H: its original '$v' was not restored" ;;
      0) c || {
        z=
        k_set "$k" "$v" < /dev/null || z="refused: $z"
        k_get "$k" "$v"
        c || { f="$f $k"; echo "net-tuning: $k = '$v' not restored on $H: reads '$g' $z" >&3; }
      } ;;
      *) f="$f $k"; echo "net-tuning: $k = '$v' not restored on $H: $z" >&3 ;;
    esac
  done < kv
  [ -z "$f" ] || x 1 "could not restore$f; journal and boot files kept: run the delete again"
  k_files
  rm -f "$J" "${J%.orig}.owner" $B-converged/"$I"
  [ ! -e "$J" ] || x 1 "values and files restored, but cannot remove $J: remove it by hand"
  rmdir $B-converged
  # this owner's own staged engine copy (a delivery of its own: engine.<owner id>.sh); with the last journal: the
  # delivery's (engine.<token>.sh), then the installed engines and the empty directories this product made (copies of
  # other stacks or of 0.2.0 are left to the engine's clean-up)
  rm -f "$B/incoming/engine.$I.sh" "${S:-/-}/engine.$I.sh"
  for f in $B/*/*.orig; do [ ! -e "$f" ] || { rmdir "${S:-/-}"; rep; }; done
  [ -z "$V" ] || rm -f "$B/incoming/engine.$V.sh" "${S:-/-}/engine.$V.sh"
  rmdir "${S:-/-}"
  l=/usr/local/lib/pulumi-net-tuning
  [ ! -O $l ] || [ -L $l ] || rm -f $l/engine-*.sh
  rmdir $l $B/incoming $B/sysctl $B/nic $B
  rep
}
