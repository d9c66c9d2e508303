#!/bin/sh
# Lab host init: runs as pid 1 of a fresh pid namespace, inside the host's network namespace and a fresh
# private mount + UTS namespace (started by testkit/lab/index.ts as
#   ip netns exec NS unshare --mount --uts --pid --fork --kill-child=KILL --mount-proc --propagation private sh host-init.sh
# ). It builds a private root (copy-on-write overlay of the machine's / on a tmpfs), creates the lab
# users, then execs sshd with Debian's default /etc/ssh/sshd_config. Everything it mounts lives only in
# this mount namespace and disappears with its last process. See testkit/lab/README.md.
#
# Environment (set by index.ts): NTLAB_STAGE (empty dir on the machine, mount point of the host's tmpfs),
# NTLAB_KEYS (dir with root.pub sudo.pub plain.pub host_ed25519_key host_ed25519_key.pub),
# NTLAB_HOSTNAME, NTLAB_SUDO_UID, NTLAB_PLAIN_UID, NTLAB_TMPFS_MB.
set -eu

: "${NTLAB_STAGE:?}" "${NTLAB_KEYS:?}" "${NTLAB_HOSTNAME:?}" "${NTLAB_SUDO_UID:?}" "${NTLAB_PLAIN_UID:?}"
MB=${NTLAB_TMPFS_MB:-256}
S=$NTLAB_STAGE
K=$NTLAB_KEYS

# Drop our copy of the machine's /run/netns mounts: with private propagation they would otherwise pin
# every other network namespace that existed when we started (ip netns del could not free them).
if grep -q ' /run/netns ' /proc/self/mountinfo; then umount -l /run/netns; fi

# 1. private root: overlay (lower = machine's /, upper = this host's tmpfs)
mount -t tmpfs -o mode=0755,size="${MB}m" ntlab-stage "$S"
mkdir "$S/upper" "$S/work" "$S/root"
mount -t overlay ntlab-overlay -o "lowerdir=/,upperdir=$S/upper,workdir=$S/work" "$S/root"
R=$S/root

# Other real (disk) filesystems mounted below / on the machine are not part of the / overlay: give each
# its own overlay so the host sees their content but writes stay private.
awk '{ for (i = 7; i < NF; i++) if ($i == "-") { fs = $(i + 1); break }
       if (fs ~ /^(ext[234]|xfs|btrfs|f2fs|zfs|overlay)$/ && $5 != "/") print $5 }' /proc/self/mountinfo |
  grep -Ev '^/(proc|sys|dev|run|tmp)(/|$)' | grep -Fv "$S" | sort -u | {
  i=0
  while IFS= read -r mp; do
    [ -d "$R$mp" ] || continue
    i=$((i + 1))
    mkdir "$S/upper.$i" "$S/work.$i"
    mount -t overlay "ntlab-sub$i" -o "lowerdir=$mp,upperdir=$S/upper.$i,workdir=$S/work.$i" "$R$mp"
  done
}

# 2. kernel filesystems: proc of our pid namespace, sysfs of our network namespace, the machine's /dev
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=1777,size=64m ntlab-shm "$R/dev/shm"

# /proc/sys read-only except /proc/sys/net (per network namespace): vm.*, fs.*, kernel.* ... of the
# machine cannot be changed from a host. Same for /proc/irq and /proc/sysrq-trigger.
mount --bind "$R/proc/sys" "$R/proc/sys"
mount -o remount,bind,ro "$R/proc/sys"
mount --bind "$R/proc/sys/net" "$R/proc/sys/net"
mount -o remount,bind,rw "$R/proc/sys/net"
for p in irq sysrq-trigger; do
  if [ -e "$R/proc/$p" ]; then mount --bind "$R/proc/$p" "$R/proc/$p" && mount -o remount,bind,ro "$R/proc/$p"; fi
