"""Mint a JWT for local use:  python -m app.cli.token --sub alice [--role admin] [--ttl 3600]

The secret comes from AUTH_JWT_SECRET (environment or .env), exactly as the service reads it.
"""

from __future__ import annotations

import argparse
import sys

from app.composition import token_codec
from app.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.cli.token", description=__doc__.splitlines()[0])
    parser.add_argument("--sub", required=True, help="user id the token speaks for")
    parser.add_argument("--role", default=None, help="'admin' may act for any user")
    parser.add_argument("--ttl", type=int, default=3600, help="lifetime in seconds (default 3600)")
    args = parser.parse_args(argv)
    if args.ttl <= 0:
        parser.error("--ttl must be positive")
    try:
        codec = token_codec(Settings())
    except ValueError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    sys.stdout.write(codec.mint(args.sub, role=args.role, ttl_seconds=args.ttl) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
