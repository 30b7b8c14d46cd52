// rustwork.rs - a Rust workload whose hot function has a mangled name
// (legacy or v0 mangling, chosen with rustc -C symbol-mangling-version).
// The hot function is rustwork::shop::hot_rust_work. Prints "ready PID".
use std::sync::atomic::{AtomicU64, Ordering};

mod shop {
    #[inline(never)]
    pub fn hot_rust_work(seed: u64) -> u64 {
        let mut x = seed;
        for _ in 0..2_000_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        }
        x
    }
}

// An atomic, not std::hint::black_box (Rust 1.66+; bookworm has 1.63).
static SINK: AtomicU64 = AtomicU64::new(1);

fn main() {
    println!("ready {}", std::process::id());
    loop {
        let seed = SINK.load(Ordering::Relaxed);
        SINK.store(shop::hot_rust_work(seed), Ordering::Relaxed);
    }
}
