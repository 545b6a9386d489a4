"""The autotrain loop end to end, through the real command line, with a kill -9 in the middle."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from zero9.learn.rundir import RunDir
from zero9.util.files import read_json, read_jsonl

TINY = ["--game", "gomoku", "--size", "6", "--connect", "4", "--blocks", "1", "--filters", "16",
        "--games-per-gen", "16", "--visits", "32", "--steps", "100", "--generations", "3", "--device", "cpu"]


def autotrain_cmd(run_dir: Path, extra: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "zero9", "autotrain", *TINY, "--dir", str(run_dir), *(extra or [])]


def records(run_dir: Path) -> set[str]:
    return {p.name for p in RunDir(run_dir).chunk_files()}


def held_out_policy_loss(rd: RunDir, net_hash: str) -> float:
    import torch

    from zero9.learn.training.losses import evaluate
    from zero9.learn.training.window import held_out_chunks, read_chunk
    from zero9.nn.checkpoint import game_from_meta, load_net
    from zero9.nn.chunks import ChunkData
    from zero9.settings import TrainOptions

    net, meta = load_net(rd.net_path(net_hash), "cpu")
    game = game_from_meta(meta)
    test = ChunkData.concatenate([read_chunk(f, game) for f in sorted(held_out_chunks(rd.chunk_files()))])
    return evaluate(net, test, TrainOptions(), torch.device("cpu"))["policy_loss"]


@pytest.mark.timeout(400)
def test_tiny_gomoku_run_survives_kill_9_and_finishes(tmp_path):
    run_dir = tmp_path / "run"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    start = time.monotonic()
    proc = subprocess.Popen(autotrain_cmd(run_dir), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    # Kill it once the second round's self-play has written a few games.
    rd = RunDir(run_dir)
    while proc.poll() is None and (rd.status().get("generation", 0) < 1 or rd.count_games(1) < 3):
        time.sleep(0.2)
    assert proc.poll() is None, proc.stdout.read().decode()
    status_before = rd.status()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = records(run_dir)
    assert status_before["generation"] >= 1 and len(before) >= 16 + 3

    result = subprocess.run(autotrain_cmd(run_dir), capture_output=True, text=True, env=env, timeout=300)
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    after = records(run_dir)
    assert before <= after, f"games lost: {sorted(before - after)}"

    status = rd.status()
    assert status["generation"] == 3
    assert status["games"] == len(after) >= 3 * 16
    for g in range(3):
        assert rd.count_games(g) >= 16
    assert len(list(rd.sgf_dir.rglob("*.sgf"))) == len(after)
    assert not list(run_dir.rglob(".tmp-*")), "temporary files left behind"
    assert rd.net_path(status["best"]).exists()
    assert not rd.train_state_path.exists()

    # Losses: logged per generation, no step counted twice.
    rows = read_jsonl(rd.train_log)
    test_rows = [r for r in rows if r["kind"] == "test"]
    keys = [(r["kind"], r["generation"], r["step"]) for r in rows]
    assert len(keys) == len(set(keys))
    assert {r["generation"] for r in test_rows} == {0, 1, 2}

    # Ratings: one entry per generation, with an interval.
    ratings = read_json(rd.ratings_path)
    assert [g["generation"] for g in ratings["generations"]] == [1, 2, 3]
    assert all(g["lo"] <= g["elo"] <= g["hi"] for g in ratings["generations"])
    assert "random" in ratings["ratings"]
    config = json.loads(rd.config_path.read_text())
    assert config["game"]["size"] == 6 and config["net"]["filters"] == 16

    # Each round says where its time went; the plots are drawn (at least when the loop stops).
    rounds = [e for e in read_jsonl(rd.events_log) if e["event"] == "promoted"]
    assert {e["generation"] for e in rounds} == {1, 2, 3}
    for e in rounds:
        assert set(e["seconds"]) == {"selfplay", "train", "gate", "rate", "other"}
        assert e["seconds"]["train"] > 0 and all(v >= 0 for v in e["seconds"].values())
    assert {p.name for p in rd.plots_dir.glob("*.png")} >= {"losses.png", "selfplay.png"}
    print(f"tiny autotrain with a kill -9: {elapsed:.0f}s")


@pytest.mark.timeout(300)
def test_tiny_run_learns_on_held_out_games(tmp_path):
    # The test loss falls from the first net to the last, on the same held-out games (the chunks
    # no round trained on; the logged rows use a different test set each round). The contract's
    # 100 steps a round move the held-out policy loss by only 0.00-0.02 nat at 16 games a round
    # (once up by 0.002 in CI): each position may be drawn 8 times a round, so 100 steps are
    # ~1,700 samples. 400 steps moved it by 0.04-0.09 in each of 4 runs (measured). The policy
    # loss is compared: the value loss on ~4 held-out games swings by +-0.5.
    run_dir = tmp_path / "run"
    result = subprocess.run(autotrain_cmd(run_dir, ["--steps", "800"]), capture_output=True, text=True,
                            timeout=250)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rd = RunDir(run_dir)
    first_net = read_jsonl(rd.events_log)[0]["net"]
    first_loss, last_loss = (held_out_policy_loss(rd, net) for net in (first_net, rd.status()["best"]))
    assert last_loss < first_loss - 0.01, (first_loss, last_loss)


@pytest.mark.timeout(300)
def test_games_of_pruned_generations_stay_counted(tmp_path):
    import shutil

    run_dir = tmp_path / "run"
    rd = RunDir(run_dir)
    for generations in (1, 2):
        if generations == 2:  # a carried run directory holds only the newest chunks
            shutil.rmtree(rd.gen_chunks_dir(0))
        result = subprocess.run(autotrain_cmd(run_dir, ["--generations", str(generations), "--steps", "20"]),
                                capture_output=True, text=True, timeout=250)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    status = rd.status()
    assert rd.count_games() == status["games_by_generation"]["1"] == 16
    assert status["games_by_generation"]["0"] == 16 and status["games"] == 32


def test_rating_matches_are_played_at_once_over_the_workers(tmp_path):
    from zero9.games import make_game
    from zero9.learn.loop.rating import RunMatches
    from zero9.learn.selfplay.pool import WorkerPool

    with WorkerPool(2) as pool:
        matches = RunMatches(RunDir(tmp_path / "run"), make_game("gomoku", 6, connect=4), pool, "cpu",
                             visits=32, seed=1)
        scores = matches.play_all([("mcts:200", "random", 3, 0), ("random", "mcts:200", 4, 5),
                                   ("random", "random", 0, 0)])
    assert [len(s) for s in scores] == [3, 4, 0]
    assert sum(scores[0]) >= 2.5 and sum(scores[1]) <= 1, scores


def test_rerun_with_other_game_shape_is_a_clear_error(tmp_path):
    from zero9.learn.loop.nets import check_config

    with pytest.raises(ValueError, match="net"):
        check_config({"game": {"game": "gomoku", "size": 6}, "net": {"blocks": 1, "filters": 16}},
                     {"game": {"game": "gomoku", "size": 6}, "net": {"blocks": 2, "filters": 16}}, tmp_path)


def test_ownership_head_is_on_by_default_for_new_go_runs_only(tmp_path):
    from zero9.cli.autotrain import add_arguments, make_loop
    from zero9.games import make_game
    from zero9.learn.loop.nets import NetShape, identity_config

    go, gomoku = make_game("go", 9), make_game("gomoku", 6, connect=4)
    assert identity_config(go, NetShape(1, 8))["net"]["ownership"] is True
    assert identity_config(go, NetShape(1, 8, ownership=False))["net"]["ownership"] is False
    assert identity_config(gomoku, NetShape(1, 8))["net"]["ownership"] is False
    with pytest.raises(ValueError, match="Go only"):
        identity_config(gomoku, NetShape(1, 8, ownership=True))

    parser = argparse.ArgumentParser()
    add_arguments(parser)

    def loop(*extra: str):
        return make_loop(parser.parse_args(["--game", "go", "--size", "9", "--blocks", "1", "--filters", "8",
                                            "--device", "cpu", "--dir", str(tmp_path / "go"), *extra]))

    # A run made before the default changed (no ownership head) resumes without the flag ...
    rd = RunDir(tmp_path / "go")
    loop("--no-ownership").prepare()  # writes the run directory's config and first net
    assert rd.config()["net"]["ownership"] is False
    assert rd.config()["last_command"]["ownership"] is False  # the options as given
    assert loop().config["net"]["ownership"] is False
    # ... and asking for the head explicitly is the clear error of a changed shape.
    with pytest.raises(ValueError, match="ownership"):
        loop("--ownership")


def test_init_from_copies_the_whole_net_on_the_same_board_and_the_tower_on_another(tmp_path, caplog):
    import torch

    from zero9.games import make_game
    from zero9.learn.loop.nets import transplant_tower
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.net import make_net

    torch.manual_seed(0)
    game = make_game("gomoku", 9)
    source = make_net(game, blocks=1, filters=8)
    path = tmp_path / "source.pt"
    save_checkpoint(path, source, {"game": game.to_dict()})

    same = make_net(make_game("gomoku", 9), blocks=1, filters=8)
    caplog.set_level(logging.INFO, logger="zero9")
    transplant_tower(same, str(path))
    assert "the whole net" in caplog.messages[-1]
    for key, value in source.state_dict().items():
        assert torch.equal(same.state_dict()[key], value), key

    other = make_net(make_game("gomoku", 7), blocks=1, filters=8)
    fresh = {k: v.clone() for k, v in other.state_dict().items()}
    transplant_tower(other, str(path))
    assert "heads start fresh" in caplog.messages[-1]
    for key, value in other.state_dict().items():
        tower = key.startswith(("input_block.", "tower."))
        assert torch.equal(value, source.state_dict()[key] if tower else fresh[key]), key


@pytest.mark.timeout(400)
def test_rate_every_k_rates_every_kth_candidate_against_the_last_rated_one(tmp_path):
    run_dir = tmp_path / "run"
    extra = ["--generations", "4", "--games-per-gen", "8", "--steps", "20", "--rate-every", "2",
             "--eval-games", "2", "--anchors", "random", "--workers", "1", "--no-plots"]
    result = subprocess.run(autotrain_cmd(run_dir, extra), capture_output=True, text=True, timeout=380)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    games = read_jsonl(RunDir(run_dir).rating_games)
    assert sorted({r["generation"] for r in games}) == [2, 4]
    second = next(r["a"] for r in games if r["generation"] == 2)
    assert sorted({r["b"] for r in games if r["generation"] == 4}) == sorted([second, "random"])
    assert sorted({r["b"] for r in games if r["generation"] == 2}) == ["random"]

    # A run carried on without its old nets (only the best one committed) rates against the newest
    # rated net whose file is still there, and against the anchors alone when none is.
    from zero9.cli.autotrain import add_arguments, make_loop
    from zero9.learn.loop.rating import RunMatches

    class Asked(RunMatches):
        def play_all(self, matches):
            asked.append([m[1] for m in matches])
            return [[] for _ in matches]

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    loop = make_loop(parser.parse_args(["--dir", str(run_dir), *TINY, *extra]))
    loop.prepare()
    fourth = next(r["a"] for r in games if r["generation"] == 4)
    asked = []
    loop.matches = Asked(loop.run_dir, loop.game, pool=None, device="cpu", visits=32)
    rd = RunDir(run_dir)
    rd.net_path(fourth.split("-", 1)[1]).unlink()
    loop.rate(6, "0123456789ab")
    rd.net_path(second.split("-", 1)[1]).unlink()
    loop.rate(8, "0123456789ab")
    assert asked == [[f"net:{second.split('-', 1)[1]}", "random"], ["random"]]


def test_the_command_line_fills_the_loops_settings_with_their_own_defaults(tmp_path):
    from zero9.cli.autotrain import add_arguments, loop_settings
    from zero9.learn.loop.nets import NetShape
    from zero9.settings import AutotrainConfig, SelfPlayConfig, TrainOptions

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    settings = loop_settings(parser.parse_args(["--dir", str(tmp_path / "run")]))
    assert settings["config"] == AutotrainConfig()  # every default in one place: zero9/settings.py
    assert settings["net"] == NetShape()
    assert settings["train"] == TrainOptions(steps=AutotrainConfig.steps)
    assert settings["selfplay"].visits == SelfPlayConfig.visits and settings["game"].name == "go"
    settings = loop_settings(parser.parse_args(
        ["--dir", "x", "--anchors", "random, mcts:50,", "--no-plots", "--no-sgf", "--lz-chunks", "--gate",
         "--rate-every", "3", "--workers", "2", "--score-head", "--no-ownership", "--init-from", "a.pt"]))
    config = settings["config"]
    assert config.anchors == ("random", "mcts:50") and not config.plots and not config.sgf
    assert config.lz_chunks and config.gate and config.rate_every == 3 and config.workers == 2
    assert settings["net"] == NetShape(ownership=False, score=True, init_from="a.pt")
    assert settings["command"]["anchors"] == "random, mcts:50,"  # recorded as given (config.json)


def test_the_rating_line_says_saturated_or_gives_the_interval(tmp_path, caplog):
    """Issue 42: a net that won every game against the strongest anchor printed "280 Elo" round
    after round; the line must say it is a lower bound (and name the anchor), and otherwise
    give the 95% interval."""
    from zero9.learn.loop.rating import fit_ratings

    rd = RunDir(tmp_path / "run")
    rd.rating_games.parent.mkdir(parents=True, exist_ok=True)
    rows = [("gen0001-aaaa", "random", 1.0), ("gen0001-aaaa", "random", 1.0),
            ("gen0001-aaaa", "mcts:200", 1.0), ("gen0001-aaaa", "mcts:200", 0.0),
            ("mcts:200", "random", 1.0), ("mcts:200", "random", 1.0), ("mcts:200", "random", 0.0)]
    for generation in (2, 3):  # each new net wins all its games: saturated
        name = f"gen{generation:04d}-{'bcd'[generation - 2] * 4}"
        rows += [(name, "random", 1.0)] * 4 + [(name, "mcts:200", 1.0)] * 4
    for a, b, score in rows:
        with rd.rating_games.open("a") as f:
            f.write(json.dumps({"a": a, "b": b, "score": score}) + "\n")
    caplog.set_level(logging.INFO, logger="zero9")
    fit_ratings(rd, 10.0)
    line = caplog.messages[-1]
    newest = read_json(rd.ratings_path)["generations"][-1]
    assert newest["name"] == "gen0003-cccc"
    assert line.startswith(f"rating: gen0003-cccc ≥ {newest['lo']:.0f} Elo: won all 4 games against the "
                           "strongest anchor, mcts:200"), line
    assert f"{newest['elo']:.0f} Elo" not in line  # the prior's number, not the games'
    # a net that did not sweep the strongest anchor: its number and 95% interval
    with rd.rating_games.open("a") as f:
        for score in (1.0, 0.0, 1.0, 0.5):
            f.write(json.dumps({"a": "gen0004-dddd", "b": "mcts:200", "score": score}) + "\n")
    fit_ratings(rd, 20.0)
    line = caplog.messages[-1]
    newest = read_json(rd.ratings_path)["generations"][-1]
    assert line.startswith(f"rating: gen0004-dddd {newest['elo']:.0f} Elo [{newest['lo']:.0f}, "
                           f"{newest['hi']:.0f}]"), line
    assert newest["hi"] - newest["lo"] > 100  # four games: an interval, not a number to read alone


@pytest.mark.timeout(300)
@pytest.mark.parametrize("role", ["best", "candidate"])
def test_a_missing_net_is_named_in_one_line_before_any_work(tmp_path, role):
    run_dir = tmp_path / "run"
    quick = ["--generations", "0", "--workers", "1", "--no-plots"]
    made = subprocess.run(autotrain_cmd(run_dir, quick), capture_output=True, text=True, timeout=200)
    assert made.returncode == 0, made.stderr[-2000:]
    rd = RunDir(run_dir)
    if role == "best":  # deleted by hand
        name = rd.status()["best"]
        rd.net_path(name).unlink()
    else:  # trained and named, then lost before its gate
        name = "0123456789ab"
        rd.write_status(candidate=name, candidate_generation=1)
    again = subprocess.run(autotrain_cmd(run_dir, ["--generations", "1", "--workers", "1", "--no-plots"]),
                           capture_output=True, text=True, timeout=200)
    assert again.returncode == 2, again.stdout[-1000:] + again.stderr[-3000:]
    assert "Traceback" not in again.stderr
    assert again.stderr.strip().splitlines() == [
        f"zero9 autotrain: error: the run's {role} net {name} is missing: {rd.net_path(name)} (deleted?); "
        f"put it back, or start a new run in another --dir"]
    assert rd.count_games(0) == 0 and rd.status()["generation"] == 0  # refused before any game


def test_the_machines_recipe_fills_what_the_command_leaves_out(tmp_path, monkeypatch, capsys):
    """Issue 45: on a CUDA GPU 9x9 Go takes the measured recipe, every option given still wins, a
    resumed run keeps its own net shape, and config.json says where each choice came from."""
    import zero9.cli.autotrain as cli
    from zero9.settings import GPU_GO9_RECIPE, autotrain_recipe

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    monkeypatch.setattr(cli, "resolve_device", lambda device: "cuda")
    monkeypatch.setattr(cli, "find_gnugo", lambda: "/usr/games/gnugo")
    args = parser.parse_args(["--dir", str(tmp_path / "gpu"), "--steps", "77", "--no-gumbel"])
    chosen = cli.fill_defaults(args, cores=16)
    _, recipe = autotrain_recipe("go", 9, "cuda", 16)
    assert chosen["recipe"] == GPU_GO9_RECIPE and chosen["cores"] == 16
    assert (args.blocks, args.filters, args.visits, args.games_per_gen, args.window_min) == (10, 64, 32, 1024,
                                                                                            150_000)
    assert args.workers == 15 == recipe["workers"] and args.anchors == "random,gnugo:1,gnugo:10"
    assert args.steps == 77 and args.gumbel is False  # given: the flag wins, --no-gumbel too
    assert chosen["from"]["steps"] == chosen["from"]["gumbel"] == "flag"
    assert chosen["from"]["visits"] == "recipe"
    out = capsys.readouterr().out
    assert "recipe gpu-go9" in out and "--visits 32" in out
    assert "given on the command line: --gumbel, --steps" in out

    # Without GNU Go the recipe's anchors fall back to the default ones, and the line says why.
    monkeypatch.setattr(cli, "find_gnugo", lambda: None)
    args = parser.parse_args(["--dir", str(tmp_path / "gpu")])
    assert cli.fill_defaults(args, cores=4)["from"]["anchors"].startswith("default (GNU Go")
    assert args.anchors is None and args.workers == 3
    # Another game, or a CPU: the options' own defaults (the laptop's recipe).
    for argv, device in ((["--game", "gomoku"], "cuda"), (["--size", "7"], "cuda"), ([], "cpu")):
        monkeypatch.setattr(cli, "resolve_device", lambda d, device=device: device)
        args = parser.parse_args(["--dir", str(tmp_path / "x"), *argv])
        chosen = cli.fill_defaults(args, cores=16)
        assert chosen["recipe"] == "cpu" and set(chosen["from"].values()) == {"default"}
        assert (args.blocks, args.visits, args.gumbel) == (6, 200, False)

    # A run made on a CPU (6 x 32 by default) resumes on the GPU with its own shape, not the recipe's.
    monkeypatch.setattr(cli, "resolve_device", lambda device: "cpu")
    run = tmp_path / "resumed"
    cli.make_loop(parser.parse_args(["--dir", str(run), "--blocks", "1", "--filters", "8"])).prepare()
    config = RunDir(run).config()
    assert config["defaults"]["from"]["blocks"] == "flag" and config["defaults"]["options"]["visits"] == 200
    assert "recipe" not in config["last_command"]
    monkeypatch.setattr(cli, "resolve_device", lambda device: "cuda")
    args = parser.parse_args(["--dir", str(run)])
    chosen = cli.fill_defaults(args, cores=16)
    assert (args.blocks, args.filters) == (1, 8) and chosen["from"]["blocks"] == "run"
    assert args.visits == 32  # the rest is the machine's


def test_hours_start_no_round_that_would_end_past_them(tmp_path, monkeypatch):
    """--hours 0.33 must give a net of the run's 20 minutes: the loop stops before a round that, as
    long as the last round of its kind, would end past them (a rated round is longer)."""
    from zero9.cli.autotrain import add_arguments, make_loop

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    loop = make_loop(parser.parse_args(["--dir", str(tmp_path / "r"), "--device", "cpu", "--hours", "0.01",
                                        "--rate-every", "2", "--eval-games", "2", "--blocks", "1",
                                        "--filters", "8"]))
    played: list[int] = []
    clock = [loop.started]
    monkeypatch.setattr("zero9.learn.loop.autotrain.time.monotonic", lambda: clock[0])
    lengths = {0: 5.0, 1: 12.0, 2: 5.0, 3: 12.0, 4: 5.0}  # round 1, 3 ... rate (round g rates g + 1)

    def round_(g: int) -> None:
        played.append(g)
        clock[0] += lengths[g]
        loop.run_dir.write_status(generation=g + 1)

    loop.round = round_
    loop.run_dir.root.mkdir(parents=True)
    loop.run_dir.write_status(generation=0)
    loop.loop()
    # 36 s: rounds 0-3 take 34 s; round 4 (5 s, as round 2) would end at 39 s
    assert played == [0, 1, 2, 3] and clock[0] - loop.started == 34.0
    assert not loop.rates(0) and loop.rates(1) and loop.expected_round(5) == 12.0
