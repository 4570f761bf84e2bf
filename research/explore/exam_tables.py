"""Per-family exam tables (docs/reference/validation.md) from the run file of `tailrank validate --json`:
for the runs at the headline fraction (the ones with a verdict), the mean and mean absolute
error of the estimate, the other evt fit (the paper's under the level-selected default, the
level-selected one under `--fit fixed`) and the level-calibrated law; the realized interval's and
the query-bootstrap interval's coverage and mean width; how many runs are doubtful, the
verdict's hit rate (doubtful among |error| > 1 point) and false alarms (doubtful among |error|
< 0.5 point); hit@1 and Recall@k mean errors. Points of mAP@k throughout.
Usage: python exam_tables.py RUNS.json"""
import collections, json, sys
import numpy as np


def pt(v):
    return 100.0 * v


def signed(fmt, v):
    """A number as the docs print it: a true minus sign."""
    return (fmt % v).replace("-", "\u2212")


def other_fit(r):
    """mAP@k of the fit that is not the estimate's: `other_fit` (run files from 2026-12-03 on),
    else the realized interval's fit-choice reading (the same value)."""
    if r.get("other_fit") is not None:
        return r["other_fit"]
    return r["realized_parts"]["fit_choice_estimate"]


def main(path):
    report = json.load(open(path))
    runs = [r for r in report["runs"] if r.get("verdict") is not None]
    selected = report["options"].get("fit", "fixed") == "level-selected"
    fams = collections.OrderedDict()
    for r in runs:
        fams.setdefault(r["preset"], []).append(r)
    print("| family | estimate (%s) | %s | level-calibrated | realized interval | "
          % (report["options"].get("fit", "fixed"), "the paper's fit" if selected else "level-selected"),
          end="")
    print(
          "query-bootstrap interval | doubtful | hit | false alarm | hit@1 | Recall@k |")
    print("|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
    tot = collections.Counter()
    for fam, rs in fams.items():
        e = np.array([pt(r["evt"] - r["truth"]) for r in rs])
        s = np.array([pt(other_fit(r) - r["truth"]) for r in rs])
        c = np.array([pt(r["level_calibrated"]["map_at_k"] - r["truth"]) for r in rs])
        d = np.array([r["verdict"] == "doubtful" for r in rs])
        cov = lambda k: (sum(r[k]["lo"] <= r["truth"] <= r[k]["hi"] for r in rs),
                         np.mean([pt(r[k]["hi"] - r[k]["lo"]) for r in rs]))
        rc, qc = cov("realized"), cov("percentile")
        big, small = np.abs(e) > 1, np.abs(e) < 0.5
        hit = "%d/%d" % ((d & big).sum(), big.sum()) if big.any() else "–"
        fa = "%d/%d" % ((d & small).sum(), small.sum()) if small.any() else "–"
        h1 = np.mean([pt(r["hit_at_1"] - r["truth_hit_at_1"]) for r in rs])
        rk = np.mean([pt(r["recall_at_k"] - r["truth_recall_at_k"]) for r in rs])
        n = len(rs)
        fmt = lambda v: "%s (%.2f)" % (signed("%+.2f", v.mean()), np.abs(v).mean())
        name = fam + (" (held out)" if fam == "hubs" else "")
        print("| %s | %s | %s | %s | %d/%d, %.2f | %d/%d, %.2f | %d/%d | %s | %s | %s | %s |" % (
            name, fmt(e), fmt(s), fmt(c), rc[0], n, rc[1], qc[0], n, qc[1], d.sum(), n, hit, fa,
            signed("%+.1f", h1), signed("%+.2f", rk)))
        if fam != "hubs":
            tot.update(hit_n=(d & big).sum(), big=big.sum(), fa_n=(d & small).sum(), small=small.sum(),
                       cov=rc[0], runs=n)
    print("\ntuned families: verdict hit %d/%d, false alarms %d/%d, realized interval coverage %d/%d"
          % (tot["hit_n"], tot["big"], tot["fa_n"], tot["small"], tot["cov"], tot["runs"]))


if __name__ == "__main__":
    main(sys.argv[1])
