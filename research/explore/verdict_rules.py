"""Exploration (docs/notes/2026-12-estimator-log.md, "The same disagreement as a verdict test"): score other verdict
rules on the run file of `tailrank validate --json` (which keeps every statistic of the verdict,
`trust`, and the level-selected fit, `level_selected_fit`, per run), without re-running.
Hit = flagged among runs with |evt - truth| > 1 point, FA = flagged among runs under 0.5 point;
tuned families only (hubs left out). The thresholds restate predict::trust's constants.
Usage: python verdict_rules.py RUNS.json..."""
import json, sys, numpy as np
TOL, FIT_TOL, Z = 0.005, 0.01, 3.0
def fired(r):
    t = r['trust']
    trend = abs(t['trend_projected']) > TOL and abs(t['trend_projected'] / t['trend_std_error']) > Z
    u = t['in_sample'][t['in_sample_used']] if t.get('in_sample_used') is not None else None
    ins = u is not None and abs(u['projected_error']) > TOL and abs(u['error'] / u['std_error']) > Z
    fit = t.get('fit_choice_shift') is not None and abs(t['fit_choice_shift']) > FIT_TOL
    ep = r.get('endpoint_fired') or False
    return dict(trend=trend, ins=ins, fit=fit, ep=ep)
def score(runs, flag, name):
    hit = fa = nb = ns = 0
    for r in runs:
        e = abs(r['evt'] - r['truth'])
        f = flag(r)
        if e > 0.01: nb += 1; hit += f
        elif e < 0.005: ns += 1; fa += f
    print('  %-48s hit %d/%d (%.0f%%)  FA %d/%d' % (name, hit, nb, 100 * hit / max(nb, 1), fa, ns))
def main(paths):
    for path in paths:
        runs = [r for r in json.load(open(path))['runs'] if r.get('trust') and r['preset'] != 'hubs']
        print(path)
        other = lambda r: r['verdict'] == 'doubtful' and not any(fired(r).values())
        score(runs, lambda r: r['verdict'] == 'doubtful', 'current verdict')
        def gated(zg):
            def f(r):
                fr = fired(r); t = r['trust']; c = r['level_selected_fit']
                if fr['fit'] and c:
                    e_def = t['in_sample'][0]['error']; se = t['in_sample'][0]['std_error']
                    e_sel = c['candidates'][c['chosen']]['in_sample_error']
                    fr['fit'] = abs(e_def) - abs(e_sel) > zg * se
                return other(r) or any(fr.values())
            return f
        for zg in (1, 2):
            score(runs, gated(zg), 'fit-choice only if |e1| drops by > %d SE' % zg)
        for T in (2.0, 2.5, 3.0):
            score(runs, lambda r, T=T: r['verdict'] == 'doubtful' or abs(r['level_calibrated']['map_at_k'] - r['evt']) > T / 100, 'verdict or |m_cal - evt| > %.1f' % T)
        print('  -- without the fit-choice test --')
        base = lambda r: (lambda fr: fr['trend'] or fr['ins'] or fr['ep'])(fired(r)) or (r['verdict'] == 'doubtful' and not any(fired(r).values()))
        score(runs, base, 'trend, in-sample, endpoint only')
        for T in (2.0, 2.5, 3.0, 3.5, 4.0):
            score(runs, lambda r, T=T: base(r) or abs(r['level_calibrated']['map_at_k'] - r['evt']) > T / 100, '  + |m_cal - evt| > %.1f' % T)
        print('  disagreement m_cal-evt on small-error runs:', ' '.join('%s%+.1f' % (r['preset'][:4], 100 * (r['level_calibrated']['map_at_k'] - r['evt'])) for r in runs if abs(r['evt'] - r['truth']) < 0.005))
        print('  ... on big-error runs (min |.|):', min(abs(100 * (r['level_calibrated']['map_at_k'] - r['evt'])) for r in runs if abs(r['evt'] - r['truth']) > 0.01))
        print('  -- the trend test only where another test also fires --')
        def no_lone_trend(r):
            fr = fired(r)
            if fr['trend'] and not (fr['ins'] or fr['fit'] or fr['ep']):
                fr['trend'] = False
            return other(r) or any(fr.values())
        score(runs, no_lone_trend, 'no lone trend')
        score(runs, lambda r: no_lone_trend(r) or abs(r['level_calibrated']['map_at_k'] - r['evt']) > 0.025, 'no lone trend, + |m_cal - evt| > 2.5')


if __name__ == "__main__":
    main(sys.argv[1:])
