"""The capacity benchmarks' helpers: CPU seconds from /proc, and key kinds of the key layout."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.key_memory import kind_of
from bench.procstat import Group, cpu_seconds, delta, descendants, snapshot, tree_cpu_seconds
from memory import keys


def test_key_kinds_follow_the_layout() -> None:
    assert kind_of(keys.buffer("alice", "s1")) == ("session buffer", "alice", "s1")
    assert kind_of(keys.slot("alice", "s1", "city")) == ("session slot", "alice", "s1")
    assert kind_of(keys.ltm_changes("alice")) == ("user ltm:changes", "alice", None)
    assert kind_of(keys.shared_vector("alice", "m", "d")) == ("user vec", "alice", None)
    assert kind_of(keys.rate_limit("alice")) == ("user rl", "alice", None)
    assert kind_of(keys.outbox_stream(3)) == ("partition outbox", None, None)
    assert kind_of(keys.erased_marker("alice"))[0] == "partition erased marker"
    assert kind_of(keys.WRITERS) == ("global mnemo:writers", None, None)


def test_cpu_seconds_count_a_busy_child_in_its_parents_tree() -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nt=time.process_time()\nwhile time.process_time()-t<0.3: pass\ntime.sleep(30)",
        ]
    )
    try:
        deadline = time.monotonic() + 120  # a loaded CI host gives the child little CPU
        while cpu_seconds(child.pid) < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.pid in descendants(os.getpid())
        own = cpu_seconds(os.getpid())
        assert tree_cpu_seconds(os.getpid()) >= own + 0.25
        group, alone = Group("tree", (os.getpid(),)), Group("alone", (os.getpid(),), tree=False)
        # alone first: this process's own CPU only grows while the tree is read after it (threads of
        # earlier tests may still run), so the tree holds at least alone + the child's
        before = snapshot([alone, group])
        assert before["tree"] >= before["alone"] + 0.25
        assert set(delta(before, snapshot([group, alone]))) == {"tree", "alone"}
    finally:
        child.kill()
        child.wait()
    # gone from the tree (its pid may already be another process's on a busy host)
    assert child.pid not in descendants(os.getpid())


def test_update_sets_are_what_their_generator_writes_and_the_docs_say() -> None:
    import json
    from pathlib import Path

    from bench.make_update_sets import knowledge_update, negation

    data = Path(__file__).resolve().parents[2] / "bench" / "data"
    updates = json.loads((data / "knowledge_update.json").read_text(encoding="utf-8"))
    negations = json.loads((data / "negation.json").read_text(encoding="utf-8"))
    assert updates == json.loads(json.dumps(knowledge_update()))  # committed data = generator output
    assert negations == json.loads(json.dumps(negation()))
    held_out = json.loads((data / "knowledge_update_held_out.json").read_text(encoding="utf-8"))
    assert held_out == json.loads(json.dumps(knowledge_update(held_out=True)))
    for language in ("en", "zh"):
        users = [u for u in updates["users"] if u["language"] == language]
        assert sum(u["changes"] for u in users) >= 20
        kinds = [q["kind"] for u in users for q in u["questions"]]
        assert kinds.count("present") == kinds.count("past") >= 20
        (neg,) = [u for u in negations["users"] if u["language"] == language]
        assert sum(q["kind"] == "verify" for q in neg["questions"]) >= 20
        assert sum(q["kind"] == "exclude" for q in neg["questions"]) >= 20
    assert sum(u["changes"] for u in updates["users"]) >= 40
