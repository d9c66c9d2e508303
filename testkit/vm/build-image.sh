#!/bin/bash
# Build (or reuse) a Debian guest image of the VM test tier.
#
# Usage: build-image.sh [bullseye|bookworm|trixie]   (default bookworm; or $NT_VM_SUITE)
#
# Output directory: ${NT_VM_CACHE:-/var/cache/net-tuning-vm}/<recipe>-<suite>/ where <recipe> is the
# first 16 hex digits of the sha256 of THIS file: any change to this script rebuilds, nothing else
# does. Each suite has its own image (and its own distribution kernel).
# Contents: rootfs.img (raw ext4, read-only base for qcow2 overlays), vmlinuz, initrd.img (the
# guest's own kernel and initramfs), id_root / id_ntsudo (+ .pub: generated client keys),
# ssh_host_ed25519_key.pub, manifest.txt, ready.
#
# Needs root and the Debian packages: debootstrap, e2fsprogs (mke2fs -d), util-linux (flock),
# coreutils. Only Debian packages go into the guest, fetched by debootstrap from the mirror that
# the host's apt uses (or $NT_VM_MIRROR).
#
# Last lines on stdout (machine-readable, parsed by testkit/vm/index.ts):
#   NT_VM_DIR=<dir>  NT_VM_BUILT=0|1  NT_VM_BUILD_SECONDS=<n>
set -euo pipefail

SUITE=${1:-${NT_VM_SUITE:-bookworm}}
case "$SUITE" in
  bullseye | bookworm | trixie) ;;
  *) echo "build-image.sh: suite must be bullseye, bookworm or trixie, not '$SUITE'" >&2; exit 2 ;;
esac
# Guest packages (besides minbase). Interface naming and initramfs contents are set below.
# irqbalance is installed but disabled: the IRQ affinity test starts it to check the warning.
PACKAGES="systemd,systemd-sysv,udev,dbus,libpam-systemd,openssh-server,sudo,ethtool,iproute2,procps,kmod,e2fsprogs,irqbalance"
KERNEL_PACKAGE=linux-image-amd64
IMAGE_SIZE=3G

SCRIPT=$(readlink -f "$0")
RECIPE=$(sha256sum "$SCRIPT" | cut -c1-16)
CACHE_ROOT=${NT_VM_CACHE:-/var/cache/net-tuning-vm}
OUT=$CACHE_ROOT/$RECIPE-$SUITE
START=$(date +%s)

log() { printf '[build-image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

report() { # $1 = built (0|1)
  touch "$OUT/last-used"
  # Forget images of other recipes that nobody used for 7 days (each is ~700 MB).
  find "$CACHE_ROOT" -mindepth 2 -maxdepth 2 -name last-used -mtime +7 -printf '%h\n' 2>/dev/null |
    while read -r old; do
      if [[ ${old##*/} =~ ^[0-9a-f]{16}(-[a-z]+)?$ ]] && [[ ${old##*/} != "$RECIPE"-* ]]; then
        rm -rf --one-file-system "$old" && log "removed unused image $old"
      fi
    done || true
  printf 'NT_VM_DIR=%s\nNT_VM_BUILT=%s\nNT_VM_BUILD_SECONDS=%s\n' "$OUT" "$1" "$(($(date +%s) - START))"
}

if [ -f "$OUT/ready" ]; then
  report 0
  exit 0
fi

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot)"
for tool in debootstrap mke2fs flock chroot sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "missing $tool (apt-get install debootstrap e2fsprogs util-linux)"
done

# The mirror apt already uses for $1 (deb822 .sources first, then one-line .list files).
detect_mirror() {
  local f SUITE=$1
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v want="$SUITE" '
      function flush() {
        if (!found && enabled != "no" && (" " types " ") ~ / deb / && (" " suites " ") ~ (" " want " ") && uris != "") {
          split(uris, u, " "); print u[1]; found = 1
        }
        types = ""; suites = ""; uris = ""; enabled = ""
      }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      tolower($1) == "types:"   { $1 = ""; types = $0 }
      tolower($1) == "suites:"  { $1 = ""; suites = $0 }
      tolower($1) == "uris:"    { $1 = ""; uris = $0 }
      tolower($1) == "enabled:" { enabled = tolower($2) }
      END { flush() }' "$f"
  done
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } | awk -v want="$SUITE" '
    $1 == "deb" {
      i = 2
      if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) == want) print $i
    }'
}
# A Debian mirror carries every suite: when the host's apt names only another release (a bookworm
# host building the bullseye image), its mirror for that release is used with the wanted suite.
MIRROR=${NT_VM_MIRROR:-}
for s in "$SUITE" bookworm bullseye trixie; do
  [ -n "$MIRROR" ] || MIRROR=$(detect_mirror "$s" | awk 'NR == 1')
