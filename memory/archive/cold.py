"""Cold long-term memory: Parquet files on a local path or any fsspec URL (`s3://bucket/prefix`).

One dataset, Hive-partitioned by user hash and month of `created_at`:

    <root>/user_hash=3f/month=2025-06/part-<user digest>-<uuid>.parquet

Each file holds the rows of one user written by one archive move (the digest names no one); rows carry
the memory as stored (`id`, `user_id`, `created_at`, `content`, the full Chroma metadata as JSON in
`metadata`, the vector in `embedding`), `archived_at`, and `dense_model`: the tag of the dense model
that made the vector (memory/longterm/dense_models.py; null in rows archived before rows carried one,
and absent from files written before: such a row's model is the one the collection prefix was first
started with; after a switch to a model of another size, a user's rows are of two sizes until the
re-embed: `read_rows` reads them as stored). An admin reads the dataset with DuckDB (docs/memory.md;
`union_by_name = true` to read `dense_model` across old and new files); mnemo reads one user's rows,
only when a search or governance call asks.

Files are never changed in place: a delete or an erase writes a new file without the rows and then
removes the old one (readers de-duplicate by id meanwhile). Every call is blocking I/O: callers run it
in a worker thread (`anyio.to_thread`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import logging
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.core import url_to_fs

from memory.archive.sizes import stacked
from memory.embedding.base import Vectors
from memory.longterm.chroma import from_record
from memory.models import Memory

log = logging.getLogger(__name__)

HASH_BUCKETS = 256
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("user_id", pa.string()),
        ("created_at", pa.float64()),
        ("content", pa.string()),
        ("metadata", pa.string()),
        ("embedding", pa.list_(pa.float32())),
        ("archived_at", pa.float64()),
        ("dense_model", pa.string()),
    ]
)
MODEL_FIELD = "dense_model"  # the warm metadata key and the cold column naming a vector's dense model


def user_hash(user_id: str) -> str:
    """The partition of a user: 2 hex digits of blake2b (256 partitions), stable across releases."""
    return hashlib.blake2b(user_id.encode("utf-8"), digest_size=1).hexdigest()


def user_digest(user_id: str) -> str:
    return hashlib.blake2b(user_id.encode("utf-8"), digest_size=8).hexdigest()


def month_of(created_at: float) -> str:
    return dt.datetime.fromtimestamp(created_at, tz=dt.UTC).strftime("%Y-%m")


@dataclass(frozen=True, slots=True)
class ColdRows:
    """Rows to write: one user's records with their stored metadata and vectors."""

    ids: list[str]
    documents: list[str | None]
    metadatas: list[dict[str, Any]]
    embeddings: Vectors

    def __len__(self) -> int:
        return len(self.ids)


