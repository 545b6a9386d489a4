#!/usr/bin/env bash
# apt-get that waits for the apt/dpkg lock instead of failing at once when another apt process
# (unattended upgrades, a second terminal) holds it: `bash scripts/apt_get.sh install -y gnugo`.
# ZERO9_APT_WAIT: seconds to wait in all before giving up (default 600).
set -uo pipefail
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
limit=${ZERO9_APT_WAIT:-600}
start=$SECONDS
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
while true; do
  # apt >= 1.9.11 waits on dpkg's lock by itself for DPkg::Lock::Timeout seconds; the loop also
  # covers the package lists' lock (apt-get update) and older apt.
  status=0
  $SUDO apt-get -o DPkg::Lock::Timeout=10 "$@" 2>"$errors" || status=$?
  if [ "$status" -eq 0 ]; then
    cat "$errors" >&2
    exit 0
  fi
  if ! grep -qiE "could not get lock|unable to lock|unable to acquire" "$errors"; then
    cat "$errors" >&2
    exit $status
  fi
  if (( SECONDS - start >= limit )); then
    cat "$errors" >&2
    echo "apt_get.sh: apt is still locked by another process after ${limit} s" >&2
    exit $status
  fi
  echo "apt_get.sh: waiting for the apt lock (another apt or dpkg is running)..." >&2
  sleep 5
done
