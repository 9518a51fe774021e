#!/usr/bin/env bash
# Stand-ins for the third-party images the compose files name, for a machine without an image registry
# (../../../../shared/DOCKER.md): a Debian bookworm base from debootstrap, imported as local/debian:bookworm,
# and on it python:3.11-slim, redis:7-alpine, chromadb/chroma:1.5.9 and nginx:1.28-alpine (Debian's nginx 1.22),
# each tagged with the exact name the compose files use, so those files run unchanged.
# An image that already exists (a real one, or a stand-in from an earlier run) is left alone.
# A stand-in behaves as the real image does where the compose files rely on it: default command,
# ports, data path (/data), the tools the healthchecks call (redis-cli, bash, python, wget).
#
# Machine-specific part: the python stand-in trusts this machine's CA bundle ($PIP_CERT) in pip's
# configuration, because builds reach PyPI through a TLS-intercepting proxy here. The Dockerfile itself
# needs nothing of that: against the real python:3.11-slim it installs from PyPI as is.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
docker_cli="${DOCKER_CLI:-/usr/bin/docker}"
ca_bundle="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}"

log() { printf '%s standins: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
have() { "$docker_cli" image inspect "$1" >/dev/null 2>&1; }
# every image made here carries this label: `make deploy-clean` removes by it, never a real image of the
# same name
label="org.mnemo.deploy-suite=standin"
build() {  # build TAG DIR: classic builder on the host network (no default bridge here)
    log "building $1"
    DOCKER_BUILDKIT=0 nice "$docker_cli" build -q --network host --label "$label" -t "$1" "$2" >/dev/null
}

if ! have local/debian:bookworm; then
    root="$(mktemp -d /tmp/mnemo-debootstrap.XXXXXX)"
    log "debootstrap --variant=minbase bookworm (about 30 s)"
    nice debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -c . | "$docker_cli" import --change "LABEL $label" - local/debian:bookworm >/dev/null
    rm -rf "$root"
fi

if ! have python:3.11-slim; then
    ctx="$(mktemp -d)"
    cp "$here/python.Dockerfile" "$ctx/Dockerfile"
    cp "$ca_bundle" "$ctx/host-ca.crt"
    build python:3.11-slim "$ctx"
    rm -rf "$ctx"
fi

have redis:7-alpine || build redis:7-alpine "$here/redis"
have chromadb/chroma:1.5.9 || build chromadb/chroma:1.5.9 "$here/chroma"
have nginx:1.28-alpine || build nginx:1.28-alpine "$here/nginx"
log "stand-ins ready"
