"""A study in a database that several machines' runners share (Optuna's RDB
storage, as its "Easy Parallelization" tutorial does it): opening it with
clear messages, the study's spec in its user attributes so that a joining
runner needs no other file, and heartbeats, so that the trials of a runner
that died (and only those) can be taken over by one that joins with --resume.
The password is never in the URL: libpq reads PGPASSWORD or ~/.pgpass."""
import contextlib
import os
import socket
import warnings

from search_files import fail

# A trial whose runner sent no heartbeat for GRACE_SECONDS is its runner's no more (the tests shorten both).
HEARTBEAT_SECONDS = float(os.environ.get("STUDIO_SEARCH_HEARTBEAT", "3"))
GRACE_SECONDS = int(os.environ.get("STUDIO_SEARCH_GRACE", "15"))
SPEC_ATTR = "studio_spec"


def sqlalchemy_url(url):
    """postgresql:// and mysql:// as SQLAlchemy names their drivers (psycopg2, PyMySQL)."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg2://" + url[len("postgresql://"):]
    if url.startswith("mysql://"):
        return "mysql+pymysql://" + url[len("mysql://"):]
    return url


def open_storage(optuna, url):
    """Optuna's RDBStorage at url with heartbeats; exit 2 naming what is wrong when it cannot be reached."""
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)  # heartbeat_interval's
    # Optuna warns at each ask() outside Study.optimize that heartbeats are meant for it; this
    # runner records its trials' heartbeats itself (heartbeat_loop), so the warning only repeated
    # itself once a trial in the CLI's output (issue 60, minor).
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize",
                            category=UserWarning)
    try:
        return optuna.storages.RDBStorage(
            sqlalchemy_url(url), heartbeat_interval=HEARTBEAT_SECONDS, grace_period=GRACE_SECONDS,
            engine_kwargs={"connect_args": {"connect_timeout": 10}} if url.startswith("postgresql") else {})
    except ImportError as e:
        fail(f"--storage {url}: the database driver is not installed ({e.name}): run packaging/setup.sh "
             "(it installs psycopg2 into the studio's Python)")
    except Exception as e:  # sqlalchemy's OperationalError: a wrong password, a closed port, no such database
        why = str(getattr(e, "orig", e)).strip().splitlines()
        fail(f"--storage {url}: the database cannot be opened: {why[0] if why else type(e).__name__}"
             + (f" ({why[1].strip()})" if len(why) > 1 and why[1].strip() else ""))


def machine():
    """This machine's name in the study (STUDIO_MACHINE: a test's stand-in for two machines on one host)."""
    return os.environ.get("STUDIO_MACHINE") or socket.gethostname()


def runner_name():
    return f"{machine()}:{os.getpid()}"


def publish_spec(study, spec):
    """The study's spec in the database, for the runners that join it (once, by the runner that made it)."""
    if SPEC_ATTR not in study.user_attrs:
        shared = {k: v for k, v in spec.items() if k not in ("parallel",)}
        study.set_user_attr(SPEC_ATTR, shared)


def joined_spec(optuna, storage, local, url):
    """The spec of the study `local` names, from the database, with this machine's parallel, output folder and
    trials; exit 2 when there is no such study or its space is not the one --space gave."""
    name = local["name"]
    try:
        study = optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        fail(f"--study {name}: no such study in {url}; start it with `training-studio-cli search ... --storage {url} "
             f"--name {name}`")
    spec = study.user_attrs.get(SPEC_ATTR)
    if not spec:
        fail(f"--study {name} in {url} was not made by training-studio-cli search (it has no {SPEC_ATTR})")
    theirs = [p["text"] for p in spec["space"]]
    if "space_texts" in local and sorted(local["space_texts"]) != sorted(theirs):
        fail(f"--space {' '.join(local['space_texts'])} is not the space of the study {name}: "
             f"{' '.join(theirs)}; join it without --space, or with its space")
    spec = dict(spec)
    spec["parallel"] = int(local.get("parallel", 1))
    if "trials" in local:
        spec["trials"] = int(local["trials"])
    spec["base"] = dict(spec["base"])
    spec["base"]["output"] = dict(spec["base"]["output"], dir=os.path.abspath(local["output_dir"]))
    spec["storage"] = url
    return spec


def lost(e):
    """The database's reason when e says it stopped answering (a server stopped, a connection cut), else None.
    Optuna wraps SQLAlchemy's OperationalError in its StorageInternalError, whose own words ("invalid data in
    the commit") blame the data (issue 59, item 7)."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if type(e).__name__ in ("OperationalError", "InterfaceError") and "sqlalchemy" in type(e).__module__:
            why = str(getattr(e, "orig", e)).strip().splitlines()
            return why[0] if why else type(e).__name__
        e = e.__cause__ or e.__context__
    return None


def stale_trial_ids(storage, study):
    """The running trials whose runner stopped sending heartbeats (killed, its machine gone)."""
    try:
        return set(storage._get_stale_trial_ids(study._study_id))
    except Exception as e:  # the database away a moment: no trial is taken over this time
        print(f"search: cannot tell which trials' runners stopped: {lost(e) or e}", flush=True)
        return set()


@contextlib.contextmanager
def one_runner_at_a_time(storage, url, name):
    """Counting the study's trials and asking for the next one, as one step across the runners (a database
    lock: PostgreSQL's advisory lock, MySQL's GET_LOCK), so that two runners together start no more trials
    than --trials."""
    from sqlalchemy import text
    key = f"training-studio search {name}"
    with storage.engine.connect() as c:
        if url.startswith("postgresql"):
            c.execute(text("select pg_advisory_lock(hashtext(:k))"), {"k": key})
        else:
            c.execute(text("select get_lock(:k, 60)"), {"k": key})
        try:
            yield
        finally:
            if url.startswith("postgresql"):
                c.execute(text("select pg_advisory_unlock(hashtext(:k))"), {"k": key})
            else:
                c.execute(text("select release_lock(:k)"), {"k": key})
