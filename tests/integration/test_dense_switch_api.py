"""A dense model switch through the served app (issue 44): the bundled MiniLM's users moved to USE v3
served over the real `/v1/embeddings` protocol (harness/model_server.py) by the rebalance CLI's own
`run`, while the app answers searches and takes writes; against real Redis and Chroma.

- before the move every old user is searched by the previous model, a new user lands on the new one;
- during it no search fails, and a write of a moving user is kept;
- after it every user's facts are found across languages through the new model's vectors, the old
  model's collections are empty, the switch is recorded as finished and the new model starts alone.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY

from app.cli import rebalance
from app.composition import build_embedder
from app.composition.dense import dense_layout
from app.settings import Settings
from harness.model_server import DIMENSIONS, USE, start_model_server
from harness.services import ServerProcess
from memory import Embedder, keys
from memory.longterm.dense_models import tag_hash
from tests.conftest import AuthHeaders, app_client, drop_collections, records_on, redis_of
from tests.integration.test_crosslingual import ASKED, FACTS, NOW, SMALL_TALK, seed, top

pytestmark = pytest.mark.integration
USERS = ["alice", "zhang-wei", "bob"]


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_model_server(tmp_path_factory.mktemp("models"))
    yield server
    server.stop()


def on_use(settings: Settings, server: ServerProcess, *, previous: bool) -> Settings:
    """The dense channel on USE v3 over HTTP (512 dimensions), the bundled MiniLM as the previous model."""
    return settings.model_copy(
        update={
            "embeddings_url": f"{server.url}/v1",
            "embeddings_model": USE,
            "embeddings_dimensions": DIMENSIONS[USE],
            "previous_embeddings_model": "bundled" if previous else "",
        }
    )


def searches_by(model: str) -> float:
    return REGISTRY.get_sample_value("mnemo_dense_model_searches_total", {"model": model}) or 0.0


def cli_args() -> argparse.Namespace:
    return argparse.Namespace(
        dry_run=False,
        batch_users=2,
        page_size=3,  # several pages per user: the copy's paging is exercised
        grace_seconds=1.0,
        lock_wait_seconds=60.0,
        wait_seconds=30.0,
        max_per_second=None,
    )


async def test_a_dense_switch_under_search_load_loses_nothing_and_mixes_nothing(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, model_server: ServerProcess
) -> None:
    prefix = settings.chroma_collection_prefix
    async with app_client(settings, embedder) as (client, _):
        for user in USERS:
            await seed(client, auth, user)
    switching = on_use(settings, model_server, previous=True)
    new_prefix = f"{prefix}-d{tag_hash((await dense_layout(switching, redis_of(switching))).current)}"
    failures: list[str] = []
    done = asyncio.Event()
    try:
        async with app_client(switching, build_embedder(switching)) as (client, _):
            # not moved yet: searched by the previous model, as before
            previous = searches_by("previous")
            for question, fact in ASKED:
                assert fact in await top(client, auth, question, user="bob")
            assert searches_by("previous") == previous + len(ASKED)
            await seed(client, auth, "new-user")  # a new user lands on the new model
            assert {u for _, u in records_on(settings.chroma_url, new_prefix)} == {"new-user"}

            async def load() -> int:
                n = 0
                while not done.is_set():
                    for user in USERS:
                        for question, _fact in ASKED:
                            resp = await client.post(
                                f"/v1/memory/{user}/search",
                                json={"query": question, "as_of": NOW},
                                headers=auth(user),
                            )
                            n += 1
                            if resp.status_code != 200:
                                failures.append(resp.text)
                return n

            searching = asyncio.create_task(load())
            moving = asyncio.create_task(rebalance.run(switching, cli_args()))
            # a write of a user who is being moved: it waits for the user's lock, or lands before
            written = await client.post(
                "/v1/memory/zhang-wei/messages",
                json={
                    "session_id": "s2",
                    "messages": [
                        {
                            "role": "user",
                            "content": "我的护照号码换成了新的，放在书房抽屉里。",
                            "id": "f-passport",
                        }
                    ],
                },
                headers=auth("zhang-wei"),
            )
            assert written.status_code in (200, 202), written.text
            report = await moving
            done.set()
            searched = await searching
            assert report.failures == 0
            assert report.users_moved == len(USERS)
            assert report.dense_switched
            assert searched > 0
            assert failures == []
            # moved: every user's facts across languages through USE's vectors
            for user in USERS:
                for question, fact in ASKED:
                    assert fact in await top(client, auth, question, user=user), (user, question)
            assert "f-passport" in await top(client, auth, "护照放在哪里了？", user="zhang-wei")
            current, previous = searches_by("current"), searches_by("previous")
            assert "f-cat" in await top(client, auth, "What is our cat called?", user="bob")
            assert (searches_by("current"), searches_by("previous")) == (current + 1, previous)
        # every record on the new model's collections, none left on the old
        assert records_on(settings.chroma_url, prefix) == []
        moved = records_on(settings.chroma_url, new_prefix)
        assert {u for _, u in moved} == {*USERS, "new-user"}
        assert len(moved) >= (len(USERS) + 1) * len(FACTS + SMALL_TALK)
        redis = redis_of(settings)
        assert await redis.get(keys.dense_switching(prefix)) is None
        # finished: the new model starts alone and answers
        alone = on_use(settings, model_server, previous=False)
        async with app_client(alone, build_embedder(alone)) as (client, _):
            assert "f-cat" in await top(client, auth, "What is our cat called?", user="alice")
    finally:
        drop_collections(settings.chroma_url, new_prefix)
