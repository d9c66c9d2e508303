# The adoption part of the sysctl fallback restore (NetTuning adopt), after restore-sysctl.sh, only in the program of a
# plan with @adopted lines (provider/host/programs.ts fallbackProgram): sysctl.sh nts_adopt_directive and
# nts_adopt_restore, written for size. After our files are removed (k_files), every adopted file goes back byte for
# byte (content, mode, owner, mtime: a_w) from the journal's copy ($B/sysctl/<owner id>.adopted: "index" lines
# "path<TAB>how<TAB>mode<TAB>uid:gid<TAB>mtime<TAB>size<TAB>N", the bytes in N; files over 4 KiB too), else from the
# plan's @adopted / @adopted-data (or gzip'd: @adopted-gzip) lines (Pulumi state); /etc/sysctl.conf ("lines") edited since the apply only has
# the marker taken out; then, restoreOnDelete, the values it sets for this resource's keys are applied again and read
# back (a warning each when one does not take, as in the engine). What would lose a file exits 1 naming it (journal
# kept, the delete can run again).
ai=0
# a_dir LINE: "@adopted PATH<TAB>HOW<TAB>MODE<TAB>UID:GID<TAB>MTIME<TAB>SIZE" (six fields, none empty; to A, with its
# number ai), a sysctl file the engine adopts (sysctl.sh nts_adopt_path_ok) removed or with lines marked;
# "@adopted-data BASE64" (to d.ai), "@adopted-gzip BASE64" (to d.ai, z.ai marks it gzip'd); 1 for a bad one (exit 5,
# nothing changed)
a_dir() {
  case $1 in
    '@adopted '*)
      al=${1#* }
      ap=${al%%"$T"*}
      ah=${al#*"$T"}
      case $al in *[!A-Za-z0-9._/:"$T"-]* | *"$T"*"$T"*"$T"*"$T"*"$T"*"$T"*) return 1 ;; *"$T"?*"$T"?*"$T"?*"$T"?*"$T"?*) ;; *) return 1 ;; esac
      case ${ah%%"$T"*} in file | lines) ;; *) return 1 ;; esac
      case ${ap%/*} in /etc/sysctl.d | /run/sysctl.d | /usr/local/lib/sysctl.d | /usr/lib/sysctl.d | /lib/sysctl.d) ;; *) [ "$ap" = /etc/sysctl.conf ] || return 1 ;; esac
      case ${ap##*/} in .* | *[!A-Za-z0-9._-]*) return 1 ;; *.conf) ;; *) return 1 ;; esac
      ai=$((ai + 1))
      printf '%s\t%s\n' "$al" "$ai" >> A
      : > "d.$ai" ;;
    '@adopted-data '* | '@adopted-gzip '*)
      case ${1#* } in *[!A-Za-z0-9+/=]*) return 1 ;; esac
      [ "$ai" != 0 ] || return 1
      case $1 in @adopted-g*) : > "z.$ai" ;; esac
      printf '%s\n' "${1#* }" >> "d.$ai" ;;
    *) return 1 ;;
  esac
}
a_put() {
  X=$B/sysctl/$I.adopted
  ax=$X/index
  [ -f "$ax" ] || { ax=A; : >> A; }
  while IFS=$T read -r ap ah am ao at az an; do
    as=$X/$an
    # no journal copy: the one in Pulumi state
    if [ ! -f "$X/index" ]; then
      as=f.$an
      if [ ! -s "d.$an" ] && [ "$az" != 0 ]; then
        w "cannot put back the adopted $ap on $H: its copy was kept only in the host's journal, which is gone"
        continue
      fi
      { if [ -f "z.$an" ]; then base64 -d < "d.$an" > "g.$an" && gzip -dc < "g.$an" > "$as"; else base64 -d < "d.$an" > "$as"; fi 2>/dev/null &&
        [ "$(wc -c < "$as")" -eq "$az" ]; } || x 1 "cannot decode the adopted $ap from Pulumi state (damaged, or base64/gzip missing): run the delete again"
    fi
    if [ "$ah" = file ] && { [ -e "$ap" ] || [ -L "$ap" ]; } && ! cmp -s "$as" "$ap"; then
      x 1 "cannot put back the adopted $ap: a file of that name exists again with other content: move it away, then run the delete again"
    fi
    # sysctl.conf as the apply left it: the original goes back exactly; edited since: only the marker is taken out
    if [ "$ah" = lines ] && [ -f "$ap" ]; then
      sed 's/^#pulumi-net-tuning-adopted# //' "$ap" > u || x 1 "cannot read $ap"
      if ! cmp -s u "$as"; then
        w "$ap was edited after this resource adopted its lines: only the lines it commented out were given back (marker removed), the rest is as you left it"
        as=u
        at=
      fi
    fi
    a_w "$as" "$ap" "$am" "$ao" "$at" || x 1 "cannot put back the adopted $ap (its copy is kept): run the delete again"
    [ "$R" = 1 ] || continue
    # its values again: the lines that set this resource's keys (sysctl.sh nts_adopt_settings: a key as sysctl(8) reads
    # it, "-" dropped, its first separator "/" makes it a path; the value whitespace-folded)
    awk -F "$T" '
      function d(k) {
        if (k ~ /^[^.\/]*\//) { gsub(/\./, "\001", k); gsub(/\//, ".", k); gsub(/\001/, "/", k) }
        return k
      }
      function s(x) { gsub(/[ \t]+/, " ", x); sub(/^ /, "", x); sub(/ $/, "", x); return x }
      FILENAME == "kv" { h[d($1)]; next }
      /^[ \t]*[#;]/ || !/=/ { next }
      { k = v = $0; sub(/=.*/, "", k); sub(/^[^=]*=/, "", v); k = s(k); sub(/^-/, "", k); if ((k = d(k)) in h) print k "\t" s(v) }' kv "$ap" > av || x 1 "cannot read $ap"
    while IFS=$T read -r k v; do
      case $v in
        '' | *[!A-Za-z0-9\ ._:,+-]*) w "$ap sets $k to a value this program does not write ('$v'): run sysctl -p $ap" ;;
        *)
          k_get "$k" "$v"
          k_set "$k" "$v"
          g=
          k_get "$k" "$v" && c && continue
          w "$k = $v from the adopted $ap did not take on $H (reads '$g'): run sysctl -p $ap" ;;
      esac
    done < av
  done < "$ax"
  # the journal's copies go with the journal
  rm -rf "$X"
  [ ! -e "$X" ] || w "cannot remove $X on $H: remove it by hand"
}