done
[ -n "$MIRROR" ] || die "no Debian apt source found in /etc/apt/sources.list(.d); set NT_VM_MIRROR"

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock-$SUITE"
log "waiting for the build lock $CACHE_ROOT/.lock-$SUITE (at most 1800 s)"
flock -w 1800 9 || die "build lock busy for 30 min"
if [ -f "$OUT/ready" ]; then # built by someone else while we waited
  report 0
  exit 0
fi

WORK=$(mktemp -d "$CACHE_ROOT/.build-$RECIPE-$SUITE-XXXXXX")
ROOT=$WORK/root
cleanup() {
  local m
  for m in "$ROOT/sys" "$ROOT/proc" "$ROOT/dev/pts"; do
    if mountpoint -q "$m" 2>/dev/null; then umount -l "$m" || true; fi
  done
  if grep -q " $WORK/" /proc/mounts; then
    log "something is still mounted under $WORK: not removing it"
  else
    rm -rf --one-file-system "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

log "recipe $RECIPE, suite $SUITE, mirror $MIRROR, work dir $WORK"
t0=$(date +%s)
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
  { tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
log "debootstrap done in $(($(date +%s) - t0)) s"

in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }

# --- initramfs: only what is needed to mount /dev/vda, plus e1000e --------------------------
# e1000e is loaded inside the initramfs and virtio_net only after switch_root, so with
# net.ifnames=0 the kernel names are deterministic: eth0 = e1000e, eth1 = virtio-net.
mkdir -p "$ROOT/etc/initramfs-tools/conf.d"
cat >"$ROOT/etc/initramfs-tools/conf.d/net-tuning-vm.conf" <<'EOF'
MODULES=list
COMPRESS=gzip
EOF
cat >"$ROOT/etc/initramfs-tools/modules" <<'EOF'
virtio_pci
virtio_blk
crc32c_generic
ext4
e1000e
EOF

# No service may start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod 0755 "$ROOT/usr/sbin/policy-rc.d"

t0=$(date +%s)
mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
# A release that packages systemd-networkd separately gets it here (bullseye, bookworm and trixie
# still ship it inside systemd).
EXTRA=
if [ ! -e "$ROOT/lib/systemd/systemd-networkd" ] && [ ! -e "$ROOT/usr/lib/systemd/systemd-networkd" ]; then
  EXTRA=systemd-networkd
fi
# shellcheck disable=SC2086 # EXTRA is empty or one package name
in_root apt-get install -y -q --no-install-recommends "$KERNEL_PACKAGE" $EXTRA >"$WORK/kernel.log" 2>&1 ||
  { tail -n 30 "$WORK/kernel.log" >&2; die "installing $KERNEL_PACKAGE $EXTRA failed"; }
umount "$ROOT/sys" "$ROOT/proc"
log "kernel installed in $(($(date +%s) - t0)) s"

# --- system configuration -------------------------------------------------------------------
echo nt-vm >"$ROOT/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tnt-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
printf '/dev/vda\t/\text4\trw,errors=remount-ro\t0\t0\n' >"$ROOT/etc/fstab"

# Both NICs by DHCP (each sits on its own QEMU user-mode subnet).
mkdir -p "$ROOT/etc/systemd/network"
cat >"$ROOT/etc/systemd/network/20-nt-dhcp.network" <<'EOF'
[Match]
Name=eth*

[Network]
DHCP=ipv4
LinkLocalAddressing=no
IPv6AcceptRA=no
EOF
in_root systemctl enable systemd-networkd.service >/dev/null 2>&1
# irqbalance would move IRQs during the tests; the IRQ affinity test starts it itself.
in_root systemctl disable irqbalance.service >/dev/null 2>&1
# Nothing waits for "network online" (sshd does not need it) and no timers run during tests.
# e2scrub_reap alone costs ~7 s of a TCG boot.
in_root systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
  e2scrub_reap.service e2scrub_all.timer >/dev/null 2>&1

# Users and keys: root and ntsudo (passwordless sudo), keys generated here, not in the repository.
KEYS=$WORK/out
mkdir -p "$KEYS"
in_root useradd -m -s /bin/bash -G sudo ntsudo
in_root usermod -p '*' ntsudo
printf 'ntsudo ALL=(ALL) NOPASSWD:ALL\n' >"$ROOT/etc/sudoers.d/ntsudo"
chmod 0440 "$ROOT/etc/sudoers.d/ntsudo"
for who in root ntsudo; do
  rm -f "$ROOT/tmp/id_$who" "$ROOT/tmp/id_$who.pub"
  in_root ssh-keygen -q -t ed25519 -N '' -C "net-tuning-vm-$who" -f "/tmp/id_$who"
  mv "$ROOT/tmp/id_$who" "$ROOT/tmp/id_$who.pub" "$KEYS/"
  if [ "$who" = root ]; then home=/root; else home=/home/$who; fi
  install -d -m 0700 "$ROOT$home/.ssh"
  install -m 0600 "$KEYS/id_$who.pub" "$ROOT$home/.ssh/authorized_keys"
  in_root chown -R "$who:$who" "$home/.ssh"
done
chmod 0600 "$KEYS"/id_root "$KEYS"/id_ntsudo
cp "$ROOT/etc/ssh/ssh_host_ed25519_key.pub" "$KEYS/"
# openssh-server keeps its default configuration (AcceptEnv LANG LC_*, PermitRootLogin prohibit-password).

# Shrink and tidy.
rm -f "$ROOT/usr/sbin/policy-rc.d" "$ROOT/etc/resolv.conf"
in_root apt-get clean
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/log/*.log "$ROOT"/tmp/* "$ROOT"/var/tmp/*

# --- kernel, initramfs, disk image ----------------------------------------------------------
KVER=$(basename "$(find "$ROOT/boot" -maxdepth 1 -name 'vmlinuz-*' | sort | tail -n 1)")
KVER=${KVER#vmlinuz-}
if [ -z "$KVER" ] || [ ! -f "$ROOT/boot/initrd.img-$KVER" ]; then
  die "no kernel/initramfs found in the guest's /boot"
fi
cp "$ROOT/boot/vmlinuz-$KVER" "$KEYS/vmlinuz"
cp "$ROOT/boot/initrd.img-$KVER" "$KEYS/initrd.img"

t0=$(date +%s)
mke2fs -q -t ext4 -L nt-root -d "$ROOT" "$KEYS/rootfs.img" "$IMAGE_SIZE"
chmod 0444 "$KEYS/rootfs.img"
log "rootfs.img written in $(($(date +%s) - t0)) s"

{
  echo "recipe=$RECIPE"
  echo "suite=$SUITE"
  echo "mirror=$MIRROR"
  echo "kernel=$KVER"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "build_seconds=$(($(date +%s) - START))"
  echo "packages:"
  # shellcheck disable=SC2016 # dpkg-query format, not shell
  in_root dpkg-query -W -f '  ${Package} ${Version}\n'
} >"$KEYS/manifest.txt"
touch "$KEYS/ready"

rm -rf "$OUT"
mv "$KEYS" "$OUT"
log "image ready in $OUT after $(($(date +%s) - START)) s"
report 1
