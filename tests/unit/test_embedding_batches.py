"""Batches of similar token length: every position once, bounded padding, batch size respected."""

from __future__ import annotations

import random

import pytest

from memory.embedding.onnx import PADDING_SLACK, length_buckets


@pytest.mark.parametrize("seed", range(20))
def test_every_position_once_and_padding_bounded(seed: int) -> None:
    rng = random.Random(seed)
    lengths = [rng.randint(3, 256) for _ in range(rng.randint(1, 120))]
    batches = length_buckets(lengths, batch_size=16)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch) <= 16
        longest = max(lengths[i] for i in batch)
        assert lengths[batch[0]] == longest
        assert min(lengths[i] for i in batch) >= PADDING_SLACK * longest


def test_short_chat_turns_and_long_replies_are_split() -> None:
    # 我住在杭州 (22 tokens) next to an offline-style reply (48 tokens): two batches, not one
    batches = length_buckets([22, 48, 22, 48, 22], batch_size=32)
    assert sorted(map(sorted, batches)) == [[0, 2, 4], [1, 3]]


def test_equal_lengths_fill_whole_batches() -> None:
    assert [len(b) for b in length_buckets([10] * 70, batch_size=32)] == [32, 32, 6]
