"""The entry scripts keep their command lines: each starts, and says so when there is no binary."""
import pathlib
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = ["bench.py", "token_bench.py", "verbs_bench.py", "agent_bench.py", "az_bench.py", "ssh_cert_bench.py",
           "startup_loops.py"]


def run(*argv):
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script):
    p = run(str(BENCHMARKS / script), "--help")
    assert p.returncode == 0, p.stderr
    assert "--binary" in p.stdout and "--runs" in p.stdout


@pytest.mark.parametrize("script", ["bench.py", "token_bench.py"])
def test_chart_option_and_missing_binary(script, tmp_path):
    assert "--chart PATH" in run(str(BENCHMARKS / script), "--help").stdout
    p = run(str(BENCHMARKS / script), "--binary", str(tmp_path / "none"), "--chart", str(tmp_path / "c.svg"))
    assert p.returncode == 2
    assert "no executable at" in p.stderr
    assert not (tmp_path / "c.svg").exists()


def test_endpoint_bench_starts_and_says_when_there_is_no_binary(tmp_path):
    script = str(BENCHMARKS / "endpoint_bench.py")
    p = run(script, "--help")
    assert p.returncode == 0 and "--binary" in p.stdout and "--clients" in p.stdout, p.stderr
    p = run(script, "--binary", str(tmp_path / "none"))
    assert p.returncode == 2 and "no binary at" in p.stderr


def test_startup_loops_times_a_loop_by_bash_clock_and_children_cpu(tmp_path):
    """The loop's own figures: per-run elapsed time and the children's CPU time, from bash."""
    sys.path.insert(0, str(BENCHMARKS))
    import startup_loops
    assert startup_loops.bash_duration("1m2.500s") == 62.5
    elapsed, cpu = startup_loops.loop_per_run(["sleep", "0.01"], "/dev/null", 5, {"PATH": "/usr/bin:/bin"})
    assert 0.01 <= elapsed < 1 and 0 <= cpu < elapsed, (elapsed, cpu)
    spin = ["python3", "-c", "sum(range(3_000_000))"]
    elapsed, cpu = startup_loops.loop_per_run(spin, "/dev/null", 2, {"PATH": "/usr/bin:/bin"})
    assert cpu > 0.02, cpu  # a child that computes is counted
    p = run(str(BENCHMARKS / "startup_loops.py"), "--binary", str(tmp_path / "none"))
    assert p.returncode == 2 and "no executable at" in p.stderr
