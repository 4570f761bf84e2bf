//! Tests of the screen: the bound holds, the quantisation is exact enough, and the AVX-512
//! and AVX2 paths give the same bits.

use super::*;
use crate::scan::kernel::{test_values as values, Backend, ScoreKernel, Scratch};

fn unit_rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut v = values(n * d, seed);
    for r in v.chunks_mut(d) {
        let norm = r.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-30);
        r.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Kernel scores (`nq_pad × p`, columns in `order`) and screen bounds of the same block.
fn both(q: &[f32], nq: usize, d: usize, block: &[f32], order: &[u32]) -> (Vec<f32>, Vec<f32>) {
    let p = order.len();
    let k = ScoreKernel::new(q, nq, d, p, Backend::Avx2Fma);
    let screen = Screen::new(q, nq, d, p).expect("AVX2 machine");
    let mut exact = vec![0f32; k.out_len()];
    k.scores_in_order(block, Some(order), &mut Scratch::default(), &mut exact);
    let mut upper = vec![0f32; screen.out_len()];
    screen.upper_bounds(block, order, &mut ScreenScratch::default(), &mut upper);
    (exact, upper)
}

#[test]
fn bounds_hold_and_are_tight_on_unit_vectors() {
    if !avx2_fma() {
        return;
    }
    for &(nq, d) in &[(7, 768), (13, 33), (6, 1), (5, 2048)] {
        let p = 64;
        let q = unit_rows(nq, d, 1 + d as u64);
        let block = unit_rows(p, d, 2 + d as u64);
        let order: Vec<u32> = (0..p as u32).rev().collect();
        let (exact, upper) = both(&q, nq, d, &block, &order);
        let mut widest = 0f32;
        for qi in 0..nq {
            for s in 0..p {
                let (e, u) = (exact[qi * p + s], upper[qi * p + s]);
                assert!(
                    u >= e,
                    "d={d}: bound {u} below score {e} (query {qi}, slot {s})"
                );
                widest = widest.max(u - e);
            }
        }
        assert!(
            widest < 2e-3,
            "d={d}: band {widest} is too wide to screen with"
        );
    }
}

#[test]
fn bounds_hold_on_spiky_and_tiny_vectors() {
    if !avx2_fma() {
        return;
    }
    let (nq, d, p) = (6, 96, 32);
    let mut q = unit_rows(nq, d, 5);
    // One-hot, two spikes, values at half steps, a tiny vector.
    q[..d].fill(0.0);
    q[3] = 1.0;
    q[d..2 * d]
        .iter_mut()
        .enumerate()
        .for_each(|(k, x)| *x = if k < 2 { 0.70710677 } else { 1e-4 });
    q[2 * d..3 * d].fill(1e-30);
    let mut block = unit_rows(p, d, 6);
    block[..d].copy_from_slice(&q[..d]);
    block[d..2 * d].copy_from_slice(&q[d..2 * d]);
    for (k, x) in block[2 * d..3 * d].iter_mut().enumerate() {
        *x = (k as f32 + 0.5) / 32767.0 * if k % 2 == 0 { 1.0 } else { -1.0 };
    }
    block[3 * d..4 * d].fill(0.0);
    let order: Vec<u32> = (0..p as u32).collect();
    let (exact, upper) = both(&q, nq, d, &block, &order);
    for qi in 0..nq {
        for s in 0..p {
            let (e, u) = (exact[qi * p + s], upper[qi * p + s]);
            assert!(u >= e, "bound {u} below score {e} (query {qi}, slot {s})");
        }
    }
}

#[test]
fn simd_and_scalar_quantisation_agree() {
    for &d in &[1usize, 7, 8, 13, 768] {
        for seed in 0..4 {
            let v = unit_rows(1, d, seed + 10 * d as u64);
            let (mut a, mut b) = (vec![0i16; d + 3], vec![0i16; d + 3]);
            let (sa, na, ea, ha) = quantise(&v, &mut a);
            let (sb, nb, eb, hb) = quantise_scalar(&v, &mut b);
            // The steps may differ in the last bit (sums in another order), the values by
            // one rounding step.
            assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1), "d={d}");
            for (x, y) in [(sa, sb), (na, nb), (ea, eb), (ha, hb)] {
                assert!((x - y).abs() <= 1e-5 * y.max(1e-3), "d={d}: {x} vs {y}");
            }
        }
    }
}

