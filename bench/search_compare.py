"""Reads bench/search_bench.sh's two studies with Optuna and prints their figures."""
import os
import sys

import optuna

runs = os.environ["STUDIO_STUDIES"]
t = [float(a) for a in sys.argv[1:5]]  # the four times around the three searches
walls = {"grid": t[1] - t[0], "tpe": t[2] - t[1], "tpe2": t[3] - t[2]}
n = os.environ.get("TRIALS", "20")
labels = {"grid": f"{n}-run grid", "tpe": f"{n} TPE trials + Hyperband", "tpe2": "the same, 2 at once"}
studies = {n: optuna.load_study(study_name=n, storage=f"sqlite:///{runs}/search-{n}/study.db") for n in walls}
target = studies["grid"].best_value - 0.005
print(f"{'search':<26} {'wall s':>8} {'best':>8} {'trials':>7} {'pruned':>7} {'to grid best s':>15}")
for name, study in studies.items():
    trials = sorted((t for t in study.trials if t.datetime_complete), key=lambda t: t.datetime_complete)
    start = min(t.datetime_start for t in study.trials)
    reached = next(((t.datetime_complete - start).total_seconds() for t in trials
                    if t.state == optuna.trial.TrialState.COMPLETE and t.value >= target), None)
    pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in trials)
    label = labels[name]
    print(f"{label:<26} {walls[name]:8.1f} {study.best_value:8.4f} {len(trials):7d} {pruned:7d} "
          f"{reached if reached is not None else float('nan'):15.1f}")
    print(f"  best: {study.best_params}")
