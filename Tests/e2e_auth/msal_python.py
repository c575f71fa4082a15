"""MSAL for Python (PyPI msal, unmodified) writing a cache the way Azure CLI and other tools
do: an interactive sign-in against the mock through the scripted browser, at https://localhost
(the default port, through a CONNECT proxy: only there do MSAL for Python's cache and ours name
the environment alike, test_origins.py)."""
from __future__ import annotations

import pytest

from auth_e2e import ALICE, make_browser_wrapper, set_browser_action
from connect_proxy import DefaultPort


@pytest.fixture
def default_port(mock):
    """The mock at https://localhost (port 443, through a CONNECT proxy)."""
    served = DefaultPort(mock.host)
    yield served
    served.stop()


def interactive_cache(mock, tmp_path, monkeypatch, default_port, client_id: str) -> bytes:
    """The serialized cache after `client_id`'s interactive sign-in as alice."""
    msal = pytest.importorskip("msal")
    requests = pytest.importorskip("requests")
    authcode = pytest.importorskip("msal.oauth2cli.authcode")
    import webbrowser

    monkeypatch.setenv("BROWSER", make_browser_wrapper(tmp_path))
    set_browser_action(tmp_path, "complete")
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SCRIPTED_BROWSER_CA"):
        monkeypatch.setenv(name, mock.ca_file)
    monkeypatch.setenv("SCRIPTED_BROWSER_COOKIES", str(tmp_path / "msal-cookies.txt"))
    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(authcode, "_is_inside_docker", lambda: False)
    for name, value in default_port.env.items():
        monkeypatch.setenv(name, value)
    session = requests.Session()
    session.verify = mock.ca_file
    cache = msal.SerializableTokenCache()
    app = msal.PublicClientApplication(client_id, authority=default_port.url + "/organizations", instance_discovery=False,
                                       http_client=session, token_cache=cache)
    assert "access_token" in app.acquire_token_interactive(["User.Read"], login_hint=ALICE, timeout=20)
    return cache.serialize().encode()
