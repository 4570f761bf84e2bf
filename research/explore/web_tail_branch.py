#!/usr/bin/env python3
"""Where the tail branch's excess hardness comes from (docs/notes/2026-12-06-web-tail-branch.md).

Per positive, against the realized K_N of the full pool (the web families' decomposition):
the expected-rank AP term of the estimate and of the truth (AP@k is a sum of per-positive
terms, so a branch's part is the sum of its positives' differences), and the term's
expectation under the count law K_N = K_S + Poisson(x̂ (N − S)) (the gap to the expected-rank
term is the map's convexity, the rest is the calibration of x̂ as a probability).

  web_tail_branch.py hardness DIR...       # DIR: a kept web run (`simulate --vectors --validate
                                           #  --keep-summaries`: DIR/full, DIR/f0.05, DIR/f0.01) or
                                           #  a corpus run (`simulate --preset P --out DIR`:
                                           #  DIR/summary, DIR/truth.json); writes DIR/an-def.pkl
  web_tail_branch.py parts DIR...          # tail / immune parts by family and fit class
  web_tail_branch.py concentration DIR...  # by query, by top positive, by K_N = 0
  web_tail_branch.py truetail DIR...       # fitted tail at the full pool's top scores (web only)
  web_tail_branch.py rules DIR... > R      # offline rules: their change of mAP@k per run (JSONL)
  web_tail_branch.py exam R EXAM WEB...    # the rules applied to the exam's runs (EXAM:
                                           #  `validate --exam --json`, WEB: `simulate --vectors
                                           #  --validate --json`): tuning families get their
                                           #  family's mean change, web runs their own

Predictions: `tailrank predict --bootstrap 0 --sample-noise 0 --no-excess-centre
--hardness-out` (the level-selected fit, as the validation; the move to the centre of the
excess is left out, it does not change any x̂). $TAILRANK names the binary.
"""
import collections, csv, json, math, os, pickle, re, subprocess, sys
import numpy as np

K = 1000
B = os.environ.get('TAILRANK', 'target/release/tailrank')


def _hard(summ, out, args):
    if not os.path.exists(out):
        with open(out + '.json', 'w') as js:
            subprocess.run([B, 'predict', '--summary', summ, '--bootstrap', '0', '--sample-noise', '0',
                            '--json', '--hardness-out', out] + args, check=True, stdout=js)
    rows = list(csv.reader(l for l in open(out) if not l.startswith('#')))
    return [dict(zip(rows[0], r)) for r in rows[1:]], json.load(open(out + '.json'))


def hardness(d):
    if os.path.exists(f'{d}/truth.json'):
        tj = json.load(open(f'{d}/truth.json')); n_pool = float(tj['pool_size'])
        kn = {(q['id'], p['id']): int(p['pool_above_n']) for q in tj['queries'] for p in q['positives']}
        subsets = ['summary']
    else:
        n_pool = 1e8
        truth, _ = _hard(f'{d}/full', f'{d}/h-full.csv', ['--estimator', 'count'])
        kn = {(r['query_id'], r['positive_id']): int(r['pool_above']) for r in truth}
        subsets = sorted(x for x in os.listdir(d) if re.fullmatch(r'f[0-9.]+', x))
    out = {}
    for f in subsets:
        rows, js = _hard(f'{d}/{f}', f'{d}/h-def-{f}.csv', ['--no-excess-centre'])
        byq = collections.defaultdict(list)
        for r in rows:
            byq[r['query_id']].append(r)
        nq = len(byq); recs = []
        for q, ps in byq.items():
            den = min(K, len(ps))
            for r in ps:
                j, c, s_ = int(r['j']), int(r['core_above']), int(r['sample_size'])
                xh = float(r['x_hat']); kn_ = kn[(q, r['positive_id'])]; ks = int(r['pool_above'])
                lam = n_pool * xh
                term = lambda rank: j / rank if rank <= K else 0.0
                snap = round(lam) if abs(lam - round(lam)) <= 1e-9 * max(1, lam) else lam
                est = term(j + c + snap) / den / nq; tru = term(j + c + kn_) / den / nq
                mu = xh * (n_pool - s_); ex = 0.0
                if r['branch'] == 'tail':
                    m, p, cum = 0, math.exp(-mu), 0.0
                    while cum < 1 - 1e-12 and j + c + ks + m <= K:
                        ex += p * term(j + c + ks + m); cum += p; m += 1; p *= mu / m
                    ex /= den * nq
                fl = lambda k_: float(r[k_]) if r[k_] else float('nan')
                recs.append(dict(q=q, j=j, C=c, K=kn_, KS=ks, S=s_, N=n_pool, xh=xh, lam=lam,
                                 br=r['branch'], est=est, tru=tru, ex=ex, xi=fl('tail_xi'),
                                 u=fl('tail_u'), sg=fl('tail_sigma'), s=float(r['score']),
                                 nu=int(float(r['tail_n_u'])) if r['tail_n_u'] else 0))
        out[f] = (recs, js)
    pickle.dump(out, open(f'{d}/an-def.pkl', 'wb'))


