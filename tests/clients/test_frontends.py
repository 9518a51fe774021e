"""Issue 41: the OpenAI clients front ends are built on, each against a served mnemo whose upstream is a
real HTTP model server (`python -m bench.fake_llm --replies recall`: a chat turn is answered with the
long-term memories mnemo put in its prompt, so each client's own streamed reply shows what mnemo
recalled). Every client lists the models first, as chat front ends do, states a fact in one session and
streams a question about it in another, in English and in Chinese; the OpenAI Agents SDK completes a tool
call through mnemo. Clients: openai (Python and Node), LangChain's ChatOpenAI, LiteLLM, the Vercel AI
SDK (`ai` + `@ai-sdk/openai`) and the OpenAI Agents SDK (streamed)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from harness.services import ServerProcess, free_port, http_answers, wait_ready
from tests.clients.conftest import Mnemo, eventually
from tests.served import serve

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
FRONTENDS = Path(__file__).resolve().parent / "frontends"
REDIS_DB = 6
UPSTREAM_MODEL = "fake"  # what bench/fake_llm.py lists; mnemo lists the upstream's models


@dataclass(frozen=True)
class Fact:
    language: str
    statement: str
    question: str
    keyword: str  # what the answer holds when the statement was recalled
    recalled: str  # how the recall-echo upstream starts an answer in that language


FACTS = [
    Fact("en", "My car is a red Volvo.", "What car do I drive?", "Volvo", "I recall:"),
    Fact("zh", "我的车是一辆红色的沃尔沃。", "我开的是什么车？", "沃尔沃", "我记得："),
]


@dataclass(frozen=True)
class Turn:
    models: list[str]
    text: str
    pieces: int  # streamed pieces with text


# a client turn: (mnemo, token, session, message) -> the streamed answer, models listed first
Client = Callable[[Mnemo, str, str, str], Turn]


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir = tmp_path_factory.mktemp("recall-upstream")
    port = free_port()
    log_path = workdir / "fake_llm.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.fake_llm", "--port", str(port), "--replies", "recall"],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = ServerProcess(f"http://127.0.0.1:{port}/v1", port, proc, log_path)
    try:
        wait_ready(lambda: http_answers(f"{server.url}/models"), proc, "bench.fake_llm", log_path)
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
    redis_server: ServerProcess,
    chroma_server: ServerProcess,
    upstream: str,
) -> Iterator[Mnemo]:
    env = {
        "RATE_LIMIT_PER_MINUTE": "100000",
        "REDIS_URL": f"{redis_server.url}/{REDIS_DB}",
        "LLM_BASE_URL": upstream,
        "LLM_API_KEY": "upstream-key",
        "LLM_MODEL": UPSTREAM_MODEL,
        # only chat turns reach the upstream: its recall echo answers nothing else usefully
        "LLM_SUMMARY": "false",
        "LLM_COMPRESS_MEMORIES": "false",
        "LLM_SUPERSESSION_JUDGE": "false",
    }
    with serve(tmp_path_factory.mktemp("frontends-served"), redis_server, chroma_server, env) as base:
        yield Mnemo(base)


def remembered(mnemo: Mnemo, token: str, user: str, keyword: str) -> bool:
    answer = httpx.get(
        f"{mnemo.url}/v1/memory/{user}/list",
        params={"limit": 100},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    answer.raise_for_status()
    return any(keyword in m["content"] for m in answer.json()["items"])


def openai_python(mnemo: Mnemo, token: str, session: str, message: str) -> Turn:
    from openai import OpenAI

    with OpenAI(
        base_url=f"{mnemo.url}/v1", api_key=token, default_headers={"X-Session-Id": session}, max_retries=0
    ) as client:
        models = [m.id for m in client.models.list()]
        stream = client.chat.completions.create(
            model=models[0], messages=[{"role": "user", "content": message}], stream=True
        )
        deltas = [c.choices[0].delta.content or "" for c in stream if c.choices]
    return Turn(models, "".join(deltas), sum(1 for d in deltas if d))


def langchain_chat_openai(mnemo: Mnemo, token: str, session: str, message: str) -> Turn:
    from langchain_openai import ChatOpenAI
    from openai import OpenAI

    with OpenAI(base_url=f"{mnemo.url}/v1", api_key=token, max_retries=0) as lister:
        models = [m.id for m in lister.models.list()]
    chat = ChatOpenAI(
        model=models[0],
        base_url=f"{mnemo.url}/v1",
        api_key=token,
        default_headers={"X-Session-Id": session},
        max_retries=0,
    )
    deltas = [str(chunk.content) for chunk in chat.stream(message)]
    return Turn(models, "".join(deltas), sum(1 for d in deltas if d))


def litellm_completion(mnemo: Mnemo, token: str, session: str, message: str) -> Turn:
    import litellm

    models = [
        m["id"]
        for m in httpx.get(
            f"{mnemo.url}/v1/models", headers={"Authorization": f"Bearer {token}"}, timeout=10
        ).json()["data"]
    ]
    stream = litellm.completion(
        model=f"openai/{models[0]}",
        api_base=f"{mnemo.url}/v1",
        api_key=token,
        extra_headers={"X-Session-Id": session},
        messages=[{"role": "user", "content": message}],
        stream=True,
        num_retries=0,
    )
    deltas = [chunk.choices[0].delta.content or "" for chunk in stream]
    return Turn(models, "".join(deltas), sum(1 for d in deltas if d))


def agents_sdk(mnemo: Mnemo, token: str, session: str, message: str) -> Turn:
    """An agent on mnemo_model, streamed (Runner.run_streamed): the text deltas it relays."""
    from agents import Agent, RunConfig, Runner
    from mnemo_client.integrations.agents import mnemo_model
    from openai import OpenAI
    from openai.types.responses import ResponseTextDeltaEvent

    with OpenAI(base_url=f"{mnemo.url}/v1", api_key=token, max_retries=0) as lister:
        models = [m.id for m in lister.models.list()]

    async def run() -> list[str]:
        agent = Agent(name="chat", model=mnemo_model(mnemo.url, token, session_id=session, model=models[0]))
        streamed = Runner.run_streamed(agent, message, run_config=RunConfig(tracing_disabled=True))
        return [
            e.data.delta
            async for e in streamed.stream_events()
            if e.type == "raw_response_event" and isinstance(e.data, ResponseTextDeltaEvent)
        ]

    deltas = asyncio.run(run())
    return Turn(models, "".join(deltas), sum(1 for d in deltas if d))


def node(client: str) -> Client:
    def turn(mnemo: Mnemo, token: str, session: str, message: str) -> Turn:
        ensure = subprocess.run(
            [str(ROOT / "scripts" / "ensure_frontend_clients.sh")],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert ensure.returncode == 0, f"{ensure.stdout[-2000:]}\n{ensure.stderr[-2000:]}"
        env = {
            **os.environ,
            "MNEMO_URL": mnemo.url,
            "MNEMO_TOKEN": token,
            "CLIENT": client,
            "SESSION": session,
            "MESSAGE": message,
        }
        done = subprocess.run(
            ["node", "chat.mjs"], cwd=FRONTENDS, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        out = json.loads(done.stdout.strip().splitlines()[-1])
        return Turn(list(out["models"]), str(out["text"]), int(out["pieces"]))

    return turn


CLIENTS: dict[str, Client] = {
    "openai-python": openai_python,
    "openai-node": node("openai"),
    "vercel-ai-sdk": node("ai-sdk"),
    "langchain-chatopenai": langchain_chat_openai,
    "litellm": litellm_completion,
    "openai-agents-sdk": agents_sdk,
}


@pytest.mark.parametrize("name", sorted(CLIENTS))
@pytest.mark.parametrize("fact", FACTS, ids=[f.language for f in FACTS])
def test_a_front_end_lists_models_and_streams_recall_across_sessions(
    served: Mnemo, user: str, name: str, fact: Fact
) -> None:
    client = CLIENTS[name]
    token = served.token(user)
    first = client(served, token, f"{fact.language}.first", fact.statement)
    assert first.models == [UPSTREAM_MODEL], "a front end that lists models first gets the upstream's"
    assert first.text
    eventually(lambda: remembered(served, token, user, fact.keyword), "the first session is remembered")

    second = client(served, token, f"{fact.language}.second", fact.question)
    assert second.pieces > 1, f"{name} did not stream: {second}"
    assert second.text.startswith(fact.recalled), f"the upstream's answer did not reach {name}: {second}"
    assert fact.keyword in second.text, f"{name}'s turn in a new session recalled nothing: {second.text}"


class TestAgentsSDK:
    async def test_an_agent_calls_a_tool_through_mnemo(self, served: Mnemo, user: str) -> None:
        from agents import Agent, RunConfig, Runner, function_tool
        from mnemo_client.integrations.agents import mnemo_model

        asked: list[str] = []

        @function_tool
        def tea_price(kind: str) -> str:
            """The price of a tea, by its name."""
            asked.append(kind)
            return "oolong: 12 EUR / 乌龙茶：12 欧元"

        token = served.token(user)
        agent = Agent(
            name="shop",
            instructions="Answer with the tool's price.",
            tools=[tea_price],
            model=mnemo_model(served.url, token, session_id="agent.1", model=UPSTREAM_MODEL),
        )
        result = await Runner.run(
            agent, "乌龙茶多少钱？ How much is oolong?", run_config=RunConfig(tracing_disabled=True)
        )

        assert asked == ["乌龙茶多少钱？ How much is oolong?"]  # the upstream's call reached the tool
        assert "12 EUR" in str(result.final_output)  # and its result reached the upstream through mnemo
        session = httpx.get(
            f"{served.url}/v1/sessions/{user}/agent.1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        ).json()
        roles = [m["role"] for m in session["buffer"]]
        assert roles == ["user", "assistant", "tool", "assistant"], session["buffer"]
        # the session's summary keeps what the tool answered
        assert "tea_price: oolong: 12 EUR" in session["summary"]["summary"]
