"""Hot, warm and cold long-term memory: archival by age that keeps search fast and old facts findable.

- hot: the main shard collections and every worker's in-process index (memory/longterm, memory/recall);
- warm: archive collections per shard on one Chroma server, searched by exact cosine over the user's
  stored vectors (never Chroma's HNSW index) and BM25, in a per-worker cache of its own;
- cold: Parquet files (one dataset partitioned by user hash and month) on a local path or any fsspec
  URL, loaded for one user when a search asks for cold or hot + warm found nothing relevant.

`tiers` holds the policy (ages) and the per-user archive state in Redis that makes every id answer from
exactly one tier while a move is in progress; `cold` the Parquet store; `view` the reads, deletes and
erasure across tiers; `search` the tier choice of a search; `mover` the archival job.

May import `memory.longterm`, `memory.recall`, `memory.locks`, `memory.keys`, `memory.models` and
`memory.redis_client`; imported by `memory.service`, `memory.governance` and `app`.
"""
