"""Start the mock: ``python3 -m mock_idp [--port 0] [--state-dir DIR] [--config FILE]``.

When ready it prints one JSON line on stdout and nothing else ever goes to stdout::

    {"url": "https://127.0.0.1:PORT", "caFile": "/path/ca.pem", ...}
"""

import argparse
import json
import os
import signal
import sys
import tempfile
import threading

from . import certs, jwtsign, server, sshca
from .state import DEFAULT_CLIENT_ID, State


class App:
    """What every endpoint module gets: state, signing key, base URL."""

    def __init__(self, verbose=False):
        self.state = State()
        self.signer = jwtsign.Signer()
        self.issuer_signers = {}   # generic issuer name -> ECSigner, kept across resets
        self.verbose = verbose
        self.base_url = None


def parse_args(argv):
    p = argparse.ArgumentParser(prog="mock_idp", description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: a free port)")
    p.add_argument("--state-dir", help="where ca.pem, the server key and ready.json go "
                   "(default: a new temporary directory)")
    p.add_argument("--config", help="JSON file of config overrides (keys as in /_admin/config)")
    p.add_argument("--default-user", help="username that signs in by default")
    p.add_argument("--exit-on-stdin-eof", action="store_true",
                   help="exit when stdin closes (the parent went away)")
    p.add_argument("--verbose", action="store_true", help="log each request to stderr")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    state_dir = os.path.abspath(args.state_dir or tempfile.mkdtemp(prefix="mock-idp-"))
    paths = certs.generate(state_dir)
    app = App(verbose=args.verbose)
    app.ssh_ca = sshca.UserCA(state_dir)
    if args.config:
        with open(args.config) as f:
            app.state.config.update(json.load(f))
    if args.default_user:
        app.state.config["default_user"] = args.default_user
    httpd = server.MockServer(args.port, server.make_ssl_context(paths["cert"], paths["key"]), app)
    port = httpd.server_address[1]
    app.base_url = "https://127.0.0.1:%d" % port
    ready = {"url": app.base_url, "caFile": paths["ca"], "clientId": DEFAULT_CLIENT_ID,
             "stateDir": state_dir, "pid": os.getpid()}
    with open(os.path.join(state_dir, "ready.json"), "w") as f:
        json.dump(ready, f)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=httpd.shutdown).start())
    if args.exit_on_stdin_eof:
        def watch():
            while os.read(0, 4096):
                pass
            httpd.shutdown()
        threading.Thread(target=watch, daemon=True).start()
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
