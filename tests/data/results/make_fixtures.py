"""Writes the synthetic results files in this directory (see README.md here).

    python tests/data/results/make_fixtures.py

Every sample is drawn from a seeded generator, so rerunning this rewrites the same bytes.
Each case is built to land on one mark; the committed files are what the compare tests
read, and the tests assert the exact tables made from them.
"""

from __future__ import annotations

import copy
import gzip
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from benchdnn_py.reports.results import SCHEMA, SCHEMA_VERSION, write

ENV = {
    "cpu": {"model": "Example CPU 8000", "flags": ["avx2", "avx512f", "fma", "sse4_2"],
            "logical_cpus": 2, "governor": None},
    "isa": {"usable": ["scalar", "avx2", "avx512"]},
    "threads": {"max": 2, "env": {}},
    "core": {"build_info": "cc 12.2.0; flags: -O3 -fopenmp", "compiler": "cc 12.2.0",
             "flags": "-O3 -fopenmp"},
    "load_average": [0.05, 0.1, 0.1], "test_fault": None, "platform": "Linux",
    "hostname": "fixture", "python": {"version": "3.11.7", "implementation": "CPython",
                                      "executable": "python"},
    "packages": {"benchdnn-py": "0.1.0", "numpy": "2.0", "cffi": "2.0"},
    "git": {"commit": "0123456789abcdef0123456789abcdef01234567", "dirty": False},
}
GLOBAL = {"mode": "CP", "max_ms_per_prb": 100.0, "fix_times_per_prb": 20,
          "canonical": False, "verbose": 0, "perf_template": "def", "results": ""}


def header(started: str, env: dict) -> dict:
    return {"type": "header", "schema": SCHEMA, "version": SCHEMA_VERSION,
            "backend": "native", "driver": "conv", "started": started,
            "argv": ["--conv", "--mode=CP", "--fix-times-per-prb=20", "--batch=fixture"],
            "command": "benchdnn-py --conv --mode=CP --fix-times-per-prb=20 --batch=fixture",
            "cwd": "/fixture", "environment": env}


def record(idx: int, key: str, samples: list[float], status: str = "PASSED",
           impl: str = "gemm_conv:avx512", reason: str = "", errors: int = 0) -> dict:
    samples = [round(s, 6) for s in samples]
    return {"type": "case", "idx": idx, "driver": "conv", "key": key,
            "repro": "--mode=CP --fix-times-per-prb=20 " + key, "status": status,
            "reason": reason, "errors": errors, "total": 1000 if errors else 0,
            "impl": impl, "settings": {"global": GLOBAL, "driver": {}}, "wall_ms": 10.0,
            "samples_ms": samples, "min_ms": min(samples) if samples else None,
            "avg_ms": float(np.mean(samples)) if samples else None,
            "median_ms": float(np.median(samples)) if samples else None,
            "ops": 1e6, "gflops": 1e6 / min(samples) / 1e6 if samples else None}


def draw(rng: np.random.Generator, scale: float, n: int, spread: float = 0.02) -> list[float]:
    return (scale * rng.lognormal(0.0, spread, n)).tolist()


