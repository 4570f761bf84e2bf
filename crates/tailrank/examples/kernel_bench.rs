//! Times the scoring kernels alone: `kernel_bench [threads] [blocks] [dim]` scores one 512-row
//! block `blocks` times per thread against 1000 queries of dimension `dim` (768) with the f32
//! kernel and with the screen (integer upper bounds), and times the exact re-scoring of single
//! pairs. Prints
//! GFLOP/s (2·Q·p·D per block) and ns per re-scored pair.
use std::time::Instant;
use tailrank::scan::kernel::{Backend, ScoreKernel, Scratch};
use tailrank::scan::screen::{Screen, ScreenScratch};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("number"))
        .collect();
    let threads = args.first().copied().unwrap_or(2);
    let blocks = args.get(1).copied().unwrap_or(200);
    let (nq, d, p) = (1000, args.get(2).copied().unwrap_or(768), 512);
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
    let screen = Screen::new(&q, nq, d, p);
    let order: Vec<u32> = (0..p as u32).collect();
    let flop = 2.0 * (nq * d * p * blocks * threads) as f64;
    let time = |f: &(dyn Fn() + Sync)| {
        let t0 = Instant::now();
        std::thread::scope(|sc| {
            for _ in 0..threads {
                sc.spawn(f);
            }
        });
        t0.elapsed().as_secs_f64()
    };
    let secs = time(&|| {
        let mut scratch = Scratch::default();
        let mut out = vec![0f32; k.out_len()];
        for _ in 0..blocks {
            k.scores(&block, &mut scratch, &mut out);
        }
        std::hint::black_box(&out);
    });
    println!(
        "threads {threads}, D = {d}: f32 kernel {:.1} GFLOP/s ({:.1} per thread)",
        flop / secs / 1e9,
        flop / secs / 1e9 / threads as f64
    );
    let Some(screen) = screen else {
        println!("no screen on this CPU");
        return;
    };
    let secs = time(&|| {
        let mut scratch = ScreenScratch::default();
        let mut out = vec![0f32; screen.out_len()];
        for _ in 0..blocks {
            screen.upper_bounds(&block, &order, &mut scratch, &mut out);
        }
        std::hint::black_box(&out);
    });
    println!(
        "threads {threads}: screen {:.1} GFLOP/s-equivalent ({:.1} per thread)",
        flop / secs / 1e9,
        flop / secs / 1e9 / threads as f64
    );
    // Re-scoring: 12 pseudo-random rows per query and block (about 2.4% of the pairs).
    let pairs: Vec<(u32, u32)> = (0..nq)
        .flat_map(|qi| (0..12).map(move |i| (qi as u32, ((qi * 97 + i * 41) % p) as u32)))
        .collect();
    let reps = blocks / 10 + 1;
    let secs = time(&|| {
        let mut out = vec![0f32; pairs.len()];
        for _ in 0..reps {
            k.exact(&block, &pairs, &mut out);
        }
        std::hint::black_box(&out);
    });
    let pairs = (reps * nq * 12 * threads) as f64;
    println!(
        "threads {threads}: exact re-scoring {:.1} ns per pair per thread",
        secs / pairs * 1e9 * threads as f64
    );
}
