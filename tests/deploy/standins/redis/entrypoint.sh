#!/bin/sh
# As the official image's entrypoint: `redis-server` without a config file listens on every interface
# with protected mode off (the container network is the boundary).
set -e
if [ "${1:-}" = "redis-server" ]; then
    case "${2:-}" in
        *.conf) ;;
        *) shift; set -- redis-server --bind 0.0.0.0 --protected-mode no "$@" ;;
    esac
fi
exec "$@"
