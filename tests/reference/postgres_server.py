#!/usr/bin/env python3
"""A PostgreSQL server for a test, in a folder of its own on 127.0.0.1 (as the
user nobody when run as root: initdb and postgres refuse root).
Usage: postgres_server.py start        prints "PORT PASSWORD FOLDER" (user studio, database study)
       postgres_server.py stop FOLDER  stops it and removes FOLDER
The folder is a new one in /tmp, which nobody can reach (a test's own
temporary folder is often root's alone)."""
import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile


def main():
    what = sys.argv[1]
    folder = os.path.abspath(sys.argv[2]) if what == "stop" else tempfile.mkdtemp(prefix="studio-pg-")
    bindir = os.path.dirname(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))[-1])
    as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    data = os.path.join(folder, "data")
    if what == "stop":
        subprocess.run(as_user + [os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "fast", "stop"],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
        return
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o755)
    password = "pw-" + secrets.token_hex(8)
    pwfile = os.path.join(folder, "pw")
    with open(pwfile, "w") as f:
        f.write(password + "\n")
    if as_user:
        shutil.chown(folder, "nobody")
        shutil.chown(pwfile, "nobody")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    subprocess.run(as_user + [os.path.join(bindir, "initdb"), "-D", data, "-U", "studio", f"--pwfile={pwfile}",
                              "-A", "scram-sha-256"], check=True, capture_output=True)
    os.remove(pwfile)
    subprocess.run(as_user + [os.path.join(bindir, "pg_ctl"), "-D", data, "-o",
                              f"-p {port} -k {folder} -c listen_addresses=127.0.0.1", "-l",
                              os.path.join(folder, "server.log"), "-w", "start"], check=True, capture_output=True)
    subprocess.run([os.path.join(bindir, "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "studio", "study"],
                   check=True, capture_output=True, env={**os.environ, "PGPASSWORD": password})
    print(port, password, folder)


if __name__ == "__main__":
    main()
