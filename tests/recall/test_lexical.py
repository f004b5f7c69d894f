"""LexicalIndex: BM25 through bm25s with a main + delta index."""

from __future__ import annotations

import pytest

from episeg.recall.lexical import LexicalIndex, tokenize


class TestTokenize:
    def test_stems_and_drops_stop_words(self) -> None:
        assert tokenize(["The deployments are failing"]) == [["deploy", "fail"]]

    def test_empty_input(self) -> None:
        assert tokenize([]) == []
        assert tokenize(["the a of"]) == [[]]


class TestLexicalIndex:
    def test_empty_index_and_stop_word_query_find_nothing(self) -> None:
        idx: LexicalIndex[str] = LexicalIndex()
        assert idx.top("anything", k=3) == []
        idx.add(["a"], ["pasta recipe"])
        assert idx.top("the of and", k=3) == []

    def test_documents_without_a_word_are_kept_and_never_found(self) -> None:
        # a part whose every document has no word (an emoji, punctuation, stop words, "")
        # must not fail the query; the documents stay, and a later worded one is found
        idx: LexicalIndex[str] = LexicalIndex()
        idx.add(["a", "b", "c", "d"], ["\N{THUMBS UP SIGN}", "???", "the", ""])
        assert len(idx) == 4 and idx.top("deploy", k=3) == []
        idx.add(["e"], ["deploy prod"])
        assert [key for key, _ in idx.top("deploy", k=3)] == ["e"]

    def test_best_first_and_only_positive_scores(self) -> None:
        idx: LexicalIndex[str] = LexicalIndex()
        idx.add(["a", "b", "c"], ["pasta recipe", "pasta pasta sauce recipe", "deploy prod"])
        found = idx.top("pasta", k=5)
        assert [key for key, _ in found] == ["b", "a"]
        assert all(score > 0 for _, score in found)

    def test_replace_and_remove(self) -> None:
        idx: LexicalIndex[str] = LexicalIndex()
        idx.add(["a"], ["pasta recipe"])
        assert idx.top("pasta", k=1)[0][0] == "a"
        idx.add(["a"], ["deploy prod"])
        assert idx.top("pasta", k=1) == []
        assert idx.top("deploy", k=1)[0][0] == "a"
        idx.remove(["a", "unknown"])
        assert idx.top("deploy", k=1) == [] and len(idx) == 0

    def test_delta_merges_into_main_and_results_stay_right(self) -> None:
        idx: LexicalIndex[int] = LexicalIndex(merge_ratio=0.5, merge_min=2)
        for i in range(20):
            idx.add([i], [f"word{i} common"])
            assert idx.top(f"word{i}", k=1)[0][0] == i
        assert len(idx) == 20
        assert sorted(key for key, _ in idx.top("common", k=50)) == list(range(20))
        idx.remove(list(range(15)))
        assert sorted(key for key, _ in idx.top("common", k=50)) == list(range(15, 20))

    def test_no_key_twice_after_replacing_a_main_row(self) -> None:
        idx: LexicalIndex[str] = LexicalIndex(merge_min=1, merge_ratio=0.01)
        idx.add(["a", "b"], ["alpha", "beta"])
        idx.top("alpha", k=1)  # builds the main index
        idx.add(["a"], ["alpha again"])
        assert [key for key, _ in idx.top("alpha", k=5)] == ["a"]

    def test_bad_arguments(self) -> None:
        idx: LexicalIndex[str] = LexicalIndex()
        with pytest.raises(ValueError):
            idx.add(["a"], [])
        with pytest.raises(ValueError):
            idx.top("x", k=0)
        with pytest.raises(ValueError):
            LexicalIndex(merge_ratio=0)


class TestTopK:
    """The partial selection returns what a full stable sort would, ties included."""

    def test_matches_a_full_sort_with_ties_and_dead_rows(self) -> None:
        import random

        rng = random.Random(7)
        words = ["alpha", "beta", "gamma", "delta", "omega"]
        texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(300)]
        idx: LexicalIndex[int] = LexicalIndex(merge_min=50, merge_ratio=0.1)
        idx.add(list(range(300)), texts)
        idx.top("alpha", k=1)  # builds the main part
        idx.remove(list(range(0, 300, 7)))
        idx.add([5, 400], ["alpha alpha", "beta alpha"])  # one main row replaced, one new
        for query in ("alpha", "beta gamma", "omega delta alpha"):
            full = idx.top(query, k=10_000)
            keys = [key for key, _ in full]
            assert len(keys) == len(set(keys)) and not {0, 7, 14} & set(keys)
            assert [s for _, s in full] == sorted((s for _, s in full), reverse=True)
            for k in (1, 3, 17, 60):
                assert idx.top(query, k=k) == full[:k]

    def test_threshold_keeps_every_row_of_the_top_k(self) -> None:
        import numpy as np

        from episeg.recall.lexical import _threshold

        rng = np.random.default_rng(3)
        for trial in range(200):
            n = int(rng.integers(1, 5000))
            # few distinct values (many ties) and many zeros, like BM25 over short texts
            scores = rng.integers(0, int(rng.integers(2, 40)), size=n).astype(np.float32)
            scores *= np.float32(rng.random())
            scores[rng.random(n) < rng.random()] = 0.0
            for k in (1, 7, 200):
                for rounds in (0, 24):
                    t = _threshold(scores, k, rounds=rounds)
                    positive = np.sort(scores[scores > 0])[::-1]
                    assert t > 0
                    kept = scores >= t
                    assert not kept[scores == 0].any()
                    if len(positive):  # every row scoring at least the k-th best is kept
                        kth = positive[min(k, len(positive)) - 1]
                        assert kept[scores >= kth].all(), (trial, k, rounds)

    def test_top_equals_a_full_sort_on_a_large_skewed_index(self) -> None:
        import numpy as np

        rng = np.random.default_rng(5)
        # Zipf words: the commonest matches almost every document (the bisection's case)
        words = [f"w{min(int(r), 500)}" for r in rng.zipf(1.3, size=12 * 3000)]
        texts = [" ".join(words[i * 12 : (i + 1) * 12]) for i in range(3000)]
        idx: LexicalIndex[int] = LexicalIndex()
        idx.add(list(range(3000)), texts)
        idx.remove(list(range(0, 3000, 11)))
        for query in ("w1", "w1 w2", "w1 w1 w30", "w2 w7 w450"):
            full = idx.top(query, k=10_000)
            assert [s for _, s in full] == sorted((s for _, s in full), reverse=True)
            for k in (1, 10, 200):
                assert idx.top(query, k=k) == full[:k]

    def test_tokens_once_equals_text(self) -> None:
        idx: LexicalIndex[str] = LexicalIndex()
        idx.add_tokens(["a", "b"], tokenize(["pasta sauce", "deploy pasta"]))
        assert idx.top_tokens(tokenize(["pasta"])[0], k=2) == idx.top("pasta", k=2)
        with pytest.raises(ValueError):
            idx.add_tokens(["a"], [])
