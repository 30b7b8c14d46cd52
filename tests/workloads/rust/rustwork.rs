// rustwork.rs - a Rust workload whose hot function has a mangled name
// (legacy or v0 mangling, chosen with rustc -C symbol-mangling-version).
// The hot function is rustwork::shop::hot_rust_work. Prints "ready PID".
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

fn main() {
    println!("ready {}", std::process::id());
    let mut acc = 1u64;
    loop {
        acc = std::hint::black_box(shop::hot_rust_work(std::hint::black_box(acc)));
    }
}
