#!/usr/bin/env bash
# Make sure a Docker engine answers, for the compose suite (tests/deploy): install Debian's docker.io
# (dockerd, containerd, runc, the CLI at /usr/bin/docker) and debootstrap (the stand-in base image)
# when running as root, then start dockerd when none answers.
# The daemon it starts keeps running for later steps of the same run; it never stops a daemon.
# See ../shared/DOCKER.md (why --iptables=false --bridge=none: no default bridge, builds use the host
# network; compose's user-defined networks still work, with container DNS).
set -euo pipefail

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
[ -x /usr/bin/docker ] || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "==> installing ${need[*]} (Debian packages)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    else
        echo "dockerd/debootstrap are missing and this user cannot install them." >&2
        echo "Install Docker (https://docs.docker.com/engine/install/) and debootstrap, then retry." >&2
        exit 1
    fi
fi

if /usr/bin/docker info >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "no Docker daemon answers and this user cannot start one: start dockerd, then retry." >&2
    exit 1
fi
log="${DOCKERD_LOG:-/tmp/mnemo-dockerd.log}"
echo "==> starting dockerd (log: $log)"
nohup dockerd --storage-driver=overlay2 --iptables=false --ip6tables=false --bridge=none >"$log" 2>&1 &
echo "$!" >/tmp/mnemo-dockerd.pid
for _ in $(seq 1 60); do
    if /usr/bin/docker info >/dev/null 2>&1; then
        echo "==> dockerd answers (pid $(cat /tmp/mnemo-dockerd.pid))"
        exit 0
    fi
    sleep 1
done
echo "dockerd did not answer within 60 s; its log:" >&2
tail -n 30 "$log" >&2
exit 1
