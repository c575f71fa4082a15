"""scripts/check-architecture.py passes on the repository and catches each kind of violation
in a temporary copy (ARCHITECTURE.md, Package.swift, Sources/ and Tests/*Tests)."""
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-architecture.py"


def run(root):
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)


@pytest.fixture
def copy(tmp_path):
    for name in ["ARCHITECTURE.md", "Package.swift"]:
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "Sources", tmp_path / "Sources")
    for tests in (ROOT / "Tests").glob("*Tests"):
        shutil.copytree(tests, tmp_path / "Tests" / tests.name)
    for path in ["scripts", "protocol", "benchmarks", "clients", "Tests/e2e", "Tests/e2e_auth", "Tests/fuzz",
                 "mock", "mock/mock_idp", "Tests/protocol", "Tests/architecture",
                 "Tests/benchmarks", "Tests/packages", "Tests/e2e_auth/fixtures"]:
        target = tmp_path / path
        target.mkdir(parents=True, exist_ok=True)
        for source in (ROOT / path).iterdir():  # names only: the path check needs them to exist
            (target / source.name).touch() if source.is_file() else (target / source.name).mkdir(exist_ok=True)
    return tmp_path


def prepend(copy, relative, text):
    """Puts `text` at the top of the copy's file `relative`; returns the checker's result."""
    path = copy / relative
    path.write_text(text + path.read_text())
    return run(copy)


SILENT_FLOW = "Sources/AuthCore/Flows/SilentFlow.swift"


def test_the_repository_passes():
    result = run(ROOT)
    assert result.returncode == 0, result.stderr
    assert "agree" in result.stdout


def test_the_copy_passes(copy):
    result = run(copy)
    assert result.returncode == 0, result.stderr


def test_an_import_the_table_does_not_allow_fails(copy):
    # AuthCore may not see the libcurl transport (the seams are in AuthSeams).
    result = prepend(copy, SILENT_FLOW, "import HTTP\n")
    assert result.returncode == 1
    assert "Sources/AuthCore/Flows/SilentFlow.swift: imports HTTP, which is not a dependency of AuthCore" in result.stderr
    assert "ARCHITECTURE.md says AuthCore knows about only" in result.stderr


@pytest.mark.parametrize("module", ["HTTP", "Loopback", "DBusBroker"])
def test_the_sidecar_service_does_not_wire_concrete_implementations(copy, module):
    # The composition root is Sources/Composition: Sidecar builds engines over the seams.
    result = prepend(copy, "Sources/Sidecar/SidecarService.swift", f"import {module}\n")
    assert result.returncode == 1
    assert f"SidecarService.swift: imports {module}, which is not a dependency of Sidecar" in result.stderr
    assert "ARCHITECTURE.md says Sidecar knows about only" in result.stderr


def test_an_import_declared_in_the_package_but_not_in_the_table_fails(copy):
    package = copy / "Package.swift"
    package.write_text(package.read_text().replace('"AuthSeams", "TokenCache", "JSON",', '"AuthSeams", "TokenCache", "JSON", "JSONRPC",', 1))
    result = prepend(copy, SILENT_FLOW, "import JSONRPC\n")
    assert result.returncode == 1
    assert "SilentFlow.swift: imports JSONRPC, but ARCHITECTURE.md says AuthCore knows about only" in result.stderr
    assert "Package.swift: AuthCore depends on JSONRPC, which ARCHITECTURE.md's module table does not list" in result.stderr


def test_a_test_importing_an_undeclared_module_fails(copy):
    result = prepend(copy, "Tests/JSONTests/JSONParsingTests.swift", "import Logging\n")
    assert result.returncode == 1
    assert "imports Logging, which is not a dependency of JSONTests in Package.swift" in result.stderr


def test_imports_in_comments_and_multiline_strings_are_not_imports(copy):
    assert prepend(copy, SILENT_FLOW, '// import HTTP\nlet script = """\n    import HTTP\n    """\n').returncode == 0


def test_a_path_in_a_table_that_does_not_exist_fails(copy):
    (copy / "Sources/Sidecar/Redactor.swift").unlink()
    result = run(copy)
    assert result.returncode == 1
    assert "ARCHITECTURE.md names `Sources/Sidecar/Redactor.swift`" in result.stderr


def test_a_module_without_a_row_fails(copy):
    architecture = copy / "ARCHITECTURE.md"
    text = architecture.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `Graph` |"))
    architecture.write_text(text.replace(row + "\n", ""))
    result = run(copy)
    assert result.returncode == 1
    assert "module Graph has no row in ARCHITECTURE.md's module table" in result.stderr
