#!/bin/sh
# Installs the Debian packages the lab, the VM tier and the demo need, when they are missing.
# Used by `npm test` / `npm run demo` (pretest / predemo) and by .ci/run. Needs root and apt-get for an install.
set -u
PKGS="openssh-server openssh-client ethtool iproute2 procps sudo shellcheck kmod util-linux passwd diffutils systemd busybox zsh"
PKGS="$PKGS debootstrap qemu-system-x86 qemu-utils e2fsprogs chromium"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "net-tuning: missing Debian packages:$missing. Install them as root (apt-get install$missing); the lab tests and the demo also need root." >&2
  exit 1
fi
echo "net-tuning: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || { echo "net-tuning: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086 # a list of package names
apt-get install -y -qq --no-install-recommends $missing >/dev/null || { echo "net-tuning: apt-get install failed:$missing" >&2; exit 1; }
