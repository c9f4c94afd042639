#!/usr/bin/env python3
"""Training Studio's search runner: Optuna's samplers and pruners over runs.

`training-studio-cli search` checks the search, writes the study's
search.json into its folder (<output.dir>/search-<name>/) and starts this
script with the studio's Python. Sampling, pruning and importances are
Optuna's; the study lives in Optuna's RDB storage (study.db, SQLite), so it
survives restarts and `optuna` and `optuna-dashboard` read it. Each trial is
an ordinary run folder, trained by `training-studio-cli --report train`:
every evaluation's metric is the trial's intermediate value (its step is the
evaluation's number), and a trial the pruner stops gets a first SIGINT, so
it ends `stopped` with its checkpoint (`training-studio-cli resume` continues
it). Its value is the best evaluation of the metric in the study's direction.

Files in the study's folder:
  search.json  the spec (written by the CLI)
  base.json    every trial's settings before its own values
  study.db     Optuna's storage
  study.json   the study as the window and the CLI show it, rewritten after
               each event: trials, best, importances (fANOVA, Optuna's)
A run folder of a trial holds trial.json: its study, number, state, values.

With --storage (search.json's "storage") the study is in a database that
other machines' runners join (`search --join`, shared_storage.py): the
study's spec is in its user attributes, each trial records its machine, and
a runner's running trials have heartbeats, so that a runner joining after one
died takes its trials over.

Killing this runner (any signal, even SIGKILL) stops its trials with a
checkpoint (they run with STUDIO_STOP_WITH_PARENT); `search --resume DIR`
resumes those trials in their folders under their numbers, so no trial is
lost or repeated. A trial that did not end by itself (stopped by the runner
or the window, killed by a signal, the out-of-memory killer's SIGKILL
included) is `stopped`: it stays a running trial in Optuna's storage, and
`--resume` continues it in its folder (from step 0 when it had no checkpoint
yet). The CLI holds study.lock in the study's folder for the runner, so a
second search of the same study is refused while one runs. Exit status: 0 done, 1 every trial failed or the runner
failed, 2 bad input (the storage is not Optuna's), 130 stopped.
"""
import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

# A stop asked for while the runner still starts (importing Optuna takes a
# second; the window's Stop can come then): remembered, and the study ends
# "stopped", resumable, as soon as it is open, instead of the runner dying
# before its study.json is written.
_stopped_early = []
signal.signal(signal.SIGINT, lambda signum, frame: _stopped_early.append(signum))
signal.signal(signal.SIGTERM, lambda signum, frame: _stopped_early.append(signum))
# The CLI holds both pending across its exec of this script (a stop before
# the lines above would have killed it): now they are handled.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})

from search_files import (check_storage, distribution, evaluations_before, fail, finite, metrics_values,
                          remove_temporaries, say, setting_text, typed_value, write_json)

import shared_storage

try:
    import optuna
    from optuna.trial import TrialState
except ImportError:
    fail(f"Optuna is not installed for {sys.executable}: run packaging/setup.sh (it installs optuna into the "
         "studio's Python), or set STUDIO_PYTHON to a Python that has optuna", 1)



def cpu_threads():
    """The CPU threads the trials share, and their words: OMP_NUM_THREADS's number where it is set
    (at most the cores), as a run's performance.threads 0 takes it (studio/devices.h), else the cores."""
    cores = os.cpu_count() or 1
    omp = os.environ.get("OMP_NUM_THREADS", "")
    if omp.isdigit() and int(omp) > 0:
        n = min(int(omp), cores)
        return n, f"the {n} thread{'s' if n > 1 else ''} OMP_NUM_THREADS gives of the CPU's {cores} cores"
    return cores, f"the CPU's {cores} cores"


def one_parameters_importances(finished):
    """fANOVA's normalised importances where one parameter alone varies, taking two values or
    more, and the trials' values differ:
    all of the importance is that parameter's (1.0, the fixed ones 0.0), what Optuna's
    FanovaImportanceEvaluator gives, without its forest or importing scikit-learn (1.1 s of
    CPU for each runner, beside the trials). None where Optuna must fit."""
    space = optuna.search_space.intersection_search_space(finished)
    varied = [name for name, d in space.items() if not d.single()]
    if len(varied) != 1 or len({t.value for t in finished}) < 2 or len({repr(t.params[varied[0]]) for t in finished}) < 2:
        return None  # Optuna's answer may differ there (constant trees: 1/n each, or an error)
    return {varied[0]: 1.0, **{name: 0.0 for name, d in space.items() if d.single()}}


