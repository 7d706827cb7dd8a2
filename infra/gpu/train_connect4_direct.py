"""GPU check: train Connect Four on one GPU for a fixed time with zeroforge's own self-play, search and
training code (driven directly: the device has no Redis/rq/Prefect), then measure it against pure MCTS."""
import argparse, json, os, time
import multiprocessing as mp
import numpy as np
import torch

def selfplay_worker(args):
    weights, seed, games, sims, device = args
    torch.set_num_threads(1)
    from shared.games import make_game
    from shared.network import create_model, TorchEvaluator, NetworkSpec
    from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games
    game = make_game("connect4")
    model = create_model(game, NetworkSpec(5, 64))
    model.load_state_dict(weights)
    ev = TorchEvaluator(model.to(device), game, device=device)
    cfg = SelfPlayConfig(search=SearchConfig(num_simulations=sims, dirichlet_alpha=1.0), temperature_moves=10)
    r = play_selfplay_games(game, ev, games, cfg, np.random.default_rng(seed))
    return r.states, r.pi, r.z, r.results

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=240); p.add_argument("--procs", type=int, default=8)
    p.add_argument("--games", type=int, default=256); p.add_argument("--sims", type=int, default=64)
    p.add_argument("--steps", type=int, default=400); p.add_argument("--device", default="cuda")
    p.add_argument("--eval-games", type=int, default=100); p.add_argument("--out", default=".")
    p.add_argument("--opponents", default="pure-mcts:1000")
    p.add_argument("--init", default=None, help="continue from this model file instead of random weights")
    a = p.parse_args()
    from shared.games import make_game
    from shared.network import create_model, NetworkSpec, save_model
    from shared.training import TrainSettings, make_optimizer, sample_batch, train_step
    game = make_game("connect4")
    model = create_model(game, NetworkSpec(5, 64), seed=0)
    if a.init:
        from shared.network import load_model
        model = load_model(a.init, expected_game=game).model
    model = model.to(a.device)
    settings = TrainSettings(steps=10**9, batch_size=512, learning_rate=2e-3, weight_decay=1e-4, lr_final_fraction=1.0)
    opt = make_optimizer(model, settings)
    ctx = mp.get_context("spawn"); pool = ctx.Pool(a.procs)
    window = []; start = time.time(); gen = 0; step = 0; rng = np.random.default_rng(0); total_games = 0
    while time.time() - start < a.seconds:
        gen += 1; t0 = time.time()
        weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        outs = pool.map(selfplay_worker, [(weights, gen * 1000 + i, a.games, a.sims, a.device) for i in range(a.procs)])
        t1 = time.time()
        window.extend(outs); window = window[-3 * a.procs:]
        S = np.concatenate([o[0] for o in window]); P = np.concatenate([o[1] for o in window]); Z = np.concatenate([o[2] for o in window])
        res = np.concatenate([o[3] for o in outs]); total_games += len(res)
        losses = []
        for _ in range(a.steps):
            batch = sample_batch(game, S, P, Z, 512, rng, True)
            losses.append(train_step(model, opt, batch, settings, step, a.device)); step += 1
        print(json.dumps({"gen": gen, "games": int(len(res)), "positions": int(sum(len(o[2]) for o in outs)),
                          "first_wins": int((res == 1).sum()), "draws": int((res == 0).sum()),
                          "selfplay_s": round(t1 - t0, 1), "train_s": round(time.time() - t1, 1),
                          "loss": round(float(np.mean([l["loss"] for l in losses[-50:]])), 4),
                          "elapsed_s": round(time.time() - start, 1)}), flush=True)
    pool.close()
    model = model.eval().cpu()
    path = os.path.join(a.out, "connect4_gpu.pt")
    save_model(path, model, game, {"trained_on": "H200", "generations": gen, "games": total_games,
                                    "seconds": round(time.time() - start), "init": os.path.basename(a.init or "random")})
    from shared.player_spec import build_player
    from shared.search.arena import opening_set, play_match
    ops = opening_set(game, a.eval_games // 2, seed=2024)
    for opp in a.opponents.split(","):
        t0 = time.time()
        me = build_player(path, game, simulations=64, device=a.device)
        r = play_match(game, me, build_player(opp, game, simulations=1), ops)
        print(json.dumps({"eval": f"connect4 gpu model (64 sims) vs {opp}", "games": len(r.games), "wins": r.wins, "draws": r.draws,
                          "losses": r.losses, "score": round(r.score, 3), "seconds": round(time.time() - t0, 1)}), flush=True)

if __name__ == "__main__":
    main()
