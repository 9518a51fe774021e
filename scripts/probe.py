"""Tiny readiness probes used by scripts/run.sh (stdlib + redis-py only).

python scripts/probe.py redis  URL [--wait SECONDS]   exit 0 when Redis answers PING
python scripts/probe.py chroma URL [--wait SECONDS]   exit 0 when /api/v2/heartbeat answers
python scripts/probe.py port   URL                    print the URL's port
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.request
from urllib.parse import urlsplit


def redis_ok(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1).ping())
    except Exception:
        return False


def chroma_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/api/v2/heartbeat", timeout=1) as resp:  # noqa: S310
            return bool(resp.status == 200)
    except Exception:
        return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["redis", "chroma", "port"])
    parser.add_argument("url")
    parser.add_argument("--wait", type=float, default=0.0)
    args = parser.parse_args()
    if args.kind == "port":
        parts = urlsplit(args.url)
        sys.stdout.write(f"{parts.port or (6379 if parts.scheme.startswith('redis') else 80)}\n")
        return 0
    check = redis_ok if args.kind == "redis" else chroma_ok
    deadline = time.monotonic() + args.wait
    while True:
        if check(args.url):
            return 0
        if time.monotonic() >= deadline:
            return 1
        time.sleep(0.25)


if __name__ == "__main__":
    raise SystemExit(main())