#[test]
fn quantisation_keeps_the_integer_product_in_range() {
    // A flat vector has the largest ‖v̂‖ for its norm: the cap must hold.
    let d = MAX_DIM;
    let v = vec![1.0 / (d as f32).sqrt(); d];
    let mut out = vec![0i16; d];
    let (step, norm, err, hat) = quantise(&v, &mut out);
    let qnorm = out
        .iter()
        .map(|&x| f64::from(x).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(qnorm * qnorm < 2f64.powi(31), "‖v̂‖² = {}", qnorm * qnorm);
    assert!((norm - 1.0).abs() < 1e-3 && hat > 0.99 && err < 1e-3 && step > 0.0);
    let (step, norm, ..) = quantise(&[0.0; 4], &mut out[..4]);
    assert_eq!((step, norm), (1.0, 0.0));
}

/// A unit vector dominated by `sign · 1` in value `at` (the rest of norm 0.1), so that its
/// quantised value there is `±32767`.
fn spiked(d: usize, at: usize, sign: f32, seed: u64) -> Vec<f32> {
    let mut v = unit_rows(1, d, seed);
    v.iter_mut().for_each(|x| *x *= 0.1);
    v[at] = sign;
    v
}

/// The widest instruction set here; with `TAILRANK_REQUIRE_AMX` set, a machine without AMX
/// (or whose OS refuses its tile state) fails instead of silently testing less.
fn widest_isa() -> Option<ScreenIsa> {
    let best = ScreenIsa::detect();
    if std::env::var_os("TAILRANK_REQUIRE_AMX").is_some() {
        assert_eq!(
            best,
            Some(ScreenIsa::AmxInt8),
            "TAILRANK_REQUIRE_AMX: no AMX here"
        );
    }
    best
}

#[test]
fn every_isa_gives_the_avx2_bounds_bitwise() {
    let Some(best) = widest_isa() else {
        return;
    };
    if best == ScreenIsa::Avx2 {
        return;
    }
    // Odd and even numbers of row panels, query counts that are not a multiple of NR or of
    // the AMX tile (16), depths below, at and above one 64-byte AMX step, several query
    // groups (100 queries at D = 2048).
    let mut scratch = ScreenScratch::default();
    for &(nq, d, p) in &[
        (7, 768, 48),
        (13, 33, 64),
        (6, 1, 16),
        (5, 2048, 32),
        (11, 96, 80),
        (16, 64, 16),
        (37, 130, 32),
        (100, 2048, 16),
        (9, 190, 32),
    ] {
        let mut q = unit_rows(nq, d, 3 + d as u64);
        let mut block = unit_rows(p, d, 4 + d as u64 + nq as u64);
        // Quantised values ±32767 in queries and rows, against each other.
        for (i, sign) in [(0, 1.0), (1, -1.0)] {
            if i < nq && i < p {
                let v = spiked(d, (3 * i) % d, sign, 10 + i as u64);
                q[i * d..(i + 1) * d].copy_from_slice(&v);
                let w = spiked(d, (3 * i) % d, -sign, 20 + i as u64);
                block[(p - 1 - i) * d..(p - i) * d].copy_from_slice(&w);
            }
        }
        block[..d].copy_from_slice(&q[..d]);
        let order: Vec<u32> = (0..p as u32).rev().collect();
        let mut screen = Screen::new(&q, nq, d, p).expect("AVX2 machine");
        // One scratch for every case: (37, 130) and (9, 190) share the AMX depth of 192.
        let mut run = |s: &Screen| {
            let mut out = vec![f32::NAN; s.out_len()];
            s.upper_bounds(&block, &order, &mut scratch, &mut out);
            out
        };
        screen.limit_isa(ScreenIsa::Avx2);
        let narrow = run(&screen);
        for isa in [ScreenIsa::Avx512Vnni, ScreenIsa::AmxInt8] {
            if isa > best {
                continue;
            }
            screen.limit_isa(isa);
            assert_eq!(screen.isa(), isa);
            let wide = run(&screen);
            for (i, (a, b)) in wide.iter().zip(&narrow).enumerate() {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "{isa:?} nq={nq} d={d} p={p}: bound {i}"
                );
            }
        }
    }
}

#[test]
fn amx_products_are_the_exact_i16_products() {
    if widest_isa() != Some(ScreenIsa::AmxInt8) {
        return;
    }
    // Integer vectors of norm at most 40000 (the quantisation's cap) with values at ±32767
    // and small ones of both signs: every product fits in i32, as the screen guarantees.
    let mut st = 7u64;
    let mut next = move || {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        st
    };
    for &(nq, d, p) in &[(3, 1, 16), (20, 33, 32), (17, 64, 16), (5, 2048, 48)] {
        let mut vector = |extreme: i16| -> Vec<i16> {
            let cap = 20000.0 / (d as f64).sqrt();
            let mut v: Vec<i16> = (0..d)
                .map(|_| ((next() % 2001) as f64 / 1000.0 - 1.0) * cap)
                .map(|x| x.round() as i16)
                .collect();
            v[(next() as usize) % d] = extreme;
            v
        };
        let queries: Vec<Vec<i16>> = (0..nq)
            .map(|i| vector(if i % 2 == 0 { 32767 } else { -32767 }))
            .collect();
        let rows: Vec<Vec<i16>> = (0..p)
            .map(|i| vector(if i % 3 == 0 { -32767 } else { 32767 }))
            .collect();
        let d64 = amx::padded_depth(d);
        let mut aq = amx::Queries::zeroed(nq, d);
        for (q, v) in queries.iter().enumerate() {
            aq.put(q, v);
        }
        let mut ar = amx::Split::default();
        ar.reset(p, d64, d);
        for (i, r) in rows.iter().enumerate() {
            // SAFETY: AMX was detected, which implies AVX-512 F, BW and VL.
            unsafe { ar.put_b(i, d64, r) };
        }
        // SAFETY: as above; the rows hold `p` vectors of the queries' depth.
        let got = unsafe { amx::exact_products(&aq, &ar, p) };
        for (qi, qv) in queries.iter().enumerate() {
            for (ri, rv) in rows.iter().enumerate() {
                let want: i64 = qv.iter().zip(rv).map(|(&a, &b)| a as i64 * b as i64).sum();
                let want = i32::try_from(want).expect("test vectors keep the product in i32");
                assert_eq!(got[qi * p + ri], want, "d={d}: query {qi}, row {ri}");
            }
        }
    }
}

#[test]
fn isa_names_round_trip() {
    for isa in [ScreenIsa::Avx2, ScreenIsa::Avx512Vnni, ScreenIsa::AmxInt8] {
        assert_eq!(ScreenIsa::from_name(isa.name()), Some(isa));
    }
    assert_eq!(ScreenIsa::from_name("sse2"), None);
}