class Search:
    def __init__(self, folder, cli, then_train, join=False, new_folder=False):
        self.folder = os.path.abspath(folder)
        remove_temporaries(self.folder)
        self.cli = cli
        self.then_train = then_train
        with open(os.path.join(self.folder, "search.json")) as f:
            self.spec = json.load(f)
        # A study in a database (--storage) is shared with other machines' runners; a joining runner reads
        # the study's spec there and writes it here, with its own parallel and output folder.
        self.url = self.spec.get("storage") or ""
        try:
            self.storage = shared_storage.open_storage(optuna, self.url) if self.url else None
            if join:
                self.spec = shared_storage.joined_spec(optuna, self.storage, self.spec, self.url)
                write_json(os.path.join(self.folder, "search.json"), self.spec)
        except SystemExit:
            # A first connection that fails (a wrong password, a closed port, no such study) leaves no
            # study folder behind when this search made it (issue 59, item 7).
            if new_folder:
                shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.trial_ids = {}  # trial number -> Optuna's trial id, for the heartbeats
        self.stale_now = set()  # the running trials whose runners stopped, as the last snapshot saw them
        s = self.spec
        self.name = s["name"]
        self.metric = s["metric"]
        self.maximize = s["direction"] == "maximize"
        self.space = {p["key"]: p for p in s["space"]}
        self.dists = {k: distribution(p) for k, p in self.space.items()}
        header = s["metrics_header"].split(",")
        self.column = header.index(self.metric)
        self.base_file = os.path.join(self.folder, "base.json")
        write_json(self.base_file, s["base"])
        out = s["base"]["output"]["dir"]
        self.runs_dir = out if os.path.isabs(out) else os.path.abspath(out)
        self.lock = threading.RLock()
        self.children = {}  # trial number -> Popen
        self.live = {}      # trial number -> {"run_dir", "intermediate", "state"}
        self.pruned = set()
        self.stopping = False
        self.importances, self.importance_note = None, "needs two finished trials"
        self.slots, self.slot_note = max(1, s["parallel"]), ""
        self.threads_each = None
        self.gpus = []
        self.then_train_dir = None
        self.importances_due = threading.Event()
        self.importance_count = 0  # the finished trials the importances are of
        self.state = "running"
        self.unfinished = []
        self.storage_lost = None  # the database's words when it stopped answering (shared_storage.lost)
        self.told = set()  # the trials whose end the study holds
        storage_file = os.path.join(self.folder, "study.db")
        if not self.url:
            check_storage(storage_file)
            self.storage = f"sqlite:///{storage_file}"
        self.storage_text = self.url or storage_file
        seed = int(s["seed"])
        if self.url or os.path.exists(storage_file):
            # A resumed study: a sampler seeded as at its start would draw its
            # first values again; its seed moves on by the trials it holds
            # (a joining runner's too: it must not draw the values of the first).
            try:
                seed += len(optuna.load_study(study_name=self.name, storage=self.storage).trials)
            except Exception:  # no such study yet, or a storage create_study refuses below with why
                pass
            if self.url:
                seed += os.getpid() % 100003  # two runners joining at once draw apart
        sampler = {
            "tpe": lambda: optuna.samplers.TPESampler(seed=seed),
            "random": lambda: optuna.samplers.RandomSampler(seed=seed),
            "grid": lambda: optuna.samplers.GridSampler({k: p["grid"] for k, p in self.space.items()}, seed=seed),
        }[s["sampler"]]()
        pruner = {
            "hyperband": lambda: optuna.pruners.HyperbandPruner(),
            "halving": lambda: optuna.pruners.SuccessiveHalvingPruner(),
            "median": lambda: optuna.pruners.MedianPruner(n_startup_trials=1, n_warmup_steps=0),
            "none": lambda: optuna.pruners.NopPruner(),
        }[s["pruner"]]()
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        try:
            self.study = optuna.create_study(storage=self.storage, study_name=self.name,
                                             sampler=sampler, pruner=pruner, direction=s["direction"],
                                             load_if_exists=True)
        except Exception as e:  # a damaged file, another version's schema
            fail(f"{self.storage_text} cannot be opened as Optuna's storage: {e}")
        if self.study.direction.name.lower() != s["direction"]:
            fail(f"{self.storage_text}: the study {self.name} there is to {self.study.direction.name.lower()}, "
                 f"not to {s['direction']}")
        if self.url:
            shared_storage.publish_spec(self.study, s)
        self.target = int(s["trials"])
        if s["sampler"] == "grid":
            size = 1
            for p in self.space.values():
                size *= len(p["grid"])
            if size < self.target:
                say(f"search: the grid has {size} combinations; {size} trials, not {self.target}")
                self.target = size
        if not self.study.trials:
            for line in s.get("enqueued", []):
                params = {}
                for a in line.split():
                    k, v = a.split("=", 1)
                    params[k] = typed_value(self.space[k], v)
                self.study.enqueue_trial(params)

    # ---- where trials run ----
    def plan_devices(self):
        wanted = self.slots
        device = self.spec["base"]["performance"]["device"]
        cuda = 0
        # Without NVIDIA's driver there is no GPU to count, and importing torch to
        # be told so costs each search more than a second of CPU.
        if device != "cpu" and any(os.path.exists(p) for p in ("/proc/driver/nvidia", "/dev/nvidiactl")):
            try:
                import torch
                cuda = torch.cuda.device_count()
            except Exception:
                cuda = 0
        if cuda == 0:
            cores, whose = cpu_threads()
            self.threads_each = max(1, cores // wanted)
            if wanted > cores:
                self.slot_note = (f"{wanted} trials at once on {whose}: one thread each, "
                                  f"the threads shared (--parallel {cores} would give each one of its own)")
            elif wanted > 1:
                self.slot_note = f"{wanted} trials at once on the CPU, {self.threads_each} of {whose} each"
        elif cuda > 1:
            self.gpus = list(range(cuda))
            if wanted > cuda:
                self.slots = cuda
                self.slot_note = f"{cuda} trials at once, one per GPU (asked for {wanted})"
            else:
                self.slot_note = f"{wanted} trials at once, one per GPU"
        elif wanted > 1:
            self.gpus = [0]
            self.measure_first = True
            self.slots = 1
            self.slot_note = "one trial first, to measure its GPU memory"
        if self.slot_note:
            say(f"search: {self.slot_note}")

    def fit_on_gpu(self, peak_mib):
        """After the first trial's first steps on one GPU: as many at once as its memory holds."""
        try:
            import torch
            # The device's size without a CUDA context in this process (mem_get_info would make one).
            total = torch.cuda.get_device_properties(0).total_memory
        except Exception:
            with self.lock:
                self.slots = 1
                self.slot_note = "one trial at a time: the GPU's memory could not be read"
            return
        wanted = max(1, self.spec["parallel"])
        fits = max(1, int(0.9 * (total / 2**20) // max(peak_mib, 1.0)))
        with self.lock:
            self.slots = min(wanted, fits)
            self.slot_note = (f"{self.slots} trials at once on the GPU: a trial's peak is {peak_mib:.0f} MiB of "
                              f"{total / 2**20:.0f} MiB" +
                              (f" (asked for {wanted}; {wanted} do not fit)" if fits < wanted else ""))
        say(f"search: {self.slot_note}")

    # ---- the record ----
    def trial_entry(self, t):
        live = self.live.get(t.number, {})
        state = "pruned" if t.state == TrialState.PRUNED else t.state.name.lower()
        if t.state == TrialState.RUNNING and (live.get("stopped") or t.number not in self.live):
            state = "stopped"  # not training now: resumable, in its folder
            if self.url and t.number not in self.live and t._trial_id not in self.stale_now:
                state = "running"  # another machine's runner trains it
        if t.state == TrialState.FAIL:
            state = "failed"
        if t.state == TrialState.COMPLETE:
            state = "completed"
        inter = dict(t.intermediate_values)
        inter.update(live.get("intermediate", {}))
        return {
            "number": t.number,
            "state": state,
            "params": t.params,
            "value": finite(t.value) if t.state == TrialState.COMPLETE else None,
            "intermediate": {str(k): finite(v) for k, v in sorted(inter.items())},
            "run_dir": live.get("run_dir") or t.user_attrs.get("run_dir"),
            "machine": t.user_attrs.get("machine", ""),
            "runner": t.user_attrs.get("runner", ""),
            "error": t.user_attrs.get("error", ""),
        }

    def snapshot(self, state=None):
        with self.lock:
            if state:
                self.state = state
            state = self.state
            if self.url:
                self.stale_now = shared_storage.stale_trial_ids(self.storage, self.study)
            trials = [self.trial_entry(t) for t in self.study.get_trials(deepcopy=False)]
            done = [t for t in trials if t["state"] == "completed" and t["value"] is not None]
            best = None
            if done:
                best = (max if self.maximize else min)(done, key=lambda t: t["value"])
            record = {
                "format": 1, "name": self.name, "metric": self.metric, "direction": self.spec["direction"],
                "state": state, "trials_target": self.target, "parallel": self.slots, "parallel_note": self.slot_note,
                "sampler": self.spec["sampler"], "pruner": self.spec["pruner"],
                "space": self.spec["space"], "trials": trials,
                "best": best, "importances": self.importances, "importance_note": self.importance_note,
                "then_train_run": self.then_train_dir,
            }
            write_json(os.path.join(self.folder, "study.json"), record)
            return record

    def update_importances(self):
        """Optuna's fANOVA importances over the finished trials (off the trials' path: a fit takes a while)."""
        with self.lock:
            finished = self.study.get_trials(deepcopy=True, states=(TrialState.COMPLETE,))
        if len(finished) < 2 or len(finished) < self.importance_count:
            return
        view = optuna.create_study(direction=self.spec["direction"])
        view.add_trials(finished)
        try:
            importances = one_parameters_importances(finished)
            if importances is None:
                evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
                importances = optuna.importance.get_param_importances(view, evaluator=evaluator)
            note = f"fANOVA over {len(finished)} finished trials"
        except Exception as e:
            importances, note = self.importances, f"not yet: {e}"
        with self.lock:
            if len(finished) < self.importance_count:
                return  # a fit over more trials ended first (the end's, beside the background one)
            self.importance_count = len(finished)
            self.importances, self.importance_note = importances, note
        self.snapshot()

    def importance_loop(self):
        while True:
            self.importances_due.wait()
            self.importances_due.clear()
            try:
                self.update_importances()
            except Exception as e:  # the database went away: the runner says so where it stops
                if not (self.url and shared_storage.lost(e)):
                    raise

    def write_trial_file(self, run_dir, number, state, params, value=None):
        if not run_dir or not os.path.isdir(run_dir):
            return
        try:
            write_json(os.path.join(run_dir, "trial.json"),
                       {"study": self.name, "study_dir": self.folder, "trial": number, "state": state,
                        "params": params, "metric": self.metric, "value": finite(value)})
        except OSError as e:
            say(f"search: cannot write {run_dir}/trial.json: {e}")

    def tell(self, number, value=None, state=None):
        try:
            self.study.tell(number, value, state=state)
        except RuntimeError as e:
            # GridSampler stops the study when its grid is used up, which Optuna
            # allows only inside optimize(); the trial was told before that.
            if "Study.stop" not in str(e):
                raise
        self.told.add(number)

    # ---- one trial ----
    def best_of(self, values):
        values = [v for v in values if v is not None and math.isfinite(v)]
        if not values:
            return None
        return max(values) if self.maximize else min(values)

    def catch_up(self, trial, run_dir):
        """The evaluations a killed runner did not see (its trial went on to its stop): reported now."""
        with self.lock:
            stored = next(t for t in self.study.get_trials(deepcopy=False) if t.number == trial.number)
            stored = stored.intermediate_values
            for i, v in enumerate(metrics_values(run_dir, self.metric), start=1):
                self.live[trial.number]["intermediate"][i] = v
                if i not in stored:
                    trial.report(v, i)

    def command(self, number, params, resume_dir, slot):
        env = dict(os.environ, STUDIO_STOP_WITH_PARENT=str(os.getpid()))
        if self.gpus:
            env["CUDA_VISIBLE_DEVICES"] = str(self.gpus[slot % len(self.gpus)])
        if resume_dir:
            return [self.cli, "--report", "resume", resume_dir], env
        args = [self.cli, "--report", "train", "--config", self.base_file, "--out", self.runs_dir]
        for a in self.spec["trial_settings"]:
            args += ["--set", a]
        for k, v in params.items():
            args += ["--set", f"{k}={setting_text(v)}"]
        args += ["--set", f"name={self.name}-t{number}"[:105]]
        # The cores shared between the trials at once, unless the settings give each its threads (two runners
        # on one machine, say, each with --set performance.threads=1).
        if self.threads_each and "performance.threads" not in params and \
                not self.spec["base"]["performance"].get("threads"):
            args += ["--set", f"performance.threads={self.threads_each}"]
        return args, env

    def folder_of(self, number):
        """The folder a trial's run made when the runner was killed before it heard its name: the newest run
        folder of the trial's name (the stop with the runner gave it a checkpoint)."""
        name = f"{self.name}-t{number}"[:105]
        found = []
        try:
            entries = os.listdir(self.runs_dir)
        except OSError:
            return None
        for entry in entries:
            folder = os.path.join(self.runs_dir, entry)
            try:
                with open(os.path.join(folder, "settings.json")) as f:
                    if json.load(f).get("name") == name and not os.path.islink(folder):
                        found.append(folder)
            except (OSError, ValueError, AttributeError):
                continue
        return max(found, key=os.path.getmtime) if found else None

    def run_trial(self, trial, slot):
        number, params = trial.number, trial.params
        live = self.live[number]
        live["stopped"] = False
        if not live["run_dir"]:
            live["run_dir"] = self.folder_of(number)
            if live["run_dir"]:
                with self.lock:
                    trial.set_user_attr("run_dir", live["run_dir"])
        run_dir = live["run_dir"]
        resume_dir = None
        if run_dir and os.path.isfile(os.path.join(run_dir, "summary.json")):
            with open(os.path.join(run_dir, "summary.json")) as f:
                status = json.load(f).get("status")
            if status in ("completed", "early-stopped"):
                return self.finish(trial, status, run_dir, "", metrics_values(run_dir, self.metric))
        if run_dir and os.path.isfile(os.path.join(run_dir, "settings.json")):
            resume_dir = run_dir  # from its checkpoint, or again from step 0 in its folder when it had none
        if resume_dir:
            self.catch_up(trial, resume_dir)
        shown = " ".join(f"{k}={setting_text(v)}" for k, v in params.items())
        say(f"trial {number}: {'resuming ' + run_dir if resume_dir else 'started'} ({shown})")
        args, env = self.command(number, params, resume_dir, slot)
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                                start_new_session=True)
        with self.lock:
            self.children[number] = proc
        status, errors, values, evals, peak = "", [], [], 0, None
        for line in proc.stdout:
            key, _, value = line.rstrip("\n").partition("\t")
            if key == "studio-run":
                live["run_dir"] = value
                with self.lock:  # every write to the storage is under the lock, one thread at a time
                    trial.set_user_attr("run_dir", value)
                self.write_trial_file(value, number, "running", params)
                self.snapshot()
            elif key == "studio-record":
                cells = value.split(",")
                if getattr(self, "measure_first", False) and cells[0] == "train" and peak is None:
                    try:
                        peak = float(cells[self.spec["metrics_header"].split(",").index("mem_reserved_mib")])
                        self.measure_first = False
                        self.fit_on_gpu(peak)
                    except (ValueError, IndexError):
                        pass
                if cells[0] != "eval" or len(cells) <= self.column or not cells[self.column]:
                    continue
                v = float(cells[self.column])
                if resume_dir and evals == 0:  # number on from the evaluations before the checkpoint
                    evals = evaluations_before(resume_dir, int(cells[1]))
                evals += 1
                values.append(v)
                if number in self.pruned:
                    continue  # the stop is on its way; the pruner has decided
                live["intermediate"][evals] = v
                with self.lock:
                    trial.report(v, evals)
                    prune = trial.should_prune() and not self.stopping
                say(f"trial {number}: evaluation {evals}: {self.metric} {v:.4g}")
                if prune and number not in self.pruned:
                    self.pruned.add(number)
                    say(f"trial {number}: pruned at evaluation {evals} ({self.spec['pruner']}); its checkpoint is "
                        f"kept: `training-studio-cli resume {live['run_dir']}` continues it")
                    proc.send_signal(signal.SIGINT)
                self.snapshot()
            elif key == "studio-end":
                status = value
            elif key not in ("studio-total", "studio-phase"):
                raw = line.rstrip("\n")
                if raw.startswith(("error:", "warning:", "  ")):  # the CLI's message and its indented lines
                    errors.append(raw.strip())
        code = proc.wait()
        with self.lock:
            self.children.pop(number, None)
        error = "\n".join(e for e in errors if not e.startswith("warning:")) or f"exit status {code}"
        if not live.get("run_dir") and code == 2:
            error = "these settings are not valid, never trained: " + error
        elif not status and (code < 0 or code in (129, 130, 143) or self.stopping):
            # It did not end by itself: stopped by the runner or the window (a signal before the CLI could
            # handle it, too), or killed (the out-of-memory killer's SIGKILL). Resumable, never failed.
            status = "stopped"
            live["why"] = (f"killed by signal {-code} ({signal.Signals(-code).name})" if code < 0
                           and -code in signal.valid_signals() else f"exit status {code}")
        if not status:
            status = "failed"
        return self.finish(trial, status, live.get("run_dir"), error,
                           metrics_values(live.get("run_dir") or "", self.metric) or values)

    def finish(self, trial, status, run_dir, error, values):
        number = trial.number
        with self.lock:
            if number in self.pruned and status == "stopped":
                # The pruner's stop ended it: resumable, pruned. A run that ended by itself before
                # its stop arrived (at its last evaluation) trained every step: it reports its
                # value below (it was recorded "pruned" with none, issue 60, item 4).
                self.tell(number, state=TrialState.PRUNED)
                state, value = "pruned", None
            elif status in ("completed", "early-stopped"):
                value = self.best_of(values)
                if value is None:
                    trial.set_user_attr("error", f"the run recorded no {self.metric}")
                    self.tell(number, state=TrialState.FAIL)
                    say(f"trial {number}: failed: the run recorded no {self.metric}")
                    state = "failed"
                else:
                    self.tell(number, value)
                    state = "completed"
                    best = self.study.best_value
                    say(f"trial {number}: completed: {self.metric} {value:.4g}"
                        + (" (best so far)" if best == value else f" (best {best:.4g})"))
                    self.importances_due.set()
            elif status == "stopped":
                live = self.live.get(number, {})
                live["stopped"] = True
                why = live.get("why")
                where = f" in {run_dir}" if run_dir else ""
                say(f"trial {number}: stopped{' (' + why + ')' if why else ''}; it resumes{where} with the study "
                    f"(search --resume {self.folder})")
                state, value = "stopped", None
            else:
                trial.set_user_attr("error", error[-2000:])
                self.tell(number, state=TrialState.FAIL)
                say(f"trial {number}: failed: {error}")
                state, value = "failed", None
            self.write_trial_file(run_dir, number, state, trial.params, value if state == "completed" else None)
        self.snapshot()

    # ---- the study ----
    def counted(self):
        return [t for t in self.study.get_trials(deepcopy=False) if t.state != TrialState.WAITING]

    def next_trial(self):
        """A trial a stopped runner left running (resumed under its number), else a new one; None when done."""
        with self.lock:
            if self.stopping:
                return None
            trial = None
            # In a shared study a running trial is another runner's unless its heartbeats stopped.
            stale = shared_storage.stale_trial_ids(self.storage, self.study) if self.url else None
            for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                if t.number not in self.live and (stale is None or t._trial_id in stale):
                    trial = optuna.trial.Trial(self.study, t._trial_id)
                    break
            if trial is None:
                with (shared_storage.one_runner_at_a_time(self.storage, self.url, self.name) if self.url
                      else contextlib.nullcontext()):
                    if len(self.counted()) >= self.target:
                        return None
                    trial = self.study.ask(self.dists)
            run_dir = trial.user_attrs.get("run_dir")
            here = shared_storage.machine()
            if self.url and trial.user_attrs.get("machine", here) != here or (run_dir and not os.path.isdir(run_dir)):
                run_dir = None  # another machine's folder: trained again here, in a folder of its own
            if self.url:
                trial.set_user_attr("machine", here)
                trial.set_user_attr("runner", shared_storage.runner_name())
                self.trial_ids[trial.number] = trial._trial_id
                self.storage.record_heartbeat(trial._trial_id)
            self.live[trial.number] = {"intermediate": {}, "run_dir": run_dir}
            return trial

    def others_running(self):
        """Trials other runners train now (running, their heartbeats fresh)."""
        with self.lock:
            stale = shared_storage.stale_trial_ids(self.storage, self.study)
            return any(t.number not in self.live and t._trial_id not in stale
                       for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)))

    def heartbeat_loop(self):
        """This runner's running trials are alive (Optuna's heartbeat): no other runner takes them over."""
        while True:
            time.sleep(shared_storage.HEARTBEAT_SECONDS)
            with self.lock:
                for number in self.children:  # the trials training now
                    if number in self.trial_ids:
                        try:
                            self.storage.record_heartbeat(self.trial_ids[number])
                        except Exception as e:  # the database away a moment: said, tried again
                            say(f"search: heartbeat of trial {number}: {shared_storage.lost(e) or e}")

    def stop(self, signum, frame):
        with self.lock:
            again = self.stopping
            self.stopping = True
            for proc in self.children.values():
                try:
                    proc.send_signal(signal.SIGINT)
                except ProcessLookupError:
                    pass
        if not again:
            say("\nsearch: stopping its trials with a checkpoint (press Ctrl-C again to quit them at once)")

    def storage_gone(self, why):
        """The database stopped answering: the trials training now stop with a checkpoint, and the runner ends
        saying how to go on, once it answers again (issue 59, item 7)."""
        with self.lock:
            first = self.storage_lost is None
            if first:
                self.storage_lost = why
        if first:
            say(f"search: the storage {self.storage_text} stopped answering ({why})")
            self.stop(signal.SIGTERM, None)

    def guarded(self, call):
        """call()'s result, or None when the database stopped answering (said once, the trials stopped)."""
        try:
            return call()
        except Exception as e:
            why = shared_storage.lost(e) if self.url else None
            if not why:
                raise
            self.storage_gone(why)
            return None

    def run(self):
        self.plan_devices()
        self.snapshot()
        threading.Thread(target=self.importance_loop, daemon=True).start()
        if self.url:
            threading.Thread(target=self.heartbeat_loop, daemon=True).start()
        active = {}
        failures = 0

        def worker(trial, slot):
            try:
                self.run_trial(trial, slot)
            except Exception as e:  # the runner's own failure: the trial is told failed, with why
                if self.url and shared_storage.lost(e):
                    return self.storage_gone(shared_storage.lost(e))
                say(f"trial {trial.number}: the search runner failed: {e!r}")
                with self.lock:
                    try:
                        trial.set_user_attr("error", f"the search runner failed: {e!r}")
                        self.tell(trial.number, state=TrialState.FAIL)
                    except optuna.exceptions.UpdateFinishedTrialError:
                        pass

        while True:
            for n, (th, _) in list(active.items()):
                if not th.is_alive():
                    del active[n]
            free = [s for s in range(self.slots) if s not in {v[1] for v in active.values()}]
            if free and not self.stopping:
                trial = self.guarded(self.next_trial)
                if trial is not None:
                    th = threading.Thread(target=worker, args=(trial, free[0]), daemon=True)
                    active[trial.number] = (th, free[0])
                    th.start()
                    continue
            if not active:
                break
            for th, _ in list(active.values()):
                th.join(timeout=0.2)
                break
        for th, _ in active.values():
            th.join()
        if self.storage_lost:
            return None
        # A shared study: this runner's trials are done; it follows the other machines' until they end, so that
        # study.json (and the window's dock) shows the whole study.
        while self.url and not self.stopping and self.others_running():
            self.snapshot()
            time.sleep(shared_storage.HEARTBEAT_SECONDS)
        self.update_importances()
        with self.lock:
            self.unfinished = [n for n, live in self.live.items() if live.get("stopped")]
        # A trial killed from outside (the out-of-memory killer) leaves the study unfinished: stopped, resumable.
        record = self.snapshot("stopped" if self.stopping or self.unfinished else "done")
        return record

    def summary(self, record):
        say("")
        say(f"study {self.name}: {len(record['trials'])} trial(s), {self.metric} "
            f"({'higher' if self.maximize else 'lower'} is better); storage {self.storage_text}")
        keys = list(self.space)
        say(f"{'#':>4}  {'state':<10} {self.metric:>14}  " + "  ".join(keys))
        for t in record["trials"]:
            v = "" if t["value"] is None else f"{t['value']:.4f}"
            say(f"{t['number']:>4}  {t['state']:<10} {v:>14}  " +
                "  ".join(setting_text(t["params"].get(k, "")) for k in keys))
        best = record["best"]
        if best:
            sets = " ".join(f"--set {k}={setting_text(v)}" for k, v in best["params"].items())
            say(f"\nbest: trial {best['number']}, {self.metric} {best['value']:.4f}, {best['run_dir']}")
            say(f"  its settings: {sets}")
            say(f"  train them on the full data: training-studio-cli search --resume {self.folder} --then-train")
        if self.importances:
            say("importance (fANOVA): " + ", ".join(f"{k} {v:.2f}" for k, v in self.importances.items()))
        return best

    def train_best(self, best):
        args = [self.cli, "train", "--config", self.base_file, "--out", self.runs_dir]
        for k, v in best["params"].items():
            args += ["--set", f"{k}={setting_text(v)}"]
        args += ["--set", f"name={self.name}-best"[:100]]
        say(f"\nsearch: training the best settings (trial {best['number']}) without the trial settings")
        before = set(os.listdir(self.runs_dir))
        code = subprocess.call(args)
        made = sorted(set(os.listdir(self.runs_dir)) - before)
        self.then_train_dir = os.path.join(self.runs_dir, made[-1]) if made else None
        self.snapshot("done")
        return code


