"""The search runner's plain helpers: its files (study.json, trial.json, the
storage check), Optuna's distributions of the spec's space, and a run
folder's metrics.csv. No Optuna state here; studio_search.py imports it."""
import contextlib
import json
import math
import os
import sqlite3
import sys
import threading


def say(text):
    print(text, flush=True)


def fail(text, code=2):
    print(f"error: {text}", file=sys.stderr, flush=True)
    sys.exit(code)


def write_json(path, value):
    """path's new content, whole or not at all: a temporary file beside it, renamed over it. One name per
    thread, and the temporary file removed when the write fails."""
    tmp = f"{path}.tmp.{os.getpid()}.{threading.get_ident()}"
    try:
        with open(tmp, "w") as f:
            json.dump(value, f, indent=2, allow_nan=False, default=str)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remove_temporaries(folder):
    """The temporary files a runner killed mid-write left in its study's folder (study.json.tmp.NNNN was
    left after a Stop, issue 60): the CLI holds the study's lock for this runner, so no other writes here."""
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if ".json.tmp." in name and os.path.isfile(os.path.join(folder, name)):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))


def finite(v):
    return None if v is None or not math.isfinite(v) else v


def check_storage(path):
    """An existing study.db must be Optuna's: never let SQLAlchemy add tables to another file."""
    if os.path.islink(path):
        fail(f"{path} is a symbolic link; a study's storage is never written through one (remove the link, or copy "
             "the database there)")
    if not os.path.exists(path):
        return
    with open(path, "rb") as f:
        head = f.read(16)
    if head != b"SQLite format 3\x00":
        fail(f"{path} is not an Optuna study storage (not an SQLite database); move it away or give another --name")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
        con.close()
    except sqlite3.Error as e:
        if "locked" in str(e) or "busy" in str(e):  # another process writes it now: the file is fine
            fail(f"{path} is busy: another process holds it locked ({e}), such as a search of this study still "
                 "running or a tool writing to it; wait for it to end, then try again")
        fail(f"{path} is not an Optuna study storage ({e}); move it away or give another --name")
    if not {"studies", "trials", "version_info"} <= tables:
        fail(f"{path} is not an Optuna study storage (it has no studies, trials and version_info tables); "
             "move it away or give another --name")


def distribution(p):
    import optuna

    if p["kind"] == "choice":
        return optuna.distributions.CategoricalDistribution(p["choices"])
    if p["kind"] == "int":
        return optuna.distributions.IntDistribution(int(p["low"]), int(p["high"]), log=p["log"])
    return optuna.distributions.FloatDistribution(p["low"], p["high"], log=p["log"])


def setting_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def typed_value(p, text):
    """An --enqueue value as the distribution holds it."""
    if p["kind"] == "choice":
        for c in p["choices"]:
            if setting_text(c) == text or str(c) == text:
                return c
        try:
            return next(c for c in p["choices"] if isinstance(c, (int, float)) and float(c) == float(text))
        except (ValueError, StopIteration):
            fail(f"--enqueue: {text} is not one of {p['key']}'s choices")
    return int(text) if p["kind"] == "int" else float(text)


def metrics_values(run_dir, metric):
    """The metric at each evaluation in a run's metrics.csv."""
    values = []
    try:
        with open(os.path.join(run_dir, "metrics.csv")) as f:
            header = f.readline().strip().split(",")
            col = header.index(metric)
            for line in f:
                cells = line.rstrip("\n").split(",")
                if cells[0] == "eval" and len(cells) > col and cells[col]:
                    values.append(float(cells[col]))
    except (OSError, ValueError, IndexError):
        pass
    return values


def evaluations_before(run_dir, step):
    """How many evaluations a run recorded before this step (a resumed run numbers on from them)."""
    try:
        with open(os.path.join(run_dir, "metrics.csv")) as f:
            f.readline()
            return sum(1 for line in f if line.startswith("eval,") and int(line.split(",")[1]) < step)
    except (OSError, ValueError):
        return 0
