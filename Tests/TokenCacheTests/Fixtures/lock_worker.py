#!/usr/bin/env python3
"""A second process for the concurrency tests: adds `count` accounts to the cache file at
`path`, each in its own locked read-modify-write, using the same lock protocol as the
Swift FileTokenCacheStore (create <path>.lockfile exclusively + flock it, check the inode,
write "pid argv0", unlink before unlocking) and an atomic replace of the cache file.

    lock_worker.py PATH WORKER_ID COUNT
    lock_worker.py PATH --processes N COUNT   (starts N workers, waits for all; exit 1 if one failed)
"""
import fcntl
import json
import os
import subprocess
import sys
import time


def acquire(lock_path, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if time.monotonic() > deadline:
                raise TimeoutError(lock_path)
            time.sleep(0.001)
            continue
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(0.001)
        try:
            if os.fstat(fd).st_ino == os.stat(lock_path).st_ino:
                os.write(fd, "{} {}".format(os.getpid(), sys.argv[0]).encode())
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def release(lock_path, fd):
    os.unlink(lock_path)
    os.close(fd)


def main():
    if sys.argv[2] == "--processes":  # no shell job control: SIGCHLD may be blocked by the caller
        workers = [subprocess.Popen([sys.executable, __file__, sys.argv[1], str(n), sys.argv[4]])
                   for n in range(int(sys.argv[3]))]
        sys.exit(1 if any(w.wait() != 0 for w in workers) else 0)
    path, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lock_path = path + ".lockfile"
    for i in range(count):
        fd = acquire(lock_path)
        try:
            try:
                with open(path) as f:
                    text = f.read()
                doc = json.loads(text) if text.strip() else {}
            except FileNotFoundError:
                doc = {}
            home = "py{}-{}.tenant".format(worker, i)
            key = "{}-login.microsoftonline.com-tenant".format(home)
            doc.setdefault("Account", {})[key] = {
                "home_account_id": home, "environment": "login.microsoftonline.com",
                "realm": "tenant", "local_account_id": home, "username": home,
                "authority_type": "MSSTS"}
            tmp = "{}.py-{}".format(path, os.getpid())
            with open(tmp, "w") as f:
                json.dump(doc, f)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.rename(tmp, path)
        finally:
            release(lock_path, fd)


if __name__ == "__main__":
    main()
