# The adoption part of the nic fallback restore (NicQueues adoptRcLocalLines), after restore-nic.sh, only in the
# program of a plan with the "# adopted: rc.local lines" line (provider/host/programs.ts fallbackProgram): nic.sh
# nn_rc_adopt_restore, written for size. After our files are removed (k_files, before systemd's daemon-reload, as the
# engine), rc.local goes back byte for byte (content, mode, owner, mtime: a_w) from the journal's copy
# ($B/nic/<owner id>.rc-adopted: orig, and meta "path<TAB>mode<TAB>uid:gid<TAB>mtime<TAB>cksum of the edited file")
# when it is still as the apply left it; edited since: the original is written next to it and a warning says so.
# A failure exits 1 naming the file, journal kept. Without the journal (Pulumi state keeps no copy of rc.local) a
# warning says the lines could not be given back.
a_put() {
  X=$B/nic/$I.rc-adopted
  if [ -f "$X/meta" ]; then
    IFS=$T read -r ap am ao at as < "$X/meta" || x 1 "cannot read $X/meta; rc.local not put back"
    case $ap in /?*) ;; *) x 1 "bad path '$ap' in $X/meta; rc.local not put back" ;; esac
    ad=$ap
    if [ -f "$ap" ] && [ "$(cksum < "$ap")" != "$as" ]; then
      ad=$ap.net-tuning-adopted-original
      w "$ap was edited after this resource took lines out of it: the original (with the adopted lines) was written to $ad; merge it by hand"
    fi
    a_w "$X/orig" "$ad" "$am" "$ao" "$at" || x 1 "cannot put back $ap (its original stays in $X): run the delete again"
    rm -rf "$X"
    [ ! -e "$X" ] || w "cannot remove $X on $H: remove it by hand"
  elif [ ! -e "$J" ]; then
    w "the rc.local lines this resource adopted were not given back on $H: their only copy was in the host's journal, which is gone"
  fi
}