def runs(dirs):
    """(family, fraction label, dir, subset, records, prediction JSON) of every run."""
    for d in dirs:
        name = d.rstrip('/').split('/')[-1]
        fam = re.sub(r'(-f0\.0[15])?-s\d+$', '', name)
        for f, (recs, js) in pickle.load(open(f'{d}/an-def.pkl', 'rb')).items():
            ff = f[1:] if f != 'summary' else re.search(r'-f(0\.0[15])-', name).group(1)
            yield fam, ff, d, f, recs, js


def fit_class(recs):
    return {r['q']: 'none' if r['nu'] == 0 else ('edge' if r['xi'] == 0 else 'int') for r in recs}


def parts(dirs):
    acc = collections.defaultdict(lambda: collections.defaultdict(float))
    for fam, ff, d, f, recs, js in runs(dirs):
        a = acc[(ff, fam)]; a['runs'] += 1; cls = fit_class(recs)
        a['edgeq'] += sum(v == 'edge' for v in cls.values()) / len(cls)
        for r in recs:
            e = r['est'] - r['tru']
            if r['br'] == 'tail':
                a['tail'] += e; a['conv'] += r['est'] - r['ex']; a['tail_' + cls[r['q']]] += e
            elif r['br'] == 'immune':
                a['imm'] += e
    print("| f | family | runs | edge-fit queries | tail part | of which map convexity | immune part "
          "| tail part, edge fits | tail part, interior fits |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (ff, fam), a in sorted(acc.items()):
        n = a['runs']; P = lambda v: f"{100 * v / n:+.2f}"
        print(f"| {ff} | {fam} | {n:.0f} | {100 * a['edgeq'] / n:.0f}% | {P(a['tail'])} | {P(a['conv'])} "
              f"| {P(a['imm'])} | {P(a['tail_edge'])} | {P(a['tail_int'])} |")


def concentration(dirs):
    rows = collections.defaultdict(list)
    for fam, ff, d, f, recs, js in runs(dirs):
        pq = collections.defaultdict(float); j1 = k0 = tot = 0.0
        for r in recs:
            if r['br'] != 'tail':
                continue
            e = r['est'] - r['tru']; pq[r['q']] += e; tot += e
            j1 += e * (r['j'] == 1); k0 += e * (r['K'] == 0)
        v = sorted(pq.values()); neg = sum(x for x in v if x < 0); c = 0.0; h = e8 = None
        for i, x in enumerate(v):
            c += x
            h = h or (i + 1 if c <= 0.5 * neg else None); e8 = e8 or (i + 1 if c <= 0.8 * neg else None)
        rows[(ff, fam)].append((len(fit_class(recs)), h, e8, j1, k0, tot))
    print("| f | family | runs | queries | tail part | queries holding 50% / 80% of its negative mass "
          "| from top positives (j = 1) | from positives with K_N = 0 |")
    print("|---|---|---:|---:|---:|---|---:|---:|")
    for (ff, fam), v in sorted(rows.items()):
        n = len(v); P = lambda i: f"{100 * sum(x[i] for x in v) / n:+.2f}"
        print(f"| {ff} | {fam} | {n} | {v[0][0]} | {P(5)} | {sum(x[1] for x in v) / n:.0f} / "
              f"{sum(x[2] for x in v) / n:.0f} | {P(3)} | {P(4)} |")


def _xhat(s, u, sg, xi, nu, S):
    z = s - u
    if xi == 0:
        return nu / S * math.exp(-z / sg)
    b = 1 + xi * z / sg
    return nu / S * b ** (-1 / xi) if b > 0 else 0.0


def truetail(dirs):
    rows = collections.defaultdict(list)
    for fam, ff, d, f, recs, js in runs(dirs):
        top = np.load(f'{d}/full/top_scores.npy'); tl = np.load(f'{d}/full/top_len.npy')
        offs = np.concatenate([[0], np.cumsum(tl[:, 0])]).astype(np.int64)
        first = {}
        for r in recs:
            first.setdefault(r['q'], r)
        for i, (q, r) in enumerate(first.items()):
            if r['nu'] == 0:
                continue
            t = top[offs[i]:offs[i + 1]].astype(np.float64)
            for rr in (1, 10, 100, 1000):
                xh = _xhat(t[rr - 1], r['u'], r['sg'], r['xi'], r['nu'], r['S'])
                rows[(ff, 'edge (ξ̂ = 0)' if r['xi'] == 0 else 'interior (ξ̂ < 0)', rr)].append(
                    math.log10(max(xh, 1e-30) / (rr / r['N'])))
    print("| f | fit | r | queries | median log10(x̂/x) | quartiles | x̂ = 0 (past the fitted endpoint) |")
    print("|---|---|---:|---:|---:|---|---:|")
    for (ff, cls, rr), v in sorted(rows.items()):
        v = np.array(v)
        print(f"| {ff} | {cls} | {rr} | {len(v)} | {np.median(v):+.2f} | [{np.quantile(v, .25):+.2f}, "
              f"{np.quantile(v, .75):+.2f}] | {np.mean(v < -20):.0%} |")


XI = np.linspace(-1, 0, 101)


def _sigma_at(y, xi):
    n = len(y)
    if xi == 0:
        return y.mean()
    sg = -xi * y.max() * (1 + 1e-9) * np.geomspace(1, 1e5, 500)
    if xi == -1:
        return sg[0]
    z = np.maximum(1 + xi * y[None, :] / sg[:, None], 1e-300)
    return sg[np.argmax(-n * np.log(sg) - (1 + 1 / xi) * np.log(z).sum(1))]


def _posterior_median_xi(y):
    """xi at the median of the profile likelihood over [-1, 0] (flat prior), and its sigma."""
    n = len(y); ll = np.empty_like(XI); sgs = np.empty_like(XI)
    for i, xi in enumerate(XI):
        s = _sigma_at(y, xi); sgs[i] = s
        if xi == 0:
            ll[i] = -n * np.log(s) - n
        elif xi == -1:
            ll[i] = -n * np.log(s)
        else:
            ll[i] = -n * np.log(s) - (1 + 1 / xi) * np.log(np.maximum(1 + xi * y / s, 1e-300)).sum()
    w = np.exp(ll - ll.max()); m = int(np.searchsorted(np.cumsum(w) / w.sum(), 0.5))
    return XI[m], sgs[m]


def _term(r, x, nq, npos):
    rank = r['j'] + r['C'] + r['N'] * x
    return (r['j'] / rank if rank <= K else 0.0) / min(K, npos) / nq


def rules(dirs):
    """Per run, the change of mAP@k (points) of four offline rules, each re-estimating the tail
    and immune positives of the queries it touches (the fit choice and the centre move kept):
    count-edge: an exponential-edge fit (ξ̂ = 0) gives way to the count (x̂ = K_S/S);
    post-edge: an edge fit takes ξ at the median of its profile likelihood over [−1, 0] (flat
    prior; σ re-profiled), the fit's own uncertainty in place of the boundary;
    eb-xi: every fit's ξ̂ shrunk to the run's mean, prior N(μ, τ²) with τ² by moments, SE² =
    (1 + ξ̂)²/n_u; ct-tail: the tail x̂ scaled by the run's hit@1 tail scale c_t (§7);
    post-all (with $POST_ALL set): post-edge's ξ for every fit, interior ones included."""
    out = []
    for fam, ff, d, f, recs, js in runs(dirs):
        sd = f'{d}/{f}'
        top = np.load(f'{sd}/top_scores.npy'); tl = np.load(f'{sd}/top_len.npy'); L = tl.shape[1]
        offs = np.concatenate([[0], np.cumsum(tl.ravel())]).astype(np.int64)
        byq = collections.defaultdict(list)
        for r in recs:
            byq[r['q']].append(r)
        qs = list(byq); nq = len(qs)
        fitted = [(i, q) for i, q in enumerate(qs) if byq[q][0]['nu'] > 0]
        xis = np.array([byq[q][0]['xi'] for _, q in fitted])
        se2 = np.array([(1 + byq[q][0]['xi']) ** 2 / byq[q][0]['nu'] for _, q in fitted])
        mu, tau2 = xis.mean(), max(0.0, xis.var() - se2.mean())
        ct = js['hit_scales']['tail']
        ch = collections.defaultdict(float)
        for (i, q), xi0, s2 in zip(fitted, xis, se2):
            ps = byq[q]; r0 = ps[0]
            t = top[offs[i * L]:offs[i * L + 1]].astype(np.float64)
            y = t[:r0['nu']] - r0['u']; y = y[y > 0]
            alt = {}
            xe = float(np.clip(mu + tau2 / (tau2 + s2) * (xi0 - mu), -1, 0))
            alt['eb-xi'] = (xe, _sigma_at(y, xe))
            if xi0 == 0:
                alt['post-edge'] = _posterior_median_xi(y)
                alt['post-all'] = alt['post-edge']
            elif os.environ.get('POST_ALL'):
                alt['post-all'] = _posterior_median_xi(y)
            for r in ps:
                if r['br'] not in ('tail', 'immune'):
                    continue
                if r['br'] == 'tail':
                    ch['ct-tail'] += _term(r, ct * r['xh'], nq, len(ps)) - r['est']
                    if xi0 == 0:
                        ch['count-edge'] += _term(r, r['KS'] / r['S'], nq, len(ps)) - r['est']
                for name, (xi2, sg2) in alt.items():
                    x2 = _xhat(r['s'], r0['u'], sg2, xi2, r0['nu'], r['S'])
                    ch[name] += _term(r, x2, nq, len(ps)) - r['est']
        out.append(dict(family=fam, fraction=ff, run=d.rstrip('/').split('/')[-1], c_t=ct, mu=mu,
                        tau=math.sqrt(tau2), se=math.sqrt(se2.mean()), **ch))
        print(json.dumps(out[-1]), flush=True)


TUNING = ['ilias-like', 'mixture-tail', 'ilias-continuous', 'beta-mixture', 'truncnormal-mixture',
          'kumaraswamy', 'bursts', 'heterogeneous']
RULES = ['count-edge', 'post-edge', 'eb-xi', 'ct-tail', 'post-all']


def exam(args):
    shifts = [json.loads(l) for l in open(args[0])]
    fam_mean = collections.defaultdict(lambda: collections.defaultdict(list))
    per_run = {}
    for x in shifts:
        for rule in RULES:
            fam_mean[(x['family'], x['fraction'])][rule].append(100 * x.get(rule, 0.0))
        per_run[(x['run'], x['fraction'])] = x
    rows = []  # (side, fraction, error, {rule: error + change})
    for r in json.load(open(args[1])):
        if r['preset'] not in TUNING:
            continue
        ff = f"{r['fraction']:.2f}"; m = fam_mean[(r['preset'], ff)]
        e = 100 * (r['evt'] - r['truth'])
        rows.append(('tuning', ff, e, {k: e + float(np.mean(v)) for k, v in m.items()}))
    for w in args[2:]:
        for r in json.load(open(w)):
            ff = f"{r['fraction']:.2f}"; x = per_run.get((f"{r['family']}-s{r['seed']}", ff))
            if x is None:
                continue
            e = 100 * r['evt_error']['map_at_k']
            rows.append(('held out: web', ff, e, {k: e + 100 * x.get(k, 0.0) for k in RULES}))
    print("| side | f | runs | default | " + " | ".join(RULES) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(RULES))
    for side in ('tuning', 'held out: web'):
        for ff in ('0.05', '0.01'):
            v = [x for x in rows if x[0] == side and x[1] == ff]
            if not v:
                continue
            cell = lambda es: f"{np.mean(np.abs(es)):.2f} ({np.mean(es):+.2f})"
            print(f"| {side} | {ff} | {len(v)} | {cell([x[2] for x in v])} | "
                  + " | ".join(cell([x[3][k] for x in v]) for k in RULES) + " |")


if __name__ == '__main__':
    cmd, dirs = sys.argv[1], sys.argv[2:]
    if cmd == 'hardness':
        for d in dirs:
            hardness(d)
    elif cmd == 'exam':
        exam(dirs)
    else:
        {'parts': parts, 'concentration': concentration, 'truetail': truetail, 'rules': rules}[cmd](dirs)
