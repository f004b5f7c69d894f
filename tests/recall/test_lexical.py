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

    def test_tokens_once_equals_text(self) -> None:
        idx: LexicalIndex[str] = LexicalIndex()
        idx.add_tokens(["a", "b"], tokenize(["pasta sauce", "deploy pasta"]))
        assert idx.top_tokens(tokenize(["pasta"])[0], k=2) == idx.top("pasta", k=2)
        with pytest.raises(ValueError):
            idx.add_tokens(["a"], [])
