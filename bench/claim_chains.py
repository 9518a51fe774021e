"""How whole the chains of facts that change are in a stored user (issue 45): for each claim key of the
user's own memories, how many statements there are and how many were left current. A fact restated n
times, each statement superseding the one before, has 1 current and n - 1 superseded.

    .venv/bin/python bench/claim_chains.py --chroma http://127.0.0.1:PORT --user tok45-1000000 \\
        [--keys residence car "changed:发布窗口"]

Reads the user's records from the Chroma server of a run kept with `bench/token_history.py
--keep-stores` (its collection found by the records' `user_id`); keys said more than `--min` times
only, unless `--keys` names them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import chromadb  # noqa: E402

from memory.longterm.records import Where  # noqa: E402

PAGE = 1_000


def say(text: str) -> None:
    sys.stdout.write(text + "\n")


def main(args: argparse.Namespace) -> None:
    host, port = args.chroma.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port))
    chains: dict[str, list[bool]] = defaultdict(list)  # key -> superseded?, one per statement
    where: Where = {"$and": [{"user_id": args.user}, {"source": "user"}]}
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if "-xl-" in name:
            continue  # the bridge channel's vectors: no records
        collection = client.get_collection(name, embedding_function=None)
        offset = 0
        while True:
            page = collection.get(where=where, include=["metadatas"], limit=PAGE, offset=offset)
            for meta in page["metadatas"] or []:
                for key, _ in json.loads(str((meta or {}).get("facts") or "[]")):
                    chains[key].append(bool((meta or {}).get("superseded_by")))
            if len(page["ids"]) < PAGE:
                break
            offset += PAGE
    wanted = args.keys or sorted(k for k, v in chains.items() if len(v) >= args.min)
    say("| claim key | statements | current | superseded |")
    say("|---|---:|---:|---:|")
    for key in wanted:
        marks = chains.get(key, [])
        say(f"| {key} | {len(marks)} | {marks.count(False)} | {marks.count(True)} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chroma", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--keys", nargs="*", default=[])
    parser.add_argument("--min", type=int, default=3, help="keys said at least this many times")
    main(parser.parse_args())
