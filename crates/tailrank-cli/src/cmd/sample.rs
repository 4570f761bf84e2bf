//! `tailrank sample`: hash-sample pool ids (docs/method.md §4) and write the sample with a manifest.
//!
//! An id is kept iff `xxh3_64_with_seed(utf8(id), seed) < t(f)` (`tailrank::sample`). The
//! sampled ids are written in input order, one per line (gzip when `-o` ends in `.gz`), and
//! `<OUT>.manifest.json` records `N` (ids read), `fraction`, `seed`, `S` (ids kept) and
//! `digest` = `xxh3_64` (seed 0) of the concatenated `id + "\n"` lines of the sample, as 16 hex
//! digits (the uncompressed content of the output).

use clap::Args;
use std::path::PathBuf;
use tailrank::formats::ids;
use tailrank::sample;

#[derive(Args, Debug)]
pub struct SampleArgs {
    /// Pool id list (text, one id per line; `.gz` accepted).
    #[arg(long)]
    pub ids: PathBuf,
    /// Sampling fraction f in (0, 1].
    #[arg(long)]
    pub fraction: f64,
    /// Hash seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output id list (the manifest goes to `<OUT>.manifest.json`).
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
}

pub fn run(a: SampleArgs) -> anyhow::Result<()> {
    let t = sample::threshold(a.fraction)?;
    let manifest_path = sample::manifest_path(&a.out)?;
    // The ids and their manifest are replaced together (ids first, manifest last; see
    // `tailrank::atomic`), never over the input list.
    let mut outputs = tailrank::atomic::Transaction::new(&[a.ids.as_path()]);
    let ids_slot = outputs.add_file(&a.out)?;
    let manifest_slot = outputs.add_file(&manifest_path)?;
    let range = sample::HashRange { lo: 0, hi: t };
    let (n, kept) = sample::sample_id_list(&a.ids, range, a.seed)?;
    outputs.write(ids_slot, |p| ids::write_ids(p, &kept))?;
    let manifest = serde_json::json!({
        "N": n,
        "fraction": a.fraction,
        "seed": a.seed,
        "S": kept.len(),
        "digest": sample::sample_digest(&kept),
        "digest_algorithm": "xxh3_64 (seed 0) of the sampled ids, each followed by \\n",
        "source": a.ids.display().to_string(),
        "tool_version": tailrank::TOOL_VERSION,
    });
    let text = serde_json::to_string_pretty(&manifest)? + "\n";
    outputs.write(manifest_slot, |p| {
        tailrank::atomic::write_bytes(p, text.as_bytes())
    })?;
    outputs.commit()?;
    println!(
        "sampled {} of {} ids (fraction {}, seed {}) -> {}",
        kept.len(),
        n,
        a.fraction,
        a.seed,
        a.out.display()
    );
    Ok(())
}