class ColdStore:
    def __init__(self, root: str, *, storage_options: Mapping[str, Any] | None = None) -> None:
        """`root`: a directory or fsspec URL (`s3://bucket/archive`); `storage_options` go to fsspec
        (for s3fs: `key`, `secret`, `client_kwargs={"endpoint_url": ...}`)."""
        self._fs, self._root = url_to_fs(root, **dict(storage_options or {}))
        self._root = self._root.rstrip("/")
        self.url = root

    # -- paths --------------------------------------------------------------------------------------

    def partition(self, user_id: str) -> str:
        return f"{self._root}/user_hash={user_hash(user_id)}"

    def plan_files(self, user_id: str, created_at: Iterable[float]) -> dict[str, str]:
        """month -> the new file a move writes that month's rows to (named before anything is written,
        so a crashed move's files are known)."""
        tag = f"{user_digest(user_id)}-{uuid.uuid4().hex[:12]}"
        return {
            month: f"{self.partition(user_id)}/month={month}/part-{tag}.parquet"
            for month in sorted({month_of(t) for t in created_at})
        }

    def files_of(self, user_id: str) -> list[str]:
        """Every file of this user's partition that may hold their rows (named with their digest)."""
        return [f for f in self._partition_files(user_id) if f"part-{user_digest(user_id)}-" in f]

    def _partition_files(self, user_id: str) -> list[str]:
        base = self.partition(user_id)
        self._fs.invalidate_cache()  # object stores cache listings; another process may have written
        if not self._fs.exists(base):
            return []
        return sorted(str(p) for p in self._fs.glob(f"{base}/month=*/*.parquet"))

    def all_files(self) -> list[str]:
        self._fs.invalidate_cache()
        if not self._fs.exists(self._root):
            return []
        return sorted(str(p) for p in self._fs.glob(f"{self._root}/user_hash=*/month=*/*.parquet"))

    # -- writes -------------------------------------------------------------------------------------

    def write(self, user_id: str, rows: ColdRows, files: Mapping[str, str], *, archived_at: float) -> None:
        """Write each month's rows to its planned file."""
        by_month: dict[str, list[int]] = {}
        for row, meta in enumerate(rows.metadatas):
            if meta.get("user_id") != user_id:
                raise ValueError("every row must be this user's")
            by_month.setdefault(month_of(float(meta["created_at"])), []).append(row)
        for month, chosen in by_month.items():
            self._write_table(files[month], _table(rows, chosen, archived_at))

    def _write_table(self, path: str, table: pa.Table) -> None:
        self._fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        buffer = io.BytesIO()
        pq.write_table(table, buffer, compression="snappy")
        with self._fs.open(path, "wb") as f:
            f.write(buffer.getvalue())

    def remove_files(self, paths: Iterable[str]) -> int:
        removed = 0
        for path in paths:
            if self._fs.exists(path):
                self._fs.rm(path)
                removed += 1
        return removed

    def delete_ids(self, user_id: str, ids: Collection[str]) -> int:
        """Rewrite the user's files that hold any of `ids` without those rows; rows removed."""
        return self._rewrite(user_id, self.files_of(user_id), lambda uid, mid: uid == user_id and mid in ids)

    def delete_user(self, user_id: str) -> int:
        """Erase: every file of the user's partition is rewritten without the user's rows (removed when
        nothing else is left); rows removed."""
        return self._rewrite(user_id, self._partition_files(user_id), lambda uid, _: uid == user_id)

    def _rewrite(self, user_id: str, files: Sequence[str], drop: Callable[[str, str], bool]) -> int:
        removed = 0
        for path in files:
            table = self._read(path)
            if table is None:
                continue
            keep = [
                not drop(u, i)
                for u, i in zip(table["user_id"].to_pylist(), table["id"].to_pylist(), strict=True)
            ]
            gone = keep.count(False)
            if not gone:
                continue
            if gone < len(keep):
                self._write_table(self._successor(user_id, path), table.filter(pa.array(keep)))
            self._fs.rm(path)
            removed += gone
        return removed

    def _successor(self, user_id: str, path: str) -> str:
        """A new file name of the same user and month as `path` (what replaces it in a rewrite)."""
        month = path.rsplit("/month=", 1)[1].split("/", 1)[0]
        return f"{self.partition(user_id)}/month={month}/part-{user_digest(user_id)}-{uuid.uuid4().hex[:12]}.parquet"

    def replace_vectors(self, user_id: str, path: str, vectors: Mapping[str, Vectors], model: str) -> int:
        """Rewrite one of the user's files with these rows' vectors, made by `model` (a re-embedding:
        memory/archive/reembed.py): a new file of the same month, then the old one removed (readers
        de-duplicate by id meanwhile, and each copy of a row has its vector and its tag). Rows replaced;
        0 when the file is gone (a delete rewrote it meanwhile: a re-run finds its successor)."""
        table = self._read(path)
        if table is None:
            return 0
        data = table.to_pydict()
        rows = [
            r
            for r, (mid, uid) in enumerate(zip(data["id"], data["user_id"], strict=True))
            if uid == user_id and mid in vectors
        ]
        if not rows:
            return 0
        data.setdefault(MODEL_FIELD, [None] * len(data["id"]))
        for r in rows:
            data["embedding"][r] = np.asarray(vectors[data["id"][r]], dtype=np.float32).tolist()
            data[MODEL_FIELD][r] = model
            meta = json.loads(data["metadata"][r])
            data["metadata"][r] = json.dumps({**meta, MODEL_FIELD: model}, ensure_ascii=False)
        self._write_table(self._successor(user_id, path), pa.table(data, schema=SCHEMA))
        self._fs.rm(path)
        return len(rows)

    # -- reads --------------------------------------------------------------------------------------

    def _read(self, path: str, columns: Sequence[str] | None = None) -> pa.Table | None:
        """The file's table (`columns`: those of them the file has: `dense_model` is not in old files)."""
        try:
            with self._fs.open(path, "rb") as f:
                parquet = pq.ParquetFile(io.BytesIO(f.read()))
        except FileNotFoundError:  # rewritten by a delete meanwhile: its new file is listed next time
            return None
        names = set(parquet.schema_arrow.names)
        return parquet.read(columns=[c for c in columns if c in names] if columns else None)

    def read_user(
        self, user_id: str, *, files: Sequence[str] | None = None, with_vectors: bool = True
    ) -> tuple[list[Memory], Vectors]:
        """Every cold memory of this user (de-duplicated by id), with vectors, oldest file first."""
        memories, vectors, _ = self.read_tagged(user_id, files=files, with_vectors=with_vectors)
        return memories, vectors

    def read_tagged(
        self, user_id: str, *, files: Sequence[str] | None = None, with_vectors: bool = True
    ) -> tuple[list[Memory], Vectors, list[str | None]]:
        """`read_user`, and each row's `dense_model` (None: not recorded); vectors of several sizes (a
        switch to a model of another size) as `memory/archive/sizes.py` stacks them."""
        memories, vectors, models = self.read_rows(user_id, files=files, with_vectors=with_vectors)
        matrix, models = stacked(vectors, models)
        return memories, matrix, models

    def read_rows(
        self, user_id: str, *, files: Sequence[str] | None = None, with_vectors: bool = True
    ) -> tuple[list[Memory], list[np.ndarray], list[str | None]]:
        """`read_tagged` with each row's vector as stored (rows may differ in size)."""
        columns = ["id", "user_id", "content", "metadata", MODEL_FIELD] + (
            ["embedding"] if with_vectors else []
        )
        seen: dict[str, int] = {}
        memories: list[Memory] = []
        vectors: list[np.ndarray] = []
        models: list[str | None] = []
        for path in files if files is not None else self.files_of(user_id):
            table = self._read(path, columns)
            if table is None:
                continue
            data = table.to_pydict()
            tags = data.get(MODEL_FIELD) or [None] * len(data["id"])
            for row, (mid, uid) in enumerate(zip(data["id"], data["user_id"], strict=True)):
                if uid != user_id or mid in seen:
                    continue
                seen[mid] = len(memories)
                meta = json.loads(data["metadata"][row])
                memories.append(from_record(mid, data["content"][row], meta))
                models.append(tags[row])
                if with_vectors:
                    vectors.append(np.asarray(data["embedding"][row], dtype=np.float32))
        return memories, vectors, models

    def ids_in(self, paths: Sequence[str], user_id: str) -> set[str]:
        found: set[str] = set()
        for path in paths:
            table = self._read(path, ["id", "user_id"])
            if table is not None:
                found |= {
                    i
                    for i, u in zip(table["id"].to_pylist(), table["user_id"].to_pylist(), strict=True)
                    if u == user_id
                }
        return found

    def user_ids(self) -> set[str]:
        """Every user with cold rows (the `user_id` column of every file of the dataset)."""
        found: set[str] = set()
        for path in self.all_files():
            table = self._read(path, ["user_id"])
            if table is not None:
                found |= {str(u) for u in table["user_id"].to_pylist()}
        return found

    def count_rows(self) -> int:
        """Rows over the whole dataset (the job's tier gauge)."""
        total = 0
        for path in self.all_files():
            with self._fs.open(path, "rb") as f:
                total += pq.ParquetFile(io.BytesIO(f.read())).metadata.num_rows
        return total


def _table(rows: ColdRows, chosen: Sequence[int], archived_at: float) -> pa.Table:
    metas = [rows.metadatas[r] for r in chosen]
    return pa.table(
        {
            "id": [rows.ids[r] for r in chosen],
            "user_id": [str(m["user_id"]) for m in metas],
            "created_at": [float(m["created_at"]) for m in metas],
            "content": [rows.documents[r] or "" for r in chosen],
            "metadata": [json.dumps({**m, "archive_tier": "cold"}, ensure_ascii=False) for m in metas],
            "embedding": [np.asarray(rows.embeddings[r], dtype=np.float32).tolist() for r in chosen],
            "archived_at": [archived_at] * len(chosen),
            MODEL_FIELD: [str(m[MODEL_FIELD]) if m.get(MODEL_FIELD) else None for m in metas],
        },
        schema=SCHEMA,
    )
