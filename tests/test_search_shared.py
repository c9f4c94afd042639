#!/usr/bin/env python3
"""A search shared by several machines (issue 46) against a real PostgreSQL
server, started here on 127.0.0.1 in a temporary folder (initdb, pg_ctl;
as the user nobody when the tests run as root, which PostgreSQL refuses),
stopped at the end. Two runners, two processes with their own output
folders standing in for two machines, share one study; the reference for
what happened is the database itself, read here with Optuna:
- 8 trials, 2 at once on each runner, complete, none trained twice (each trial's number has one run
  folder, in one of the two), each trial's value is its run's best
  eval_accuracy in its metrics.csv, and both runners trained trials;
- a runner killed with SIGKILL mid-trial: a runner that joins afterwards
  takes its trial over (its heartbeats stopped) and finishes it in a folder
  of its own;
- a wrong password, a port where no database answers, a study whose space
  is not --space, and a password in the URL are refused by name, exit 2;
- the password is in no file the studio writes and in none of its output.
Environment (ctest sets it): STUDIO_CLI, STUDIO_PRESET_DIR.
"""
import csv
import glob
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import optuna
from suite_limits import HANG_LIMIT_S

CLI = os.environ["STUDIO_CLI"]
TRIAL = ["--preset", "fashion-mnist-mlp", "--set", "data.train_limit=3000", "--set", "data.test_limit=500",
         "--set", "train.epochs=2", "--set", "evaluation.every_steps=8", "--set", "performance.threads=1"]
