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

#[test]
fn every_isa_gives_the_avx2_bounds_bitwise() {
    let Some(best) = ScreenIsa::detect() else {
        return;
    };
    // Odd and even numbers of row panels, query counts that are not a multiple of NR or of
    // the AMX tile (16), depths below, at and above one 64-byte AMX step.
    for &(nq, d, p) in &[
        (7, 768, 48),
        (13, 33, 64),
        (6, 1, 16),
        (5, 2048, 32),
        (11, 96, 80),
        (16, 64, 16),
        (37, 130, 32),
    ] {
        let q = unit_rows(nq, d, 3 + d as u64);
        let mut block = unit_rows(p, d, 4 + d as u64);
        block[..d].copy_from_slice(&q[..d]);
        // Extreme quantised values (±32767 and the smallest) in the last row.
        let last = &mut block[(p - 1) * d..];
        last.fill(1e-6);
        last[0] = 1.0;
        if d > 1 {
            last[d - 1] = -1.0;
        }
        let order: Vec<u32> = (0..p as u32).rev().collect();
        let mut screen = Screen::new(&q, nq, d, p).expect("AVX2 machine");
        let mut scratch = ScreenScratch::default();
        let mut run = |s: &Screen| {
            let mut out = vec![f32::NAN; s.out_len()];
            s.upper_bounds(&block, &order, &mut scratch, &mut out);
            out
        };
        screen.limit_isa(ScreenIsa::Avx2);
        let narrow = run(&screen);
        for isa in [ScreenIsa::Avx512Vnni, ScreenIsa::AmxInt8] {
            screen.limit_isa(isa);
            if screen.isa() != isa.min(best) || screen.isa() == ScreenIsa::Avx2 {
                continue;
            }
            // Twice: the second run reuses the scratch of the first.
            for _ in 0..2 {
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
}

#[test]
fn isa_names_round_trip() {
    for isa in [ScreenIsa::Avx2, ScreenIsa::Avx512Vnni, ScreenIsa::AmxInt8] {
        assert_eq!(ScreenIsa::from_name(isa.name()), Some(isa));
    }
    assert_eq!(ScreenIsa::from_name("sse2"), None);
}
