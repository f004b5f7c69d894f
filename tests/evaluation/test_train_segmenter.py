"""``episeg train segmenter``: seeded, train parts only, weights that load and segment."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from episeg.errors import ConfigError
from episeg.evaluation.train_segmenter import PRESETS, main, train
from episeg.segmentation.features import feature_names
from episeg.segmentation.learned import AdaptiveThreshold, BoundaryModel, LearnedPolicy
from episeg.testing import HashingEmbedder

TOPICS = [
    ["deploy", "prod", "terraform"],
    ["auth", "jwt", "login"],
    ["cache", "redis", "ttl"],
    ["flight", "seat", "booking"],
]


def dialogue(i: int, speakers=("user", "agent"), with_types=False):
    turns: list[dict[str, object]] = []
    bounds: list[int] = []
    for k in range(3):
        topic = TOPICS[(i + k) % len(TOPICS)]
        if k:
            bounds.append(len(turns))
        for j in range(4):
            turn = {"speaker": speakers[j % 2], "text": f"{topic[j % 3]} {topic[(j + 1) % 3]} {j}"}
            if with_types:
                turn["type"] = None if j % 2 == 0 else "assistant-answer"
            turns.append(turn)
    return turns, bounds


def replace_threshold(threshold: float | None):
    """The agent preset with its main threshold pinned at ``threshold`` (``None``: unpinned)."""
    return dataclasses.replace(PRESETS["agent"], threshold=threshold)


def write_root(root: Path) -> Path:
    def put(rel: str, rows) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    rows = []
    for i in range(10):
        turns, bounds = dialogue(i)
        rows.append(
            {
                "id": f"tiage_train_{i}",
                "source": "tiage/train",
                "turns": turns,
                "boundaries": bounds,
            }
        )
    put("tiage/tiage_train.jsonl", rows)
    rows = []
    for i in range(16):
        turns, bounds = dialogue(i)
        rows.append(
            {
                "id": f"sds_{i}",
                "source": "superdialseg/validation",
                "turns": turns,
                "boundaries": bounds,
            }
        )
    put("superdialseg/superdialseg_validation.jsonl", rows)
    rows = []
    for s in range(6):
        turns, bounds = dialogue(s, speakers=("user", "assistant"), with_types=True)
        tasks = [(s + 2 * k) % 7 for k in range(3)]
        rows.append(
            {
                "id": f"agent_{s}",
                "source": f"tau, tasks {tasks}",
                "turns": turns,
                "boundaries": bounds,
            }
        )
    put("agent_tau/agent_tau_dev.jsonl", rows)
    return root


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return write_root(tmp_path_factory.mktemp("segdata"))


def small(root: Path, **kw) -> BoundaryModel:
    return train(data_root=root, embedder=HashingEmbedder(dim=16), dims=2, folds=2, **kw)


class TestTrain:
    def test_seeded_and_reproducible(self, root):
        a, b = small(root), small(root)
        assert np.array_equal(a.weights, b.weights) and a.threshold == b.threshold
        assert all(np.array_equal(a.vectors[k], b.vectors[k]) for k in a.vectors)
        assert a.roles_unknown is not None and b.roles_unknown is not None
        assert np.array_equal(a.roles_unknown.weights, b.roles_unknown.weights)

    @pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # on purpose
    def test_a_fit_stopped_by_the_iteration_cap_is_logged(self, root, monkeypatch, caplog):
        from episeg.evaluation import train_fit

        with caplog.at_level("WARNING", logger="episeg.evaluation.train_fit"):
            small(root)
        assert not [r for r in caplog.records if "iterations before tol" in r.getMessage()]
        monkeypatch.setattr(train_fit, "FIT_MAX_ITER", 1)
        with caplog.at_level("WARNING", logger="episeg.evaluation.train_fit"):
            small(root)
        assert [r for r in caplog.records if "stopped at 1 iterations" in r.getMessage()]

    def test_cross_validation_folds_by_content_group(self, root, monkeypatch):
        from episeg.evaluation import train_fit, train_folds

        calls: list[list[str]] = []

        def spy(corpora, folds, rng):
            calls.append([cp.name for cp in corpora])
            return train_folds.corpus_folds(corpora, folds, rng)

        monkeypatch.setattr(train_fit, "corpus_folds", spy)
        small(root)
        assert ["tiage", "superdialseg", "agent_tau"] in calls

    def test_provenance_and_shape(self, root):
        m = small(root)
        assert m.names == feature_names(0) and set(m.vectors) == {"turn", "shift", "agree"}
        files = {f["corpus"]: f for f in m.meta["trained_on"]}
        assert set(files) == {"tiage", "superdialseg", "agent_tau"}
        assert all(f["part"] == "tune" and len(f["sha256"]) == 64 for f in files.values())
        assert files["superdialseg"]["dialogues"] < 16  # the hash-tune half only
        assert "dialseg711/dialseg711.jsonl" in m.meta["never_read"]
        assert m.meta["min_turns"] == PRESETS["agent"].min_turns
        assert m.band >= 0 and set(m.meta["oof_at_threshold"]) == set(files)
        rule = m.meta["adaptive"]  # the relative rule, its floor 1 logit below the threshold
        assert rule["g"] == 2.5 and rule["floor"] == pytest.approx(m.threshold - 1.0)

    def test_the_curve_the_threshold_was_chosen_from_is_kept(self, root):
        from episeg.evaluation.train_fit import TAUS

        for m in (small(root), small(root).roles_unknown):
            assert m is not None
            rows = m.meta["oof_by_threshold"]
            assert [r["threshold"] for r in rows] == sorted(TAUS)
            for r in rows:  # each row's mean is its corpora's
                pks = [c["pk_a"] for c in r["corpora"].values()]
                assert r["mean_pk_a"] == pytest.approx(sum(pks) / len(pks))
            # the CV's threshold is the arg-min of that curve (ties: the higher one)
            best = min(rows, key=lambda r: (r["mean_pk_a"], -r["threshold"]))
            assert best["threshold"] == m.meta["cv_threshold"]
            chosen = next(r for r in rows if r["threshold"] == m.threshold)
            at = {n: c["pk_a"] for n, c in chosen["corpora"].items()}
            assert at == {n: s["pk_a"] for n, s in m.meta["oof_at_threshold"].items()}

    def test_the_preset_pins_the_main_threshold_and_nothing_else(self, root, monkeypatch):
        from episeg.evaluation import train_presets

        m = small(root)
        sub = m.roles_unknown
        assert sub is not None
        assert m.threshold == PRESETS["agent"].threshold == -0.5
        assert sub.threshold == sub.meta["cv_threshold"]  # never pinned
        assert m.meta["adaptive"]["floor"] == pytest.approx(-1.5)
        # another pin moves the threshold, the band and the floor, not the fit or the curve
        pin = next(t for t in (1.0, 1.125) if t != m.meta["cv_threshold"])
        monkeypatch.setitem(train_presets.PRESETS, "agent", replace_threshold(pin))
        moved = small(root)
        assert moved.threshold == pin and moved.meta["adaptive"]["floor"] == pin - 1.0
        assert np.array_equal(moved.weights, m.weights)
        assert moved.meta["oof_by_threshold"] == m.meta["oof_by_threshold"]
        assert moved.meta["cv_threshold"] == m.meta["cv_threshold"]
        assert moved.roles_unknown is not None and moved.roles_unknown.threshold == sub.threshold
        # unpinned, or asked for the CV's choice, the CV's arg-min is the threshold
        asked = small(root, pinned_threshold=False)
        monkeypatch.setitem(train_presets.PRESETS, "agent", replace_threshold(None))
        free = small(root)
        for unpinned in (free, asked):
            assert unpinned.threshold == unpinned.meta["cv_threshold"] == m.meta["cv_threshold"]
            assert np.array_equal(unpinned.weights, m.weights)

    def test_a_pin_off_the_cv_grid_is_refused(self, root, monkeypatch):
        from episeg.evaluation import train_presets

        monkeypatch.setitem(train_presets.PRESETS, "agent", replace_threshold(-0.3))
        with pytest.raises(ConfigError, match="one of the CV grid"):
            small(root)

    def test_agent_preset_trains_a_roles_unknown_model_on_masked_copies(self, root):
        m = small(root)
        sub = m.roles_unknown
        assert sub is not None and sub.roles_unknown is None
        assert sub.meta["roles_known"] is False and m.meta["roles_known"] is True
        assert sub.meta["roles_dropped"] == ["superdialseg", "agent_tau"]
        assert sub.meta["trained_on"] == m.meta["trained_on"]
        # it reads the later turn the preset gives it; the main model decides as turns come
        assert (m.lookahead, sub.lookahead) == (0, 1)
        assert sub.names == feature_names(1) and sub.meta["lookahead"] == 1
        assert m.meta["lookahead"] == 0
        # the preset's lookaheads can be overridden; the same for both: the same rows
        even = small(root, unknown_lookahead=0)
        assert even.roles_unknown is not None and even.roles_unknown.lookahead == 0
        # every turn of the masked corpora is a row, so the fit differs from the main model
        assert not np.allclose(even.roles_unknown.weights, even.weights)
        assert sub.meta["adaptive"]["floor"] == pytest.approx(sub.threshold - 1.0)
        assert set(sub.meta["oof_at_threshold"]) == {"tiage", "superdialseg", "agent_tau"}
        # the main model is the same with or without it
        alone = small(root, roles_unknown_model=False)
        assert alone.roles_unknown is None and np.array_equal(alone.weights, m.weights)

    def test_chat_preset_reads_tiage_without_roles(self, root):
        m = small(root, preset="chat")
        assert [f["corpus"] for f in m.meta["trained_on"]] == ["tiage"]
        assert m.meta["roles_known"] is False
        assert m.meta["adaptive"] is None
        assert m.roles_unknown is None  # its one model is already a roles-unknown one

    def test_cli_writes_weights_that_load(self, root, tmp_path, monkeypatch, capsys):
        import episeg.embedders as embedders

        monkeypatch.setattr(
            embedders.MiniLMEmbedder,
            "default",
            classmethod(lambda cls, **kw: HashingEmbedder(dim=16)),
        )
        out = tmp_path / "w.npz"
        argv = ["--data-root", str(root), "--out", str(out), "--dims", "2", "--folds", "2"]
        assert main(argv) == 0
        printed = capsys.readouterr().out
        assert "out-of-fold" in printed and "roles-unknown model: threshold" in printed
        assert printed.count("thresholds within 0.005 of the best") == 2
        assert printed.count("<- chosen") == 2  # one listed row per model is its threshold
        loaded = BoundaryModel.load(out)
        assert loaded.meta["oof_by_threshold"][0]["corpora"].keys() == {
            "tiage",
            "superdialseg",
            "agent_tau",
        }
        assert loaded.meta["preset"] == "agent" and loaded.roles_unknown is not None
        assert LearnedPolicy(loaded).adaptive == AdaptiveThreshold.from_meta(
            loaded.meta["adaptive"]
        )

    def test_cli_says_when_the_threshold_is_pinned_off_the_cv_choice(
        self, root, tmp_path, monkeypatch, capsys
    ):
        import episeg.embedders as embedders
        from episeg.evaluation import train_presets
        from episeg.evaluation.train_fit import TAUS

        monkeypatch.setattr(
            embedders.MiniLMEmbedder,
            "default",
            classmethod(lambda cls, **kw: HashingEmbedder(dim=16)),
        )
        cv_choice = small(root).meta["cv_threshold"]
        pin = next(t for t in TAUS if t != cv_choice)
        monkeypatch.setitem(train_presets.PRESETS, "agent", replace_threshold(pin))
        argv = ["--data-root", str(root), "--out", str(tmp_path / "w.npz"), "--dims", "2"]
        assert main([*argv, "--folds", "2"]) == 0
        printed = capsys.readouterr().out
        said = f"threshold {pin:+.3f} (pinned by the preset; CV arg-min {cv_choice:+.3f})"
        assert said in printed
        assert f"    {pin:+.3f}: mean Pk" in printed  # listed even when off the best
        assert main([*argv, "--folds", "2", "--cv-threshold"]) == 0
        printed = capsys.readouterr().out
        assert f"\nthreshold {cv_choice:+.3f}, judge band" in printed and "pinned" not in printed

    def test_unknown_preset_is_refused(self, root):
        from episeg.errors import ConfigError

        with pytest.raises(ConfigError, match="unknown preset"):
            small(root, preset="nope")


def test_episeg_train_segmenter_dispatches(root, tmp_path, monkeypatch):
    import episeg.embedders as embedders
    from episeg.interfaces.cli import main as cli_main

    monkeypatch.setattr(
        embedders.MiniLMEmbedder, "default", classmethod(lambda cls, **kw: HashingEmbedder(dim=16))
    )
    out = tmp_path / "cli.npz"
    argv = ["train", "segmenter", "--data-root", str(root), "--out", str(out), "--dims", "2"]
    assert cli_main([*argv, "--folds", "2", "--preset", "chat"]) == 0
    assert BoundaryModel.load(out).meta["preset"] == "chat"
