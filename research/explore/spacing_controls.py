"""Notes: docs/notes/2026-12-06-spacing-centre.md, "The test's calibration". Reads the CSV of
`crates/tailrank/examples/spacing_controls.rs` (one row per tested query and level) and prints,
per family and sample fraction, the share of queries whose k-th top spacing
R_k = (x_k - x_{k+1})/(x_{k+1} - x_50) exceeds its upper 1% point under a GPD tail with the
query's own fitted xi (Monte Carlo null on a 0.05 grid of xi, as the test's). k = 1 is the
test's own spacing; k = 2..6 are controls that one rare item above the tail does not move.
Needs numpy and pandas. Usage: python3 spacing_controls.py a01.csv a05.csv ..."""
import sys
import numpy as np
import pandas as pd

ALPHA, N, K, DRAWS = 0.01, 50, 6, 20000
rng = np.random.default_rng(0)
grid = np.round(np.arange(-0.8, 0.81, 0.05), 2)
quantile = {}
for xi in grid:
    u = rng.random((DRAWS, N))
    y = ((1 - u) ** (-xi) - 1) / xi if abs(xi) > 1e-9 else -np.log(1 - u)
    y = -np.sort(-y, axis=1)
    for k in range(1, K + 1):
        r = (y[:, k - 1] - y[:, k]) / (y[:, k] - y[:, N - 1])
        quantile[(xi, k)] = np.quantile(r, 1 - ALPHA)


def exceedances(path):
    d = pd.read_csv(path)
    g = (np.round(np.clip(d.xi, -0.8, 0.8) / 0.05) * 0.05).round(2)
    xs = d[[f"x{i}" for i in range(1, 9)]].values.astype(float)
    for k in range(1, K + 1):
        r = (xs[:, k - 1] - xs[:, k]) / np.maximum(xs[:, k] - d.x50.values, 1e-12)
        d[f"e{k}"] = (r > np.array([quantile[(x, k)] for x in g])).astype(int)
    d["above_e1"] = d.e1 * d.above
    return d


def main(paths):
    for path in paths:
        report(path)


def report(path):
    d = exceedances(path)
    cols = [f"e{k}" for k in range(1, K + 1)] + ["above", "above_e1"]
    t = d.groupby(["family", "f"])[cols].mean() * 100
    t["queries"] = d.groupby(["family", "f"]).size()
    print(path)
    print(t.round(2).to_string())


if __name__ == "__main__":
    main(sys.argv[1:])
