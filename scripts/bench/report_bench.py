#!/usr/bin/python3
"""report_bench.py - time `profcap report` (and `profcap flamegraph`) on a big
synthetic capture: 1,000,000 Sample messages over 50,000 distinct stacks.

Usage: scripts/bench/report_bench.py [--samples N] [--stacks N] [--runs N]
                                     [--file PATH] [--keep]

The capture is generated with the Python protobuf modules that
tests/e2e/otlp_check.py generates from our .proto files (run the e2e tests
or otlp_check.py once if tests/e2e/gen/ours is missing). Every (stack,
thread) pair is distinct, so the profile model holds all 1M samples: 4
processes x 5 threads, stacks 4-40 frames deep drawn from a call tree over
5,000 functions, some kernel frames. Each command runs --runs times; the
script prints the median wall time and the largest peak RSS, and exits 1 when
`report` misses the targets (< 1 s, < 100 MB). Peak RSS is the child's
ru_maxrss; the capture is generated in a separate process so that this
script stays small when it forks the measured commands.
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROFCAP = os.path.join(REPO, "build", "profcap")
GEN = os.path.join(REPO, "tests", "e2e", "gen", "ours")

TARGET_SECONDS = 1.0
TARGET_RSS_MB = 100.0


def generate(path, nsamples, nstacks, seed=1):
    sys.path.insert(0, GEN)
    from opentelemetry.proto.profiles.v1development import profiles_pb2 as pb

    rnd = random.Random(seed)
    data = pb.ProfilesData()
    d = data.dictionary
    strings = {}

    def s(v):
        if v not in strings:
            strings[v] = len(d.string_table)
            d.string_table.append(v)
        return strings[v]

    s("")
    d.mapping_table.add()
    d.location_table.add()
    d.function_table.add()
    d.link_table.add()
    d.attribute_table.add()
    d.stack_table.add()
    d.mapping_table.add(memory_start=0x400000, memory_limit=0x9000000, filename_strindex=s("/usr/bin/bench"))
    d.mapping_table.add(memory_start=0xffffffff81000000, memory_limit=0xffffffff83000000,
                        filename_strindex=s("[kernel.kallsyms]"))
    native = len(d.attribute_table)
    d.attribute_table.add(key_strindex=s("profile.frame.type")).value.string_value = "native"
    kernel = len(d.attribute_table)
    d.attribute_table.add(key_strindex=s("profile.frame.type")).value.string_value = "kernel"

    nfuncs, nkfuncs = 5000, 300
    for i in range(nfuncs + nkfuncs):
        name = (f"ns{i % 37}::Class{i % 101}::method_{i}(int, std::string const&)" if i < nfuncs
                else f"kernel_fn_{i}")
        d.function_table.add(name_strindex=s(name), system_name_strindex=s(name))
        kern = i >= nfuncs
        loc = d.location_table.add(mapping_index=2 if kern else 1,
                                   address=(0xffffffff81000000 if kern else 0x400000) + 16 * i)
        loc.lines.add(function_index=i + 1)
        loc.attribute_indices.append(kernel if kern else native)
    # Stacks: random walks down a call tree (each function calls a few
    # others), so stacks share prefixes as real ones do. Leaf first.
    callees = [[rnd.randrange(1, nfuncs) for _ in range(6)] for _ in range(nfuncs)]
    seen = set()
    while len(d.stack_table) <= nstacks:
        depth = rnd.randint(4, 40)
        f = 0
        chain = [1]
        for _ in range(depth - 1):
            f = rnd.choice(callees[f])
            chain.append(f + 1)
        if rnd.random() < 0.2:
            chain += [nfuncs + 1 + rnd.randrange(nkfuncs) for _ in range(rnd.randint(2, 8))]
        key = tuple(reversed(chain))
        if key in seen:
            continue
        seen.add(key)
        d.stack_table.add(location_indices=key)

    nprocs, nthreads = 4, 5
    tid_attr = []
    for t in range(nprocs * nthreads):
        idx = len(d.attribute_table)
        d.attribute_table.add(key_strindex=s("thread.id")).value.int_value = 1000 + t
        d.attribute_table.add(key_strindex=s("thread.name")).value.string_value = f"worker-{t}"
        tid_attr.append((idx, idx + 1))
    profs = []
    for p in range(nprocs):
        rp = data.resource_profiles.add()
        kv = rp.resource.attributes.add(key="process.pid")
        kv.value.int_value = 100 + p
        kv = rp.resource.attributes.add(key="process.executable.name")
        kv.value.string_value = f"bench{p}"
        prof = rp.scope_profiles.add().profiles.add(time_unix_nano=int(time.time() * 1e9),
                                                    duration_nano=60 * 10**9, period=10101010)
        prof.sample_type.type_strindex = s("samples")
        prof.sample_type.unit_strindex = s("count")
        prof.period_type.type_strindex = s("cpu")
        prof.period_type.unit_strindex = s("nanoseconds")
        profs.append(prof)
    for i in range(nsamples):
        t = (i // nstacks) % (nprocs * nthreads)
        smp = profs[t // nthreads].samples.add(stack_index=1 + i % nstacks, values=[1 + (i % 3)])
        smp.attribute_indices.extend(tid_attr[t])
    with open(path, "wb") as f:
        f.write(data.SerializeToString())


def measure(args, runs):
    """Median wall seconds and max peak RSS (MB) of `profcap ARGS`."""
    walls, rss = [], []
    for _ in range(runs):
        t0 = time.monotonic()
        proc = subprocess.Popen([PROFCAP] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.monotonic() - t0)
        rss.append(usage.ru_maxrss / 1024.0)
        err = proc.stderr.read().decode()
        proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            sys.exit(f"profcap {' '.join(args)} failed ({proc.returncode}): {err}")
    return statistics.median(walls), max(rss)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--stacks", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--file", help="capture to use (generated when missing)")
    ap.add_argument("--keep", action="store_true", help="keep the generated capture")
    ap.add_argument("--generate-only", metavar="PATH", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.generate_only:
        generate(a.generate_only, a.samples, a.stacks)
        return 0
    if not os.path.exists(PROFCAP):
        sys.exit("build/profcap is missing: run ./build.sh")
    tmp = tempfile.mkdtemp(prefix="profcap-bench-")
    path = a.file or os.path.join(tmp, "bench.pb")
    if not os.path.exists(path):
        # In a child process: a fork of this process after building 1M
        # samples in Python would start with its ~250 MB resident, and the
        # kernel keeps that in the child's ru_maxrss across exec.
        t0 = time.monotonic()
        subprocess.run([sys.executable, os.path.abspath(__file__), "--generate-only", path,
                        "--samples", str(a.samples), "--stacks", str(a.stacks)], check=True)
        print(f"generated {path}: {os.path.getsize(path) / 1e6:.1f} MB, {a.samples} samples, "
              f"{a.stacks} stacks in {time.monotonic() - t0:.1f} s")
    svg = os.path.join(tmp, "bench.svg")
    results = [("report", ["report", path]),
               ("report --json --inclusive", ["report", path, "--json", "--inclusive"]),
               ("flamegraph", ["flamegraph", path, "-o", svg])]
    ok = True
    for name, args in results:
        wall, rss = measure(args, a.runs)
        line = f"{name:28s} median {wall * 1000:7.0f} ms   peak RSS {rss:6.1f} MB   ({a.runs} runs)"
        if name.startswith("report"):
            hit = wall < TARGET_SECONDS and rss < TARGET_RSS_MB
            ok &= hit
            line += "   OK" if hit else f"   MISSES the target (< {TARGET_SECONDS} s, < {TARGET_RSS_MB} MB)"
        else:
            line += f"   SVG {os.path.getsize(svg) / 1e6:.1f} MB"
        print(line)
    if not a.keep and not a.file:
        os.unlink(path)
    if os.path.exists(svg):
        os.unlink(svg)
    os.rmdir(tmp) if not os.listdir(tmp) else None
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
