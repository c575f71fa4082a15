"""Fixtures: one mock per test session, reset before every test.

Other suites can copy this pattern (or import mock_idp.testing):
start the mock with ``--port 0``, read the JSON ready line from its stdout,
trust ``caFile`` and talk to ``url``.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mock_idp.testing import AdminClient, start_mock, stop_mock  # noqa: E402


class Mock:
    def __init__(self, url, ca_file, process):
        self.url, self.ca_file, self.process = url, ca_file, process
        self.admin = AdminClient(url, ca_file)
        self.client_id = process.ready["clientId"]


@pytest.fixture(scope="session")
def mock_session(tmp_path_factory):
    url, ca_file, process = start_mock(tmp_path_factory.mktemp("mock-idp"))
    yield Mock(url, ca_file, process)
    stop_mock(process)


@pytest.fixture
def mock(mock_session):
    mock_session.admin.reset()
    return mock_session
