"""Archived rows and the dense model of their vectors (issue 44): an index leaves out of the dense
channel the rows of another model than the query's and still finds them by their words; the cold store
records each row's model in a column (files written before have none) and rewrites a file with new
vectors. Pure: a deterministic embedder, Parquet in a temp dir."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from prometheus_client import REGISTRY

from harness.fakes import HashEmbedder
from memory.archive.cold import MODEL_FIELD, SCHEMA, ColdRows, ColdStore
from memory.archive.mover import tagged
from memory.archive.sizes import UNRANKED, stacked
from memory.longterm.records import Records
from memory.models import Memory
from memory.recall.keyword_index import BM25Index
from memory.text.tokens import tokenize

EMBED = HashEmbedder()
OLD, NEW = "http:old-model:64", "http:new-model:64"
TEXTS = [
    ("a", "我住在杭州，在一家银行做数据分析", OLD),
    ("b", "I moved to Lisbon last May for a new job", OLD),
    ("c", "我对花生过敏，记住这个", NEW),
    ("d", "My sister Anna is a nurse in Porto", NEW),
    ("e", "提醒我周五下午三点给王老师打电话", None),  # archived before rows recorded a model
]
NOW = 1_790_000_000.0


def memory(mid: str, text: str) -> Memory:
    return Memory(
        id=mid,
        user_id="u",
        content=text,
        created_at=NOW - 400 * 86_400,
        session_id="s",
        source="user",
        content_hash=f"h{mid}",
    )


def index() -> BM25Index:
    memories = [memory(mid, text) for mid, text, _ in TEXTS]
    vectors = EMBED.embed_sync([m.embed_text for m in memories])
    return BM25Index(memories, vectors, models=[tag for *_, tag in TEXTS])


def skipped() -> float:
    return REGISTRY.get_sample_value("mnemo_archive_dense_skipped_total") or 0.0


class TestNearestByModel:
    def test_rows_of_another_model_are_not_dense_candidates_but_are_found_by_words(self) -> None:
        idx = index()
        for query, mid in (("我住在杭州", "a"), ("Lisbon job", "b")):
            qvec = EMBED.embed_sync([query])[0]
            assert idx.nearest(qvec, limit=1)[0][0].id == mid  # no model said: as before
            before = skipped()
            found = {m.id for m, _ in idx.nearest(qvec, limit=10, model=NEW)}
            assert found == {"c", "d", "e"}  # e: untagged, of any model
            assert skipped() == before + 2
            assert mid in dict(idx.search(tokenize(query), limit=5))  # keywords unchanged
            assert set(idx.cosine(["a", "b", "c", "e"], qvec, model=NEW)) == {"c", "e"}
            assert set(idx.cosine(["a", "b", "c"], qvec)) == {"a", "b", "c"}
        assert {m.id for m, _ in idx.nearest(EMBED.embed_sync(["x"])[0], limit=10, model=OLD)} == {
            "a",
            "b",
            "e",
        }

    def test_bundled_names_are_one_model_and_an_untagged_index_is_unchanged(self) -> None:
        memories = [memory("a", "我住在杭州"), memory("b", "Lisbon")]
        vectors = EMBED.embed_sync([m.embed_text for m in memories])
        q = EMBED.embed_sync(["杭州"])[0]
        bundled = BM25Index(memories, vectors, models=["OnnxEmbedder::384", "bundled"])
        assert len(bundled.nearest(q, limit=5, model="SentenceTransformerEmbedder::384")) == 2
        assert bundled.nearest(q, limit=5, model="http:bge-m3:1024") == []
        plain = BM25Index(memories, vectors)
        assert [m.id for m, _ in plain.nearest(q, limit=5, model=NEW)] == [
            m.id for m, _ in plain.nearest(q, limit=5)
        ]

    def test_an_update_keeps_the_tags_of_the_rows_it_keeps(self) -> None:
        extra = memory("f", "Remind me to renew the car insurance on Monday")
        later = index().updated([extra], EMBED.embed_sync([extra.embed_text]), deleted=["d"])
        q = EMBED.embed_sync(["insurance"])[0]
        assert {m.id for m, _ in later.nearest(q, limit=10, model=NEW)} == {"c", "e", "f"}


def _rows(models: list[str | None]) -> ColdRows:
    ids = [f"u-{i}" for i in range(len(models))]
    metas: list[dict[str, object]] = [
        {"user_id": "u", "created_at": NOW - 400 * 86_400, "session_id": "s"} for _ in models
    ]
    for meta, tag in zip(metas, models, strict=True):
        if tag is not None:
            meta[MODEL_FIELD] = tag
    texts: list[str | None] = [f"第{i}条 note {i}" for i in range(len(models))]
    return ColdRows(ids, texts, metas, EMBED.embed_sync([str(t) for t in texts]))


class TestColdColumn:
    def test_each_row_records_its_model_and_old_files_read_as_unknown(self, tmp_path: Path) -> None:
        store = ColdStore(str(tmp_path / "archive"))
        rows = _rows([OLD, None])
        files = store.plan_files("u", [NOW - 400 * 86_400])
        store.write("u", rows, files, archived_at=NOW)
        (path,) = files.values()
        assert pq.read_table(path)[MODEL_FIELD].to_pylist() == [OLD, None]
        # a file written before the column existed
        old = pq.read_table(path).drop_columns([MODEL_FIELD])
        assert MODEL_FIELD not in old.schema.names
        legacy = path.replace(".parquet", "-legacy.parquet")
        pq.write_table(old.set_column(0, "id", pa.array(["u-8", "u-9"])), legacy)
        memories, vectors, models = store.read_tagged("u")
        assert dict(zip([m.id for m in memories], models, strict=True)) == {
            "u-0": OLD,
            "u-1": None,
            "u-8": None,
            "u-9": None,
        }
        assert vectors.shape == (4, 64)
        assert store.ids_in([legacy], "u") == {"u-8", "u-9"}

    def test_replace_vectors_rewrites_the_file_with_new_vectors_and_tags(self, tmp_path: Path) -> None:
        store = ColdStore(str(tmp_path / "archive"))
        rows = _rows([OLD, OLD, NEW])
        store.write("u", rows, store.plan_files("u", [NOW - 400 * 86_400]), archived_at=NOW)
        (path,) = store.files_of("u")
        fresh = {"u-0": np.eye(1, 64, 5, dtype=np.float32)[0]}
        assert store.replace_vectors("u", path, fresh, NEW) == 1
        assert store.replace_vectors("u", path, fresh, NEW) == 0  # the old file is gone
        (rewritten,) = store.files_of("u")
        assert rewritten != path
        memories, vectors, models = store.read_tagged("u")
        by_id = {m.id: row for row, m in enumerate(memories)}
        assert models[by_id["u-0"]] == NEW
        assert models[by_id["u-1"]] == OLD
        assert np.allclose(vectors[by_id["u-0"]], fresh["u-0"])
        assert np.allclose(vectors[by_id["u-1"]], rows.embeddings[1])
        with open(rewritten, "rb") as f:
            table = pq.read_table(io.BytesIO(f.read()))
        assert table.schema == SCHEMA
        assert '"dense_model": "http:new-model:64"' in table["metadata"].to_pylist()[by_id["u-0"]]
        assert store.user_ids() == {"u"}


def test_the_mover_tags_records_with_the_model_of_the_store_it_reads() -> None:
    records = Records(["a"], ["x"], [{"user_id": "u"}], np.zeros((1, 4), dtype=np.float32), rows=1)
    assert tagged(records, NEW).metadatas == [{"user_id": "u", MODEL_FIELD: NEW}]
    assert tagged(records, "") is records  # a store that does not say: untagged, as before


class TestVectorsOfTwoSizes:
    """A switch to a model of another size leaves a user's archive with vectors of two sizes until the
    re-embed: an index keeps the configured model's size, the other rows are found by words alone."""

    WIDE = "http:wide-model:96"

    def rows(self) -> tuple[list[Memory], list[np.ndarray], list[str | None]]:
        memories = [memory(mid, text) for mid, text, _ in TEXTS[:4]]
        narrow = EMBED.embed_sync([m.embed_text for m in memories[:3]])  # 64-d, of OLD
        wide = HashEmbedder(96).embed_sync([memories[3].embed_text])
        return memories, [*narrow, wide[0]], [OLD, OLD, OLD, self.WIDE]

    def test_the_preferred_models_size_is_kept_and_the_others_are_unranked(self) -> None:
        memories, vectors, models = self.rows()
        matrix, tags = stacked(vectors, models, prefer=[self.WIDE, OLD])
        assert matrix.shape == (4, 96)
        assert tags == [UNRANKED, UNRANKED, UNRANKED, self.WIDE]
        assert not matrix[:3].any()
        idx = BM25Index(memories, matrix, models=tags)
        q = HashEmbedder(96).embed_sync(["My sister Anna is a nurse in Porto"])[0]
        assert [m.id for m, _ in idx.nearest(q, limit=5, model=self.WIDE)] == ["d"]
        assert idx.nearest(q, limit=5, model=UNRANKED.replace("unranked", "other")) == []
        assert idx.search(tokenize("杭州 银行"), limit=1)[0][0] == "a"  # still found by its words

    def test_without_a_preferred_model_the_commonest_size_and_one_size_as_it_is(self) -> None:
        _, vectors, models = self.rows()
        matrix, tags = stacked(vectors, models)
        assert matrix.shape == (4, 64)
        assert tags == [OLD, OLD, OLD, UNRANKED]
        same, kept = stacked(vectors[:3], models[:3], prefer=[self.WIDE])
        assert kept == [OLD, OLD, OLD]
        assert np.array_equal(same, np.stack(vectors[:3]))
        empty, none = stacked([], [])
        assert (empty.shape, none) == ((0, 0), [])

    def test_cold_reads_rows_of_two_sizes(self, tmp_path: Path) -> None:
        store = ColdStore(str(tmp_path / "archive"))
        store.write("u", _rows([OLD, OLD]), store.plan_files("u", [NOW - 400 * 86_400]), archived_at=NOW)
        wide = ColdRows(
            ["u-7"],
            ["a wide row"],
            [{"user_id": "u", "created_at": NOW - 390 * 86_400, "session_id": "s", MODEL_FIELD: self.WIDE}],
            HashEmbedder(96).embed_sync(["a wide row"]),
        )
        store.write("u", wide, store.plan_files("u", [NOW - 390 * 86_400]), archived_at=NOW)
        memories, vectors, models = store.read_rows("u")
        assert sorted(len(v) for v in vectors) == [64, 64, 96]
        _, matrix, tags = store.read_tagged("u")
        assert matrix.shape == (3, 64)
        assert sorted(str(t) for t in tags) == sorted([OLD, OLD, UNRANKED])
