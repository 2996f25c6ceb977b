"""Single-threaded OpenBLAS DGEMM through numpy at n = 1024, best of 10 (the reference the
faer DGEMM of hetscale-kernels is held to). Run: python3 benches/dgemm_numpy.py [n]"""
import os
import sys
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # must be set before numpy loads OpenBLAS
os.environ["OMP_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
rng = np.random.default_rng(1)
a, b = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))
out = np.empty((n, n))
np.matmul(a, b, out=out)
best = min(
    (lambda t0: (np.matmul(a, b, out=out), time.perf_counter() - t0)[1])(time.perf_counter())
    for _ in range(10)
)
print(f"numpy {np.__version__} OpenBLAS dgemm n={n} one thread: {2 * n**3 / best / 1e9:.2f} Gflop/s (best of 10)")