done
# /sys read-only except the network devices of this namespace (queues/rx-*/rps_cpus, tx_queue_len, ...)
mount --bind "$R/sys" "$R/sys"
mount -o remount,bind,ro "$R/sys"
mount --bind "$R/sys/devices/virtual/net" "$R/sys/devices/virtual/net"
mount -o remount,bind,rw "$R/sys/devices/virtual/net"

# 3. fresh, empty, private filesystems (users exist only inside the host: /home and /root start empty)
for d in run tmp var/tmp var/log home root; do
  mount -t tmpfs -o mode=0755,size=64m "ntlab-$(echo "$d" | tr / -)" "$R/$d"
done
chmod 1777 "$R/tmp" "$R/var/tmp"
chmod 0700 "$R/root"
mkdir -p "$R/run/sshd" "$R/run/lock" "$R/run/sysctl.d"
chmod 1777 "$R/run/lock"
: >"$R/var/log/wtmp"
: >"$R/var/log/btmp"
: >"$R/var/log/lastlog"
chmod 0600 "$R/var/log/btmp"

# 4. identity: hostname, users, sudo, keys (all writes land in the host's overlay upper layer)
hostname "$NTLAB_HOSTNAME"
printf '127.0.1.1 %s\n' "$NTLAB_HOSTNAME" >>"$R/etc/hosts"
add_user() { # name uid home
  printf '%s:x:%s:%s:ntlab %s:%s:/bin/bash\n' "$1" "$2" "$2" "$1" "$3" >>"$R/etc/passwd"
  printf '%s:x:%s:\n' "$1" "$2" >>"$R/etc/group"
  printf '%s:*:19000:0:99999:7:::\n' "$1" >>"$R/etc/shadow"
  if [ -f "$R/etc/gshadow" ]; then printf '%s:!::\n' "$1" >>"$R/etc/gshadow"; fi
}
install_key() { # pubkey home uid
  mkdir -p "$R$2/.ssh"
  cp "$1" "$R$2/.ssh/authorized_keys"
  chmod 0700 "$R$2/.ssh"
  chmod 0600 "$R$2/.ssh/authorized_keys"
  chown -R "$3:$3" "$R$2"
  chmod 0755 "$R$2"
}
add_user ntsudo "$NTLAB_SUDO_UID" /home/ntsudo
add_user ntplain "$NTLAB_PLAIN_UID" /home/ntplain
install_key "$K/sudo.pub" /home/ntsudo "$NTLAB_SUDO_UID"
install_key "$K/plain.pub" /home/ntplain "$NTLAB_PLAIN_UID"
install_key "$K/root.pub" /root 0
chmod 0700 "$R/root"
printf 'PS1="# "\n' >"$R/root/.profile"
mkdir -p "$R/etc/sudoers.d"
printf 'ntsudo ALL=(ALL:ALL) NOPASSWD: ALL\n' >"$R/etc/sudoers.d/ntlab-ntsudo"
chmod 0440 "$R/etc/sudoers.d/ntlab-ntsudo"
# per-lab host key; the machine's own host keys are hidden from the host
rm -f "$R"/etc/ssh/ssh_host_*
cp "$K/host_ed25519_key" "$R/etc/ssh/ssh_host_ed25519_key"
cp "$K/host_ed25519_key.pub" "$R/etc/ssh/ssh_host_ed25519_key.pub"
chmod 0600 "$R/etc/ssh/ssh_host_ed25519_key"

# 5. switch root; the machine's tree is no longer reachable from the host
cd "$R"
mkdir -p .ntlab-oldroot
pivot_root . .ntlab-oldroot
cd /
umount -l /.ntlab-oldroot
rmdir /.ntlab-oldroot

# 6. sshd (pid 1 of this pid namespace: its death kills every process of the host). Debian's default
# /etc/ssh/sshd_config, unchanged. CAP_SYS_ADMIN etc. are removed from the bounding set so nothing run
# over SSH (even as root) can remount /proc/sys, leave the namespaces or load kernel modules.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
exec setpriv --bounding-set -sys_admin,-sys_module,-sys_boot,-sys_time,-sys_rawio -- \
  /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config -h /etc/ssh/ssh_host_ed25519_key