def run_status(run_dir):
    """A run folder's summary.json status, or "" (none yet)."""
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            return json.load(f).get("status", "")
    except (OSError, ValueError, AttributeError):
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--then-train", action="store_true")
    ap.add_argument("--join", action="store_true", help="search.json names a study in a database to join")
    ap.add_argument("--new-folder", action="store_true", help="the CLI made the study's folder for this search")
    a = ap.parse_args()
    search = Search(a.study, a.cli, a.then_train, a.join, a.new_folder)
    signal.signal(signal.SIGINT, search.stop)
    signal.signal(signal.SIGTERM, search.stop)
    if _stopped_early:
        search.stop(_stopped_early[0], None)
    say(f"search {search.name}: {search.target} trials of {', '.join(p['text'] for p in search.spec['space'])}; "
        f"{search.spec['sampler']} sampler, {search.spec['pruner']} pruner; study in {search.folder}")
    try:
        return finish(search, a.then_train)
    finally:
        # The background threads (importances, heartbeats) write study.json under the lock: held here, none
        # is halfway through a write when the interpreter ends them (a study.json.tmp.* was left at the end).
        # Bounded: a heartbeat stuck on a database that stopped answering must not hold the runner.
        search.lock.acquire(timeout=60)


def finish(search, then_train):
    """The search's trials, then what it says at its end; the exit status."""
    record = search.guarded(search.run)
    if search.storage_lost:
        # Trials whose run ended while the database was away: their runs are complete, and --resume records
        # them from their folders without training them again.
        ended = sorted(n for n, live in search.live.items() if n not in search.told and live.get("run_dir")
                       and run_status(live["run_dir"]) in ("completed", "early-stopped"))
        say(f"search: the study could not be written, so it stopped here: the trials that were training stopped "
            f"with a checkpoint"
            + (f"; trial(s) {', '.join(map(str, ended))} finished training, and are recorded when the study goes on"
               if ended else "")
            + f". When {search.storage_text} answers again, `training-studio-cli search --resume {search.folder}` "
            "continues the study here (or search --join on another machine)")
        return 1
    best = search.summary(record)
    if search.unfinished and not search.stopping:
        say(f"search: trial(s) {', '.join(map(str, search.unfinished))} did not finish (see above) and are kept: "
            f"`training-studio-cli search --resume {search.folder}` continues them in their folders")
        return 130
    if search.stopping:
        say(f"search stopped; `training-studio-cli search --resume {search.folder}` continues it")
        return 130
    if then_train and best:
        return search.train_best(best)
    finished = [t for t in record["trials"] if t["state"] in ("completed", "pruned")]
    return 0 if finished else 1


if __name__ == "__main__":
    sys.exit(main())
