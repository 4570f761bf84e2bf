"""Notes: docs/notes/2026-12-06-verdict-parts.md. Reads run files of `tailrank validate --exam
--json` (every run keeps its verdict's statistics, `trust`, and its error decomposition) and
prints, per fraction and side (tuning / held out):
- each test of the verdict judged as a diagnostic: fires on runs off by more than 1 point
  (hits) and on runs under 0.5 point (false alarms), the first two columns of the exam's
  tests table;
- the parts of the close runs: how many have a tail or immune part over 1 point, which cancel;
- other verdict rules: without the fit-choice test, with its tolerance at 1.5 or 2 points,
  without the falling-estimate test, with the trend's gate at z = 2, and the realized width
  alone (doubt when wider than W).
The fit-choice, falling-estimate and top-spacing rules are restated from predict::trust
(Z_CRIT = 3, FIT_TOLERANCE = 1 point, both level rises >= 0); the in-sample, trend and
endpoint tests are read from the runs' own booleans (except for the trend-gate variant), so
the check that the rules rebuild every recorded verdict tests the restated three and the
union. Runs whose verdict is `unchecked` are left out, as the exam's tests table leaves them.
Usage: python3 verdict_parts.py exam-runs.json ..."""
import json
import statistics
import sys

Z_CRIT = 3.0
HELD_OUT = {"hubs", "spread-even", "spread-0.3"}


def held_out(r):
    return r["preset"] in HELD_OUT or r["preset"].startswith("web")


def fired(r, fit_tolerance=0.01, trend_z=None):
    t = r["trust"]
    rises = t.get("level_rises")
    shift = t.get("fit_choice_shift")
    trend = r["trend_fired"]
    if trend_z is not None:
        se, move = t["trend_std_error"], t["trend_projected"]
        # Rust's z is +inf when the SE is 0 or NaN (written as null); a NaN move never fires.
        trend = move is not None and abs(move) > 0.005 and (not se or abs(move / se) > trend_z)
    return {
        "in-sample check": r["in_sample_fired"],
        "trend": trend,
        "fit choice": shift is not None and abs(shift) > fit_tolerance,
        "falling estimate": bool(rises) and rises[0] >= 0 and rises[1] >= 0,
        "endpoint": r["endpoint_fired"],
        "top spacing": (t.get("spacing") or {}).get("z", 0.0) > Z_CRIT,
    }


def error(r):
    return abs(r["evt"] - r["truth"]) * 100


def width(r):
    return (r["realized"]["hi"] - r["realized"]["lo"]) * 100


def score(runs, doubt):
    """(misses, far runs, false alarms, close runs) of the rule `doubt`."""
    far = [r for r in runs if error(r) > 1]
    close = [r for r in runs if error(r) < 0.5]
    return (sum(not doubt(r) for r in far), len(far), sum(doubt(r) for r in close), len(close))


RULES = {
    "the verdict": lambda r: any(fired(r).values()),
    "no fit choice": lambda r: any(v for k, v in fired(r).items() if k != "fit choice"),
    "fit choice at 1.5 points": lambda r: any(fired(r, 0.015).values()),
    "fit choice at 2 points": lambda r: any(fired(r, 0.02).values()),
    "no falling estimate": lambda r: any(v for k, v in fired(r).items() if k != "falling estimate"),
    "trend gate at z = 2": lambda r: any(fired(r, trend_z=2.0).values()),
    **{f"width > {w}": (lambda w: lambda r: width(r) > w)(w) for w in (3, 4, 5, 6, 8)},
}


def main(paths):
    runs = [r for p in paths for r in json.load(open(p)) if r.get("verdict") not in (None, "unchecked")]
    wrong = [r for r in runs if any(fired(r).values()) != (r["verdict"] != "trusted")]
    print(f"{len(runs)} runs; verdicts the rules do not rebuild: {len(wrong)}")
    for f in sorted({r["fraction"] for r in runs}, reverse=True):
        for side in (False, True):
            sel = [r for r in runs if r["fraction"] == f and held_out(r) == side]
            if not sel:
                continue
            far = [r for r in sel if error(r) > 1]
            close = [r for r in sel if error(r) < 0.5]
            print(f"\nf = {f}, {'held out' if side else 'tuning'}: {len(far)} far, {len(close)} close")
            for test in fired(sel[0]):
                hits = sum(fired(r)[test] for r in far)
                alarms = sum(fired(r)[test] for r in close)
                print(f"  {test:17s} fires on far {hits}/{len(far)}, on close {alarms}/{len(close)}")
            for label, group in (("close", close), ("far", far)):
                parts = [r["decomposition"] for r in group if r.get("decomposition")]
                if side or not parts:
                    continue
                big = sum(max(abs(p["part_tail"]), abs(p["part_immune"])) > 0.01 for p in parts)
                tail = statistics.mean(abs(p["part_tail"]) for p in parts) * 100
                immune = statistics.mean(abs(p["part_immune"]) for p in parts) * 100
                print(f"  {label} runs with a tail or immune part over 1 point: {big}/{len(parts)}; "
                      f"mean |tail| {tail:.2f}, mean |immune| {immune:.2f}")
            for name, rule in RULES.items():
                m, nf, a, nc = score(sel, rule)
                print(f"  {name:26s} misses {m}/{nf}, false alarms {a}/{nc}")


if __name__ == "__main__":
    main(sys.argv[1:])
