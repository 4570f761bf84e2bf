"""Notes: docs/notes/2026-12-06-verdict-parts.md, "The test's power read from the exceeding
queries". Reads the CSV of crates/tailrank/examples/spacing_controls.rs (one row per tested
query and level) and prints, per family, the quartiles of ln(R_1 / r_alpha) over the queries
whose top spacing exceeds its 1% point and whose top item outranks their top positive: how
deep past the threshold the detections sit. Needs numpy and pandas.
Usage: python3 spacing_depth.py a05.csv 0.05"""
import sys

import numpy as np

from spacing_controls import exceedances, quantile


def main(path, fraction):
    d = exceedances(path)
    d = d[np.isclose(d.f, fraction) & (d.e1 == 1) & (d.above == 1)]
    grid = (np.round(np.clip(d.xi, -0.8, 0.8) / 0.05) * 0.05).round(2)
    r1 = (d.x1 - d.x2) / np.maximum(d.x2 - d.x50, 1e-12)
    d = d.assign(depth=np.log(r1 / np.array([quantile[(x, 1)] for x in grid])))
    print(d.groupby("family").depth.describe()[["count", "25%", "50%", "75%"]].round(2).to_string())


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