def main() -> None:
    rng = np.random.default_rng(20240607)
    K = "--conv "
    # (key, base (samples, status, impl), new (samples, status, impl)); None: absent.
    cases = [
        (K + 'mb1ic64ih56oc64oh56kh3ph1n"resnet_50:res2a_branch2b"',
         (draw(rng, 0.5, 20), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 0.65, 20), "PASSED", "gemm_conv:avx512")),                  # + 30% slower
        (K + "--dir=BWD_D mb1ic256ih56oc64oh56kh1ph0",
         (draw(rng, 0.8, 20), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 0.56, 20), "PASSED", "gemm_conv:avx512")),                  # - faster
        (K + 'g32mb1ic32ih112oc32oh112kh3ph1n"mobilenet_v1:conv2_dw"',
         (draw(rng, 1.0, 20), "PASSED", "dw_conv_fwd:avx512"),
         (draw(rng, 1.0, 20), "PASSED", "dw_conv_fwd:avx512")),                 # ~ same
        (K + "ic3ih5oc3oh5kh1ph0",
         (draw(rng, 0.002, 20), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 0.0026, 20), "PASSED", "gemm_conv:avx512")),                # ~ floor
        (K + "--dir=FWD_I ic16ih7oc16oh7kh3ph1",
         (draw(rng, 0.03, 20), "PASSED", "gemm_conv:avx512"),
         ([], "FAILED", "gemm_conv:avx512")),                                   # ! flip
        (K + "--dir=BWD_WB ic16ih7oc16oh7kh3ph1",
         ([], "FAILED", "gemm_conv:avx512"),
         (draw(rng, 0.04, 20), "PASSED", "gemm_conv:avx512")),                  # * fixed
        (K + "--impl=gemm_conv:avx2 ic8ih9oc8oh9kh3ph1",
         (draw(rng, 0.05, 20), "PASSED", "gemm_conv:avx2"), None),              # x base only
        (K + "--impl=gemm_conv:scalar ic8ih9oc8oh9kh3ph1",
         None, (draw(rng, 0.2, 20), "PASSED", "gemm_conv:scalar")),             # x new only
        (K + "--dir=BWD_W ic32ih14oc32oh14kh3ph1",
         (draw(rng, 0.3, 3), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 0.4, 3), "PASSED", "gemm_conv:avx512")),                    # ? 3 samples
        (K + "--dir=BWD_D ic32ih14oc32oh14kh3ph1",
         (draw(rng, 0.3, 8, 0.5), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 0.345, 8, 0.5), "PASSED", "gemm_conv:avx512")),             # ? noisy
        (K + "ic64ih28oc128oh28kh3ph1",
         (draw(rng, 2.0, 20), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 2.0, 20), "PASSED", "gemm_conv:avx2")),                     # ~ impl changed
        (K + "--skip-impl=dw_conv_fwd g8ic8ih9oc8oh9kh3ph1",
         ([], "SKIPPED", ""), ([], "SKIPPED", "")),                             # x no timing
        (K + "ic4ih6oc4oh6kh3ph1",
         (draw(rng, 0.01, 20), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 0.01, 20), "PASSED", "gemm_conv:avx512")),                  # ~ (#1)
        (K + "ic4ih6oc4oh6kh3ph1",
         (draw(rng, 0.012, 20), "PASSED", "gemm_conv:avx512"),
         (draw(rng, 0.012, 20), "PASSED", "gemm_conv:avx512")),                 # ~ (#2)
    ]
    base, new = [], []
    for key, b, n in cases:
        if b is not None:
            base.append(record(len(base), key, *b, errors=12 if b[1] == "FAILED" else 0))
        if n is not None:
            new.append(record(len(new), key, *n, errors=12 if n[1] == "FAILED" else 0))
    footer = {"type": "footer", "cases": 0, "counts": {}, "interrupted": False,
              "wall_seconds": 1.0, "finished": "2024-06-07T10:01:00+00:00"}
    write(str(HERE / "marks_base.jsonl"), header("2024-06-07T10:00:00+00:00", ENV), base,
          {**footer, "cases": len(base)})
    new_env = copy.deepcopy(ENV)
    new_env["git"]["commit"] = "89abcdef0123456789abcdef0123456789abcdef"
    write(str(HERE / "marks_new.jsonl"), header("2024-06-07T11:00:00+00:00", new_env), new,
          {**footer, "cases": len(new)})
    with open(HERE / "marks_new.jsonl", "rb") as src, \
            gzip.GzipFile(HERE / "marks_new.jsonl.gz", "wb", mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    other = copy.deepcopy(new_env)
    other["cpu"]["model"] = "Other CPU 100"
    other["threads"]["max"] = 4
    write(str(HERE / "other_machine.jsonl"), header("2024-06-07T12:00:00+00:00", other),
          new, {**footer, "cases": len(new)})


if __name__ == "__main__":
    main()
