//! Times the scoring kernel alone: `kernel_bench [threads] [blocks]` scores one 512-row block
//! `blocks` times per thread against 1000 queries of dimension 768 and prints GFLOP/s.
use std::time::Instant;
use tailrank::scan::kernel::{Backend, ScoreKernel, Scratch};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("number"))
        .collect();
    let threads = args.first().copied().unwrap_or(2);
    let blocks = args.get(1).copied().unwrap_or(200);
    let (nq, d, p) = (1000, 768, 512);
    let mut s = 1u64;
    let mut rnd = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let q: Vec<f32> = (0..nq * d).map(|_| rnd()).collect();
    let block: Vec<f32> = (0..p * d).map(|_| rnd()).collect();
    let k = ScoreKernel::new(&q, nq, d, p, Backend::detect());
    let t0 = Instant::now();
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                let mut scratch = Scratch::default();
                let mut out = vec![0f32; k.out_len()];
                for _ in 0..blocks {
                    k.scores(&block, &mut scratch, &mut out);
                }
                std::hint::black_box(&out);
            });
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    let flop = 2.0 * (nq * d * p * blocks * threads) as f64;
    println!(
        "threads {threads}: {:.1} GFLOP/s ({:.1} per thread)",
        flop / secs / 1e9,
        flop / secs / 1e9 / threads as f64
    );
}
