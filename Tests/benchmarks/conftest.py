"""The benchmark scripts' shared code (benchmarks/benchlib) is imported from benchmarks/."""
import pathlib
import sys

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
