#!/usr/bin/env python3
"""bench/run.py - run parload's benchmark (bench/README.md); the code is
the package bench/parload_bench/, `python3 bench/run.py --help` lists the
options."""
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parload_bench.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
