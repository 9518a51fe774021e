"""GDPR erase: everything of user A goes, everything of user B stays (real Redis, real Chroma)."""

from __future__ import annotations

from typing import Any

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from app.settings import Settings
from memory import Embedder
from memory.outbox.stream import Outbox
from tests.conftest import AuthHeaders, app_client, redis_of

pytestmark = pytest.mark.integration


def records_of(settings: Settings, user: str) -> int:
    host, port = settings.chroma_url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=ChromaSettings(anonymized_telemetry=False)
    )
    total = 0
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(f"{settings.chroma_collection_prefix}-mem-"):  # the records, not the bridge
            total += len(client.get_collection(name).get(where={"user_id": user}, include=[])["ids"])
    return total


async def test_erase_removes_one_user_from_every_store(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    no_worker = settings.model_copy(update={"outbox_worker": False})  # keep chat turns pending in the outbox
    async with app_client(no_worker, embedder) as (client, _):
        for user in ("alice", "bob"):
            stored = await client.post(
                f"/v1/memory/{user}/messages",
                json={
                    "session_id": "s1",
                    "messages": [{"role": "user", "content": f"{user} lives in Hangzhou 杭州"}],
                },
                headers=auth(user),
            )
            assert stored.status_code == 200
            chat = await client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "明天下午3点去浦东机场"}], "session_id": "s2"},
                headers=auth(user),
            )
            assert chat.status_code == 200
        r = redis_of(settings)
        pending_before = await Outbox(r).pending()
        assert pending_before == 2

        receipt = await client.delete("/v1/memory/alice", params={"confirm": "alice"}, headers=auth("alice"))
        assert receipt.status_code == 200, receipt.text
        body = receipt.json()
        assert body["deleted"]["chroma"] == 1
        assert body["deleted"]["outbox"] == 1
        assert body["deleted"]["redis_keys"] >= 5  # summary, actions, buffer, slots, rate log, ltm keys
        assert body["at"].endswith("Z")
        # the session Redis keeps no files; Chroma's are out of reach without CHROMA_DATA_PATH
        # the suite's one redis-server keeps no files; the cluster's nodes keep an AOF
        assert body["at_rest"]["redis"]["state"] == ("scheduled" if settings.redis_cluster_nodes else "none")
        assert body["at_rest"]["chroma"]["state"] == "operator"
        assert "python -m app.cli.compact" in body["at_rest"]["chroma"]["command"]
        assert body["at_rest_purged_by"] is None

        leftovers = [k async for k in r.scan_iter("*") if "{alice}" in k]
        assert leftovers == []
        assert records_of(settings, "alice") == 0
        outbox_users = []
        for stream in Outbox.streams():
            entries: Any = await r.xrange(stream)
            outbox_users += [fields["user_id"] for _, fields in entries]
        assert outbox_users == ["bob"]

        assert records_of(settings, "bob") == 1
        assert [k async for k in r.scan_iter("*") if "{bob}" in k]
        search = await client.post(
            "/v1/memory/alice/search", json={"query": "Hangzhou"}, headers=auth("alice")
        )
        assert search.json()["results"] == []
        bob = await client.post("/v1/memory/bob/search", json={"query": "Hangzhou"}, headers=auth("bob"))
        assert bob.json()["results"][0]["content"].startswith("bob lives")
        assert (
            await client.delete("/v1/memory/alice", params={"confirm": "alice"}, headers=auth("bob"))
        ).status_code == 403
        await r.aclose()
