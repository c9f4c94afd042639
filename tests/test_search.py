#!/usr/bin/env python3
"""training-studio-cli search (issue 28): Optuna's samplers and pruners over runs.

Every reference is Optuna itself, in this Python: the study the runner wrote
is read back with optuna.load_study, the seeded sampler's values are asked
again of a fresh Optuna study with the same sampler, seed and distributions,
and the importances are recomputed with Optuna's fANOVA evaluator. Short
trials: Fashion-MNIST's MLP on 512 to 2048 examples.
Environment (ctest sets it): STUDIO_CLI, STUDIO_PRESET_DIR, STUDIO_PYTHON.
"""
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

from wsgiref.util import setup_testing_defaults

import optuna
import optuna_dashboard
from optuna.trial import TrialState
from suite_limits import HANG_LIMIT_S

CLI = os.environ["STUDIO_CLI"]
SMALL = ["--preset", "fashion-mnist-mlp", "--set", "data.train_limit=512", "--set", "data.test_limit=256",
         "--set", "train.epochs=2", "--set", "evaluation.every_steps=2"]
optuna.logging.set_verbosity(optuna.logging.WARNING)


def search(out, *args, timeout=HANG_LIMIT_S):
    p = subprocess.run([CLI, "search", *args, "--out", out], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def study_of(out, name):
    return optuna.load_study(study_name=name, storage=f"sqlite:///{out}/search-{name}/study.db")


def read_json(path):
    with open(path) as f:
        return json.load(f)


class SearchTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="studio-search-")
        self.out = os.path.join(self.tmp.name, "runs")

    def tearDown(self):
        self.tmp.cleanup()

    def test_six_trials_two_at_once_are_optunas(self):
        space = ["--space", "optimizer.lr=float:1e-4:3e-2:log", "--space", "model.width=int:16:128:pow2"]
        code, text = search(self.out, *SMALL, *space, "--trials", "6", "--parallel", "2", "--pruner", "none",
                            "--seed", "7", "--name", "six")
        self.assertEqual(code, 0, text)
        study = study_of(self.out, "six")
        trials = study.get_trials()
        self.assertEqual([t.number for t in trials], list(range(6)))
        self.assertTrue(all(t.state == TrialState.COMPLETE for t in trials), text)
        # Each value is its run's best evaluation, as its summary.json says.
        for t in trials:
            run = t.user_attrs["run_dir"]
            summary = read_json(os.path.join(run, "summary.json"))
            self.assertEqual(summary["status"], "completed")
            self.assertAlmostEqual(t.value, summary["best_eval_accuracy"], places=12)
            self.assertEqual(read_json(os.path.join(run, "trial.json"))["trial"], t.number)
            settings = read_json(os.path.join(run, "settings.json"))
            self.assertEqual(settings["optimizer"]["lr"], t.params["optimizer.lr"])
            self.assertEqual(settings["model"]["width"], t.params["model.width"])
            # The CPU's threads shared by the two at once: OMP_NUM_THREADS's where it is set (ctest sets 1),
            # as a run's performance.threads 0 takes them, else the cores.
            omp = os.environ.get("OMP_NUM_THREADS", "")
            threads = min(int(omp), os.cpu_count() or 1) if omp.isdigit() and int(omp) > 0 else os.cpu_count() or 1
            self.assertEqual(settings["performance"]["threads"], max(1, threads // 2))
        # Two at once: the second trial started before the first ended.
        self.assertLess(trials[1].datetime_start, trials[0].datetime_complete)
        # The seeded TPE sampler's values are those Optuna gives for the same seed and space.
        ref = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=7), direction="maximize")
        dists = {"optimizer.lr": optuna.distributions.FloatDistribution(1e-4, 3e-2, log=True),
                 "model.width": optuna.distributions.CategoricalDistribution([16, 32, 64, 128])}
        for t in trials:
            self.assertEqual(ref.ask(dists).params, t.params)
        # study.json: the trials, the best, and Optuna's fANOVA importances.
        record = read_json(os.path.join(self.out, "search-six", "study.json"))
        self.assertEqual(record["state"], "done")
        self.assertEqual(len(record["trials"]), 6)
        self.assertEqual(record["best"]["number"], study.best_trial.number)
        self.assertEqual(record["best"]["value"], study.best_value)
        imp = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0))
        self.assertEqual(set(record["importances"]), set(imp))
        for k, v in imp.items():
            self.assertAlmostEqual(record["importances"][k], v, places=9)
        self.assertIn(f"best: trial {study.best_trial.number}", text)
        # optuna-dashboard reads the same storage: the study and its six trials, with their values.
        app = optuna_dashboard.wsgi(f"sqlite:///{self.out}/search-six/study.db")

        def get(path, query=""):
            env = {}
            setup_testing_defaults(env)
            env["PATH_INFO"], env["QUERY_STRING"] = path, query
            body = b"".join(app(env, lambda status, headers, exc=None: None))
            return json.loads(body)

        summaries = get("/api/studies")["study_summaries"]
        self.assertEqual([s["study_name"] for s in summaries], ["six"])
        shown = get(f"/api/studies/{summaries[0]['study_id']}", "after=0")["trials"]
        self.assertEqual(sorted((t["number"], t["values"][0]) for t in shown),
                         sorted((t.number, t.value) for t in trials))

    def test_pruner_stops_the_worst_trial_which_can_continue(self):
        # Two evaluations a run at most pruned at its first: a rate a thousand
        # times too low learns nothing where the first trial already learned.
        args = ["--preset", "fashion-mnist-mlp", "--set", "data.train_limit=2048", "--set", "data.test_limit=256",
                "--set", "train.epochs=4", "--set", "train.batch_size=32", "--set", "evaluation.every_steps=8",
                "--set", "schedule.kind=constant",
                "--space", "optimizer.lr=choice:0.003,0.000001", "--enqueue", "optimizer.lr=0.003",
                "--enqueue", "optimizer.lr=0.000001", "--trials", "2", "--pruner", "median", "--name", "prune"]
        code, text = search(self.out, *args)
        self.assertEqual(code, 0, text)
        first, second = study_of(self.out, "prune").get_trials()
        self.assertEqual(first.state, TrialState.COMPLETE, text)
        self.assertEqual(second.state, TrialState.PRUNED, text)
        self.assertEqual(second.params["optimizer.lr"], 0.000001)
        evaluations = len(first.intermediate_values)
        self.assertEqual(evaluations, 2048 // 32 * 4 // 8)
        self.assertEqual(list(second.intermediate_values), [1])  # pruned at its first evaluation
        run = second.user_attrs["run_dir"]
        summary = read_json(os.path.join(run, "summary.json"))
        self.assertEqual(summary["status"], "stopped")
        self.assertLess(summary["steps"], summary["total_steps"])
        self.assertEqual(read_json(os.path.join(run, "trial.json"))["state"], "pruned")
        # Its checkpoint is kept: it continues to its end.
        p = subprocess.run([CLI, "resume", run], capture_output=True, text=True, timeout=HANG_LIMIT_S)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(read_json(os.path.join(run, "summary.json"))["status"], "completed")

    def test_a_trial_pruned_at_its_last_evaluation_reports_its_value(self):
        # Issue 60, item 4: the pruner's stop for a trial's last evaluation came after its last
        # step; the run ended completed (the Runs list said so) while the study recorded it
        # "pruned" with no value. One evaluation a run, at its end: the second trial is pruned
        # there, trains every step, and reports its value.
        args = ["--preset", "fashion-mnist-mlp", "--set", "data.train_limit=256", "--set", "data.test_limit=128",
                "--set", "train.epochs=1", "--set", "train.batch_size=32", "--set", "evaluation.every_steps=0",
                "--space", "optimizer.lr=choice:0.003,0.000001", "--enqueue", "optimizer.lr=0.003",
                "--enqueue", "optimizer.lr=0.000001", "--trials", "2", "--pruner", "median", "--name", "last"]
        code, text = search(self.out, *args)
        self.assertEqual(code, 0, text)
        self.assertIn("trial 1: pruned at evaluation 1", text)
        first, second = study_of(self.out, "last").get_trials()
        self.assertEqual(first.state, TrialState.COMPLETE, text)
        self.assertEqual(second.state, TrialState.COMPLETE, text)
        self.assertLess(second.value, first.value)
        self.assertEqual(second.value, second.intermediate_values[1])
        run = second.user_attrs["run_dir"]
        summary = read_json(os.path.join(run, "summary.json"))
        self.assertEqual(summary["status"], "completed")
        self.assertEqual(summary["steps"], summary["total_steps"])
        self.assertIn("test_accuracy", summary)
        trial = read_json(os.path.join(run, "trial.json"))
        self.assertEqual((trial["state"], trial["value"]), ("completed", second.value))

    def test_a_killed_runner_resumes_without_losing_or_repeating(self):
        args = [*self.LONG, "--trials", "3", "--name", "killed", "--out", self.out]
        runner = subprocess.Popen([CLI, "search", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        run = self.wait_for_checkpoint("killed", 1, runner)
        runner.kill()  # SIGKILL: no chance to clean up
        runner.communicate(timeout=HANG_LIMIT_S)
        # Its trial stops with a checkpoint (STUDIO_STOP_WITH_PARENT), as a stopped run.
        deadline = time.time() + HANG_LIMIT_S
        while time.time() < deadline and not os.path.exists(os.path.join(run, "summary.json")):
            time.sleep(0.1)
        if not os.path.exists(os.path.join(run, "summary.json")):
            with open(os.path.join(run, "log.txt")) as f:
                log = f.read()[-3000:]
            ps = subprocess.run(["ps", "-eo", "pid,ppid,stat,args"], capture_output=True, text=True).stdout
            self.fail(f"{run} has no summary.json long after the runner was killed; its log ends:\n{log}\n{ps}")
        self.assertEqual(read_json(os.path.join(run, "summary.json"))["status"], "stopped")
        before = study_of(self.out, "killed").get_trials()
        self.assertEqual([t.state for t in before], [TrialState.COMPLETE, TrialState.RUNNING])
        p = subprocess.run([CLI, "search", "--resume", os.path.join(self.out, "search-killed")],
                           capture_output=True, text=True, timeout=HANG_LIMIT_S)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"trial 1: resuming {run}", p.stdout)
        after = study_of(self.out, "killed").get_trials()
        self.assertEqual([t.number for t in after], [0, 1, 2])
        self.assertTrue(all(t.state == TrialState.COMPLETE for t in after))
        self.assertEqual(after[0].value, before[0].value)
        self.assertEqual(after[1].user_attrs["run_dir"], run)
        self.assertEqual(after[1].params, before[1].params)
        self.assertNotEqual(after[2].params, after[1].params)  # the resumed sampler draws on
        # One run folder per trial: nothing started twice.
        folders = sorted(d for d in os.listdir(self.out) if "-killed-t" in d)
        self.assertEqual([f.rsplit("-", 1)[1] for f in folders], ["t0", "t1", "t2"])
        # The resumed run's evaluations are numbered on from the checkpoint's.
        evals = read_json(os.path.join(self.out, "search-killed", "study.json"))["trials"][1]["intermediate"]
        self.assertEqual(sorted(int(k) for k in evals), list(range(1, self.STEPS // 16 + 1)))

    # Trials long enough to be stopped after their first checkpoint (step 16
    # of 192) and short enough to finish fast: 2,048 examples, 3 epochs.
    STEPS = 2048 // 32 * 3
    LONG = ["--preset", "fashion-mnist-mlp", "--set", "data.train_limit=2048", "--set", "data.test_limit=256",
            "--set", "train.epochs=3", "--set", "train.batch_size=32", "--set", "evaluation.every_steps=16",
            "--space", "optimizer.lr=float:1e-4:1e-2:log", "--pruner", "none", "--seed", "1"]

    def wait_for_checkpoint(self, name, number, runner):
        record_file = os.path.join(self.out, f"search-{name}", "study.json")
        deadline = time.time() + HANG_LIMIT_S
        while time.time() < deadline and runner.poll() is None:
            time.sleep(0.05)
            try:
                record = read_json(record_file)
            except (OSError, ValueError):
                continue
            for t in record["trials"]:
                if t["number"] == number and t["run_dir"] and os.path.exists(
                        os.path.join(t["run_dir"], "checkpoints", "last.ckpt")):
                    return t["run_dir"]
        self.fail(f"trial {number} never wrote a checkpoint")

    def resume_and_check(self, name, run, trials):
        """--resume finishes every trial: the interrupted one in its folder, none started twice."""
        p = subprocess.run([CLI, "search", "--resume", os.path.join(self.out, f"search-{name}")],
                           capture_output=True, text=True, timeout=HANG_LIMIT_S)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"resuming {run}", p.stdout)
        after = study_of(self.out, name).get_trials()
        self.assertEqual([t.number for t in after], list(range(trials)))
        self.assertEqual([t.state for t in after], [TrialState.COMPLETE] * trials)
        folders = sorted(d for d in os.listdir(self.out) if f"-{name}-t" in d)
        self.assertEqual([f.rsplit("-", 1)[1] for f in folders], [f"t{i}" for i in range(trials)])
        self.assertEqual(read_json(os.path.join(self.out, f"search-{name}", "study.json"))["state"], "done")
        return after

    def test_a_trial_killed_by_sigkill_is_stopped_and_resumes(self):
        # The out-of-memory killer's SIGKILL to a trial: the trial is stopped (resumable, in its folder), not
        # failed; the runner goes on with the others, ends saying so (exit 130), and --resume finishes it.
        runner = subprocess.Popen([CLI, "search", *self.LONG, "--trials", "2", "--name", "oom", "--out", self.out],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        run = self.wait_for_checkpoint("oom", 0, runner)
        ps = subprocess.run(["pgrep", "-f", "name=oom-t0"], capture_output=True, text=True).stdout.split()
        self.assertEqual(len(ps), 1, ps)
        os.kill(int(ps[0]), signal.SIGKILL)
        out, _ = runner.communicate(timeout=HANG_LIMIT_S)
        self.assertEqual(runner.returncode, 130, out)
        self.assertIn("trial 0: stopped (killed by signal 9 (SIGKILL))", out)
        self.assertIn("did not finish", out)
        before = study_of(self.out, "oom").get_trials()
        self.assertEqual([t.state for t in before], [TrialState.RUNNING, TrialState.COMPLETE])
        record = read_json(os.path.join(self.out, "search-oom", "study.json"))
        self.assertEqual([t["state"] for t in record["trials"]], ["stopped", "completed"])
        self.assertEqual(record["state"], "stopped")
        self.assertEqual(read_json(os.path.join(run, "trial.json"))["state"], "stopped")
        after = self.resume_and_check("oom", run, 2)
        self.assertEqual(after[0].user_attrs["run_dir"], run)
        self.assertEqual(after[0].params, before[0].params)

    def test_sigterm_to_the_runner_stops_its_trial_which_resumes(self):
        # The window's Stop (SIGTERM to the runner): the trial in flight is stopped with its checkpoint, never
        # marked failed, and Resume trains every trial asked for.
        runner = subprocess.Popen([CLI, "search", *self.LONG, "--trials", "2", "--name", "term", "--out", self.out],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        run = self.wait_for_checkpoint("term", 0, runner)
        runner.send_signal(signal.SIGTERM)
        out, _ = runner.communicate(timeout=HANG_LIMIT_S)
        self.assertEqual(runner.returncode, 130, out)
        before = study_of(self.out, "term").get_trials()
        self.assertEqual([t.state for t in before], [TrialState.RUNNING])
        self.assertNotIn("error", before[0].user_attrs)
        self.assertEqual([t["state"] for t in read_json(os.path.join(self.out, "search-term", "study.json"))["trials"]],
                         ["stopped"])
        # What a runner killed mid-write leaves (study.json.tmp.NNNN stayed after a Stop, issue 60): the
        # resumed runner removes it, and leaves none of its own.
        folder = os.path.join(self.out, "search-term")
        with open(os.path.join(folder, "study.json.tmp.99999"), "w") as f:
            f.write("{")
        self.resume_and_check("term", run, 2)
        self.assertEqual([n for n in os.listdir(folder) if ".tmp." in n], [])

    def test_two_searches_of_one_study_are_refused(self):
        # Trial 0 trains while two more searches are tried, until the runner is stopped: 1,000 epochs, so
        # that it cannot end (and trial 1 start) before they are, however slow the machine. With 4,096
        # examples, "as long as the others' whole", it ended first once with two CPU hogs beside the suites.
        longer = [*self.LONG, "--set", "train.epochs=1000"]
        runner = subprocess.Popen([CLI, "search", *longer, "--trials", "2", "--name", "twice", "--out", self.out],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            self.wait_for_checkpoint("twice", 0, runner)
            spec = os.path.join(self.out, "search-twice", "search.json")
            with open(spec, "rb") as f:
                spec_before = f.read()
            p = subprocess.run([CLI, "search", "--resume", os.path.join(self.out, "search-twice")],
                               capture_output=True, text=True, timeout=HANG_LIMIT_S)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("is in use by another search", p.stderr)
            with open(spec, "rb") as f:
                self.assertEqual(f.read(), spec_before)
            code, text = search(self.out, *longer, "--trials", "2", "--name", "twice")
            self.assertEqual(code, 2, text)
            self.assertIn("is in use by another search", text)
        finally:
            runner.send_signal(signal.SIGTERM)
            runner.communicate(timeout=HANG_LIMIT_S)
        self.assertEqual(len([d for d in os.listdir(self.out) if "-twice-t" in d]), 1)  # trial 0's alone

    def test_a_storage_that_is_a_link_is_refused(self):
        elsewhere = os.path.join(self.tmp.name, "elsewhere.db")
        optuna.create_study(study_name="linked", storage=f"sqlite:///{elsewhere}")
        with open(elsewhere, "rb") as f:
            bytes_before = f.read()
        folder = os.path.join(self.out, "search-linked")
        os.makedirs(folder)
        os.symlink(elsewhere, os.path.join(folder, "study.db"))
        code, text = search(self.out, *SMALL, "--space", "optimizer.lr=float:0.01:0.1", "--name", "linked")
        self.assertEqual(code, 2, text)
        self.assertIn("study.db is a symbolic link", text)
        with open(elsewhere, "rb") as f:
            self.assertEqual(f.read(), bytes_before)

    def test_a_busy_storage_is_said_to_be_busy(self):
        folder = os.path.join(self.out, "search-busy")
        os.makedirs(folder)
        db = os.path.join(folder, "study.db")
        optuna.create_study(study_name="busy", storage=f"sqlite:///{db}")
        holder = sqlite3.connect(db)
        holder.execute("BEGIN EXCLUSIVE")  # another process writing it
        try:
            code, text = search(self.out, *SMALL, "--space", "optimizer.lr=float:0.01:0.1", "--name", "busy")
        finally:
            holder.rollback()
            holder.close()
        self.assertEqual(code, 2, text)
        self.assertIn("study.db is busy: another process holds it locked", text)
        self.assertNotIn("move it away", text)

    def test_then_train_trains_the_best_without_the_trial_settings(self):
        code, text = search(self.out, *SMALL, "--space", "optimizer.lr=float:1e-3:1e-2:log", "--trials", "2",
                            "--trial-set", "data.train_limit=256", "--pruner", "none", "--name", "best",
                            "--then-train")
        self.assertEqual(code, 0, text)
        study = study_of(self.out, "best")
        record = read_json(os.path.join(self.out, "search-best", "study.json"))
        run = record["then_train_run"]
        self.assertTrue(run and run.endswith("best-best"), record)
        settings = read_json(os.path.join(run, "settings.json"))
        self.assertEqual(settings["optimizer"]["lr"], study.best_params["optimizer.lr"])
        self.assertEqual(settings["data"]["train_limit"], 512)  # the base's, not the trials' 256
        trial_settings = read_json(os.path.join(study.best_trial.user_attrs["run_dir"], "settings.json"))
        self.assertEqual(trial_settings["data"]["train_limit"], 256)
        # One parameter searched: its importances are Optuna's fANOVA's (the runner gives them without
        # the forest, resources/search/studio_search.py's one_parameters_importances).
        imp = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0))
        self.assertEqual(list(record["importances"].items()), [(k, float(v)) for k, v in imp.items()])
        self.assertEqual(record["importance_note"], "fANOVA over 2 finished trials")

    def test_an_invalid_combination_fails_without_training(self):
        # Each value is valid alone; Nesterov momentum without momentum is not.
        code, text = search(self.out, *SMALL, "--set", "optimizer.kind=sgd", "--set", "optimizer.momentum=0.9",
                            "--set", "optimizer.nesterov=false", "--space", "optimizer.nesterov=choice:true,false",
                            "--space", "optimizer.momentum=choice:0,0.9", "--sampler", "grid", "--pruner", "none",
                            "--trials", "4", "--name", "combo")
        self.assertEqual(code, 0, text)
        trials = study_of(self.out, "combo").get_trials()
        self.assertEqual(len(trials), 4)
        failed = [t for t in trials if t.state == TrialState.FAIL]
        self.assertEqual([t.params for t in failed], [{"optimizer.nesterov": True, "optimizer.momentum": 0}])
        self.assertIn("never trained", failed[0].user_attrs["error"])
        self.assertIn("optimizer.nesterov needs optimizer.momentum > 0", failed[0].user_attrs["error"])
        self.assertNotIn("run_dir", failed[0].user_attrs)
        self.assertEqual(sum(t.state == TrialState.COMPLETE for t in trials), 3)
        self.assertEqual(len([d for d in os.listdir(self.out) if "-combo-t" in d]), 3)  # no folder for it

    def test_bad_input_is_said_with_exit_2(self):
        cases = [
            (["--space", "optimizer.learning_rate=float:0.1:1"], r"optimizer.learning_rate is not a setting"),
            (["--space", "optimizer.lr=float:0.1:0.01"], r"the low bound 0.1 is not below the high bound 0.01"),
            (["--space", "optimizer.weight_decay=float:0:0.1:log"], r"a log range needs bounds above 0"),
            (["--space", "optimizer.kind=choice:sgd,nope"], r"the value nope is not valid: optimizer.kind"),
            (["--space", "optimizer.lr=float:0.01:0.1", "--metric", "test_f1"],
             r"--metric test_f1 is not what a run's evaluations record"),
            (["--space", "optimizer.lr=float:0.01:0.1", "--metric", "eval_r2"],
             r"--metric eval_r2 is a regression figure; task.kind is classification"),
            (["--space", "optimizer.lr=float:0.01:0.1", "--metric", "eval_map"],
             r"--metric eval_map is a multi-label or detection figure; task.kind is classification"),
            (["--space", "train.batch_size=int:1:99999999999999999999"], r"must lie within ±9007199254740992"),
            (["--space", "optimizer.lr=float:0.01:0.1", "--metric", "ema_eval_accuracy"],
             r"set train.ema.decay"),
            (["--space", "optimizer.lr=float:0.01:0.1", "--parallel", "0"], r"--parallel 0: give 1 or more"),
            (["--space", "optimizer.lr=float:0.01:0.1", "--sampler", "grid"], r"the grid sampler needs values"),
            (["--space", "train.batch_size=float:8:64"], r"train.batch_size is not a real number; use int:"),
            ([], r"give at least one --space"),
        ]
        for extra, message in cases:
            with self.subTest(extra=extra):
                code, text = search(self.out, *SMALL, *extra, "--name", "bad")
                self.assertEqual(code, 2, text)
                self.assertRegex(text, message)
                self.assertFalse(os.path.exists(os.path.join(self.out, "search-bad")), "nothing is written")

    def test_a_storage_that_is_not_optunas_is_left_alone(self):
        folder = os.path.join(self.out, "search-other")
        os.makedirs(folder)
        for content in ("not a database\n", None):
            db = os.path.join(folder, "study.db")
            if os.path.exists(db):
                os.remove(db)
            if content:
                with open(db, "w") as f:
                    f.write(content)
            else:  # an SQLite file of someone else's
                con = sqlite3.connect(db)
                con.execute("create table notes (text)")
                con.commit()
                con.close()
            with open(db, "rb") as f:
                bytes_before = f.read()
            code, text = search(self.out, *SMALL, "--space", "optimizer.lr=float:0.01:0.1", "--name", "other")
            self.assertEqual(code, 2, text)
            self.assertRegex(text, re.escape(db) + r" is not an Optuna study storage")
            with open(db, "rb") as f:
                self.assertEqual(f.read(), bytes_before)
            self.assertFalse(any("-other-t" in d for d in os.listdir(self.out)), "no trial ran")


if __name__ == "__main__":
    unittest.main(verbosity=2)