SPACE = ["--space", "optimizer.lr=float:0.001:0.3:log"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    assert found, "PostgreSQL's server is not installed: run packaging/setup.sh (it installs postgresql)"
    return os.path.dirname(found[-1])


class SharedStudyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="studio-pg-")
        os.chmod(cls.tmp, 0o755)
        cls.password = "pw-" + secrets.token_hex(8)
        cls.port = free_port()
        bindir = postgres_bin()
        data, pwfile = os.path.join(cls.tmp, "data"), os.path.join(cls.tmp, "pw")
        with open(pwfile, "w") as f:
            f.write(cls.password + "\n")
        as_user = []
        if os.geteuid() == 0:  # initdb and postgres refuse root
            shutil.chown(cls.tmp, "nobody")
            shutil.chown(pwfile, "nobody")
            as_user = ["runuser", "-u", "nobody", "--"]
        cls.pg_ctl = as_user + [os.path.join(bindir, "pg_ctl"), "-D", data]
        subprocess.run(as_user + [os.path.join(bindir, "initdb"), "-D", data, "-U", "studio", f"--pwfile={pwfile}",
                                  "-A", "scram-sha-256"], check=True, capture_output=True)
        os.remove(pwfile)
        cls.start_server()
        os.environ["PGPASSWORD"] = cls.password  # for Optuna here, reading the database
        cls.env = {**os.environ, "STUDIO_SEARCH_HEARTBEAT": "1", "STUDIO_SEARCH_GRACE": "4"}
        for db in ("study", "kill", "gone"):
            subprocess.run([os.path.join(bindir, "createdb"), "-h", "127.0.0.1", "-p", str(cls.port), "-U", "studio",
                            db], check=True, env=cls.env, capture_output=True)
        cls.outputs = []

    @classmethod
    def start_server(cls):
        subprocess.run(cls.pg_ctl + ["-o", f"-p {cls.port} -k {cls.tmp} -c listen_addresses=127.0.0.1", "-l",
                                     os.path.join(cls.tmp, "server.log"), "-w", "start"], check=True,
                       capture_output=True)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(cls.pg_ctl + ["-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def url(self, db="study"):
        return f"postgresql://studio@127.0.0.1:{self.port}/{db}"

    def start(self, *args, env=None):
        """Machine A's runner (STUDIO_MACHINE names it, as two hosts would be named)."""
        return subprocess.Popen([CLI, "search", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**(env or self.env), "STUDIO_MACHINE": "machine-a"}, start_new_session=True)

    def cli(self, *args, env=None):
        """Machine B's."""
        p = subprocess.run([CLI, "search", *args], capture_output=True, text=True, timeout=HANG_LIMIT_S,
                           env={**(env or self.env), "STUDIO_MACHINE": "machine-b"})
        self.outputs.append(p.stdout + p.stderr)
        return p.returncode, p.stdout + p.stderr

    def wait_for(self, proc, words, seconds=HANG_LIMIT_S):
        """proc's output up to the line holding words (the rest still to read)."""
        seen, end = [], time.time() + seconds
        while time.time() < end:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if words in line:
                return "".join(seen)
        self.fail(f"no '{words}' in: {''.join(seen)}")

    @staticmethod
    def trial_files(*outs):
        found = []
        for out in outs:
            for path in glob.glob(os.path.join(out, "*", "trial.json")):
                with open(path) as f:
                    found.append((json.load(f), os.path.dirname(path)))
        return found

    @staticmethod
    def best_eval(run_dir):
        with open(os.path.join(run_dir, "metrics.csv")) as f:
            rows = [r for r in csv.DictReader(f) if r["kind"] == "eval" and r["eval_accuracy"]]
        return max(float(r["eval_accuracy"]) for r in rows)

    @staticmethod
    def processes_named(name):
        """The pids whose command line holds --set name=NAME (a trial's training process)."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f"name={name}\0".encode() in f.read():
                        found.append(int(pid))
            except OSError:
                pass
        return found

    def test_1_two_runners_share_one_study(self):
        a, b = os.path.join(self.tmp, "machine-a"), os.path.join(self.tmp, "machine-b")
        # Both runners train trials, by events rather than by how fast each starts: A's first trial is
        # held (SIGSTOP; its runner keeps its heartbeat, so the trial stays A's) until B has started one.
        # B then trains while A's one slot waits; A's trial 0 goes on when B's first has started.
        first = self.start(*TRIAL, *SPACE, "--storage", self.url(), "--name", "shared", "--trials", "8",
                           "--pruner", "none", "--parallel", "1", "--out", a)
        head = self.wait_for(first, "trial 0: started")
        deadline, held = time.time() + HANG_LIMIT_S, []
        while not held and time.time() < deadline:  # the line is said just before the process starts
            held = self.processes_named("shared-t0")
            time.sleep(0.05)
        self.assertTrue(held, "trial 0's training process")
        for pid in held:
            os.kill(pid, signal.SIGSTOP)
        try:
            second = subprocess.Popen([CLI, "search", "--join", "--storage", self.url(), "--study", "shared",
                                       "--parallel", "2", "--out", b], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True,
                                      env={**self.env, "STUDIO_MACHINE": "machine-b"})
            joined = self.wait_for(second, ": started")
        finally:
            for pid in held:
                os.kill(pid, signal.SIGCONT)
        text = joined + second.communicate(timeout=HANG_LIMIT_S)[0]
        code = second.returncode
        self.outputs.append(text)
        rest = first.communicate(timeout=HANG_LIMIT_S)[0]
        self.outputs.append(head + rest)
        self.assertEqual(first.returncode, 0, head + rest)
        self.assertEqual(code, 0, text)
        study = optuna.load_study(study_name="shared", storage=self.url().replace("postgresql://",
                                                                                   "postgresql+psycopg2://"))
        done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        self.assertEqual(len(study.trials), 8)
        self.assertEqual(len(done), 8)
        files = self.trial_files(a, b)
        numbers = sorted(f["trial"] for f, _ in files)
        self.assertEqual(numbers, list(range(8)), "each trial trained once, in one folder")
        self.assertTrue(any(d.startswith(a) for _, d in files) and any(d.startswith(b) for _, d in files),
                        "both runners trained trials")
        for t in done:
            run = t.user_attrs["run_dir"]
            self.assertAlmostEqual(t.value, self.best_eval(run), places=12)
        self.assertEqual(study.user_attrs["studio_spec"]["name"], "shared")
        self.assertEqual({t.user_attrs["machine"] for t in study.trials}, {"machine-a", "machine-b"})
        # Each machine's study.json lists every trial of the study.
        for out in (a, b):
            with open(os.path.join(out, "search-shared", "study.json")) as f:
                self.assertEqual(len(json.load(f)["trials"]), 8)

    def test_2_a_killed_runners_trial_is_taken_over(self):
        a, b = os.path.join(self.tmp, "killed-a"), os.path.join(self.tmp, "killed-b")
        slow = [*TRIAL, "--set", "data.train_limit=20000", "--set", "train.epochs=3"]
        first = self.start(*slow, *SPACE, "--storage", self.url("kill"), "--name", "kill", "--trials", "1",
                           "--pruner", "none", "--out", a)
        head = self.wait_for(first, "evaluation 1:")
        os.killpg(first.pid, signal.SIGKILL)  # the runner and its trial's process, as a machine that dies
        first.wait()
        self.outputs.append(head)
        time.sleep(5)  # its heartbeats stop: the grace is 4 s here
        code, text = self.cli("--join", "--storage", self.url("kill"), "--study", "kill", "--out", b)
        self.assertEqual(code, 0, text)
        self.assertIn("trial 0: started", text)
        study = optuna.load_study(study_name="kill", storage=self.url("kill").replace("postgresql://",
                                                                                       "postgresql+psycopg2://"))
        self.assertEqual([t.state for t in study.trials], [optuna.trial.TrialState.COMPLETE])
        run = study.trials[0].user_attrs["run_dir"]
        self.assertTrue(run.startswith(b), run)
        self.assertAlmostEqual(study.trials[0].value, self.best_eval(run), places=12)

    def test_3_bad_input_is_refused_by_name(self):
        cases = [
            ({**self.env, "PGPASSWORD": "wrong"}, ["--join", "--storage", self.url(), "--study", "shared"],
             "password authentication failed"),
            (self.env, ["--join", "--storage", f"postgresql://studio@127.0.0.1:{free_port()}/study", "--study",
                        "shared"], "Connection refused"),
            (self.env, ["--join", "--storage", self.url(), "--study", "shared", "--space",
                        "optimizer.lr=float:0.01:0.5:log"], "is not the space of the study shared"),
            (self.env, ["--join", "--storage", self.url(), "--study", "nothing-here"], "no such study"),
            (self.env, [*TRIAL, *SPACE, "--storage", f"postgresql://studio:{self.password}@127.0.0.1/study"],
             "holds a password"),
            # Issue 59, item 1: the query's form was accepted and kept in search.json.
            (self.env, [*TRIAL, *SPACE, "--storage", f"postgresql://studio@127.0.0.1/study?password={self.password}"],
             "query holds password"),
            (self.env, ["--join", "--storage", f"postgresql://studio@127.0.0.1/study?sslmode=disable&PASSWORD="
                        f"{self.password}", "--study", "shared"], "query holds password"),
        ]
        for env, args, said in cases:
            with self.subTest(said=said):
                code, text = self.cli(*args, "--out", os.path.join(self.tmp, "bad"), env=env)
                self.assertEqual(code, 2, text)
                self.assertIn(said, text)
                # Issue 59, item 7: a failed first connection leaves no study folder behind.
                self.assertEqual(glob.glob(os.path.join(self.tmp, "bad", "*")), [], text)

    def test_3b_a_database_that_stops_mid_search_is_said_and_the_study_resumes(self):
        # Issue 59, item 7: the runner ended with Optuna's "invalid data in the commit" and ~40 lines of
        # tracebacks. Now: the storage named as gone, the trials training stopped with a checkpoint, how to go
        # on; and --resume, with the database back, finishes the study with each trial trained in one folder.
        out = os.path.join(self.tmp, "gone")
        slow = [*TRIAL, "--set", "train.epochs=6"]
        first = self.start(*slow, *SPACE, "--storage", self.url("gone"), "--name", "gone", "--trials", "3",
                           "--parallel", "1", "--pruner", "none", "--out", out)
        head = self.wait_for(first, "trial 1: evaluation 1:")  # its run folder is in the study by then
        subprocess.run(self.pg_ctl + ["-m", "fast", "stop"], check=True, capture_output=True)
        rest, _ = first.communicate(timeout=HANG_LIMIT_S)
        text = head + rest
        self.outputs.append(text)
        self.assertEqual(first.returncode, 1, text)
        self.assertIn(f"the storage {self.url('gone')} stopped answering", text)
        self.assertIn(f"search --resume {out}/search-gone", text)
        self.assertNotIn("Traceback", text)
        self.assertNotIn("invalid data in the commit", text)
        self.start_server()
        time.sleep(5)  # the stopped trial's heartbeats are older than the grace (4 s here): it is taken over
        p = subprocess.run([CLI, "search", "--resume", os.path.join(out, "search-gone")], capture_output=True,
                           text=True, timeout=HANG_LIMIT_S, env={**self.env, "STUDIO_MACHINE": "machine-a"})
        self.outputs.append(p.stdout + p.stderr)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        study = optuna.load_study(study_name="gone", storage=self.url("gone").replace("postgresql://",
                                                                                       "postgresql+psycopg2://"))
        self.assertEqual([t.state for t in study.trials], [optuna.trial.TrialState.COMPLETE] * 3)
        # Each trial in one run folder (the stopped one resumed in its own), its value its run's best.
        runs = {}
        for info, run in self.trial_files(out):
            runs.setdefault(info["trial"], []).append(run)
        self.assertEqual(sorted(runs), [0, 1, 2])
        self.assertTrue(all(len(r) == 1 for r in runs.values()), runs)
        for t in study.trials:
            self.assertEqual(t.user_attrs["run_dir"], runs[t.number][0])
            self.assertAlmostEqual(t.value, self.best_eval(runs[t.number][0]), places=12)

    def test_4_the_password_is_written_nowhere(self):
        self.assertTrue(self.outputs, "runs first")
        for text in self.outputs:
            self.assertNotIn(self.password, text)
            # Issue 60 (minor): Optuna's "Heartbeat of storage is supposed to be used with
            # Study.optimize" UserWarning was printed for each trial; the runner sends its own.
            self.assertNotIn("Heartbeat of storage", text)
        for root, _, files in os.walk(self.tmp):
            if os.path.basename(root) == "data" or "/data/" in root:
                continue  # the server's own folder
            for name in files:
                path = os.path.join(root, name)
                if not os.path.isfile(path) or name.startswith(".s.PGSQL"):
                    continue  # the server's socket and lock
                try:
                    with open(path, "rb") as f:
                        self.assertNotIn(self.password.encode(), f.read(), path)
                except PermissionError:
                    continue


if __name__ == "__main__":
    unittest.main(verbosity=2)
