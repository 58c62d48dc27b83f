// SPDX-License-Identifier: MIT
//! atomtab-sc-bench - bench/threads.c's workloads and bench/latency.c's
//! reader-latency test run against Servo's string_cache (`DefaultAtom`,
//! i.e. `Atom<EmptyStaticAtomSet>`), so `make bench-lifecycle` can quote
//! atomtab/string_cache ratios measured in the same run.
//!
//! The process-wide set is warmed as atomthreads warms its table: every
//! distinct token of the file interned once and held. An op is
//! `DefaultAtom::from(&str)` and the drop of what it returned. Modes, as
//! in threads.c:
//!   hit    each thread walks the token stream from its own offset
//!   same   every thread hits the same 4 atoms (the file's first 4 tokens;
//!          on the bundled corpus html, lang, head, meta: inline atoms here,
//!          static ones in atomtab, so neither touches a count)
//!   samedyn  as `same`, on 4 dynamic atoms ("samedyn-atom-0".."3",
//!          interned and held with the warm-up); run when --modes names it
//!   mix    7 ops in 8 as `hit`; the 8th interns a new string (thread id
//!          and a counter, "mix-ID-N") and drops it at once
//! Each figure is the median of --reps runs of --ms milliseconds, run in
//! turns: one run of every thread count, then the next.
//! cpu-ns/op is the threads' CPU time (CLOCK_THREAD_CPUTIME_ID) per op.
//!
//! --latency: one reader thread does batches of 64 hits (intern + drop of
//! corpus tokens), each batch timed with Instant; (a) alone, (b) while
//! --churners threads (1 by default) intern and drop new strings
//! ("churn-C-N") in a loop. Prints p50, p99, p99.9, p99.99 and max ns per
//! batch, and the ratio p99.99(churn) / p99.99(alone).
//!
//! --peer NAME: a child of bench/peers.c, one peer's one-thread workloads
//! (peers.rs); --versions: the crate and compiler versions it was built
//! with, on one line.
//!
//! usage: atomtab-sc-bench [--threads 1,2,4,8,16] [--ms 300] [--reps 3]
//!                         [--modes hit,same,mix] [--json] FILE
//!        atomtab-sc-bench --latency [--batches 2000000] [--churners 1] [--json] FILE
//!        atomtab-sc-bench --peer string_cache|ustr|lasso [--limit N] FILE
//!        atomtab-sc-bench --versions

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use string_cache::DefaultAtom;

mod peers;

const SC_VERSION: &str = env!("SC_VERSION");

const MODES: [&str; 4] = ["hit", "same", "mix", "samedyn"];
const SAMEDYN: [&str; 4] = [
    "samedyn-atom-0",
    "samedyn-atom-1",
    "samedyn-atom-2",
    "samedyn-atom-3",
];
const BATCH: usize = 64; // hits per timed batch, as bench/latency.c
const CHURN_HEAD_START: u64 = 20_000; // churn ops before the reader starts

/// Keeps the optimiser from dropping an atom it could compute away: atoms
/// of 7 bytes or fewer never touch the set, so an unused one is dead code.
#[inline(always)]
fn keep(a: &DefaultAtom) {
    // SAFETY: reads one byte of a live, initialised 8-byte value.
    unsafe { std::ptr::read_volatile((a as *const DefaultAtom).cast::<u8>()) };
}

/// One op: intern a string and drop the atom (a transient atom).
#[inline(always)]
fn hit_op(s: &str) {
    let a = DefaultAtom::from(s);
    keep(&a);
}

/// This thread's CPU time in seconds.
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The new string of a `mix` op ("mix-ID-N") or of churning thread ID
/// ("churn-ID-N") in `buf`, formatted as bench/threads.c and
/// bench/latency.c format it: by the C library's snprintf, so both sides
/// pay the same ~50 ns per new string (Rust's write! takes ~16 ns here).
fn fresh_name(buf: &mut [u8; 64], mix: bool, id: usize, n: u64) -> &str {
    let p = buf.as_mut_ptr().cast::<libc::c_char>();
    // SAFETY: NUL-terminated formats whose arguments match their
    // conversions; snprintf writes at most buf.len() bytes.
    let len = unsafe {
        libc::snprintf(
            p,
            buf.len(),
            if mix { c"mix-%d-%zu" } else { c"churn-%d-%zu" }.as_ptr(),
            id as libc::c_int,
            n as libc::size_t,
        )
    };
    // SAFETY: snprintf wrote `len` (< 64) bytes of ASCII.
    unsafe { std::str::from_utf8_unchecked(&buf[..len as usize]) }
}

/// The token file, one token per line, empty lines skipped (bench/tokens.h).
fn load(path: &str) -> Vec<&'static str> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| die(&format!("{path}: {e}")));
    let text: &'static str = match String::from_utf8(bytes) {
        Ok(s) => Box::leak(s.into_boxed_str()),
        Err(_) => die(&format!("{path}: not UTF-8 (string_cache atoms are &str)")),
    };
    text.split('\n').filter(|s| !s.is_empty()).collect()
}

fn die(msg: &str) -> ! {
    eprintln!("atomtab-sc-bench: {msg}");
    std::process::exit(1)
}

struct Shared<'a> {
    k: &'a [&'static str],
    mode: usize,
    nthreads: usize,
    go: AtomicBool,
    stop: AtomicBool,
}

/// One worker of a timed run: (ops, CPU seconds).
fn work(sh: &Shared, id: usize) -> (u64, f64) {
    let k = sh.k;
    let mut i = k.len() / sh.nthreads * id;
    let (mut ops, mut fresh) = (0u64, 0u64);
    let mut buf = [0u8; 64];
    while !sh.go.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    let c0 = thread_cpu_s();
    while !sh.stop.load(Ordering::Relaxed) {
        for _ in 0..256 {
            if sh.mode == 1 {
                hit_op(k[(ops & 3) as usize]);
            } else if sh.mode == 3 {
                hit_op(SAMEDYN[(ops & 3) as usize]);
            } else if sh.mode == 2 && ops & 7 == 7 {
                hit_op(fresh_name(&mut buf, true, id, fresh)); // new, then freed
                fresh += 1;
            } else {
                hit_op(k[i]);
                i += 1;
                if i == k.len() {
                    i = 0;
                }
            }
            ops += 1;
        }
    }
    (ops, thread_cpu_s() - c0)
}

/// One timed run: Mops/s (wall clock) and CPU ns per op over all threads.
fn run(k: &[&'static str], mode: usize, nthreads: usize, ms: u64) -> (f64, f64) {
    let sh = Shared {
        k,
        mode,
        nthreads,
        go: AtomicBool::new(false),
        stop: AtomicBool::new(false),
    };
    let (mut ops, mut cpu) = (0u64, 0f64);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..nthreads)
            .map(|id| {
                let sh = &sh;
                s.spawn(move || work(sh, id))
            })
            .collect();
        sh.go.store(true, Ordering::Release);
        std::thread::sleep(Duration::from_millis(ms));
        sh.stop.store(true, Ordering::Relaxed);
        for h in hs {
            let (o, c) = h.join().unwrap();
            ops += o;
            cpu += c;
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    (
        ops as f64 / secs / 1e6,
        if ops > 0 { cpu * 1e9 / ops as f64 } else { 0.0 },
    )
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':').map(|(_, m)| m.trim().to_string()))
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn nproc() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn throughput(
    k: &[&'static str],
    path: &str,
    threads: &[usize],
    modes: &[usize],
    ms: u64,
    reps: usize,
    json: bool,
) {
    let ncpu = nproc();
    if json {
        print!("{{\"impl\": \"string_cache\", \"version\": \"{SC_VERSION}\", \"machine\": {{\"nproc\": {ncpu}, \"cpu\": \"{}\"}}, \
                \"file\": \"{path}\", \"ms\": {ms}, \"reps\": {reps}, \"unit\": \"Mops/s\", \"results\": [",
               cpu_model());
    } else {
        println!(
            "atomtab-sc-bench: {ncpu} CPUs, {}; {path}, {} tokens; median of {reps} x {ms} ms; \
                  op = DefaultAtom::from + drop (string_cache {SC_VERSION})",
            cpu_model(),
            k.len()
        );
        println!(
            "{:<7} {:>7} {:>10} {:>8} {:>10}",
            "mode", "threads", "Mops/s", "scaling", "cpu-ns/op"
        );
    }
    let mut first = true;
    for &m in modes {
        let mut base = 0.0;
        // rep r of every thread count before rep r + 1 of any, as bench/threads.c
        let mut runs: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); threads.len()];
        for _ in 0..reps {
            for (j, &n) in threads.iter().enumerate() {
                let (mops, cpu) = run(k, m, n, ms);
                runs[j].0.push(mops);
                runs[j].1.push(cpu);
            }
        }
        for (j, &n) in threads.iter().enumerate() {
            let (v, cv) = &mut runs[j];
            let (med, cmed) = (median(v), median(cv));
            if j == 0 {
                base = med / n as f64; // per thread, in case the list skips 1
            }
            if json {
                print!("{}\n  {{\"mode\": \"{}\", \"threads\": {n}, \"mops\": {med:.3}, \"min\": {:.3}, \
                        \"max\": {:.3}, \"scaling\": {:.3}, \"cpu_ns_per_op\": {cmed:.2}}}",
                       if first { "" } else { "," }, MODES[m], v[0], v[reps - 1], med / base);
            } else {
                println!(
                    "{:<7} {n:>7} {med:>10.2} {:>7.2}x {cmed:>10.1}{}",
                    MODES[m],
                    med / base,
                    if n > ncpu {
                        "  (more threads than CPUs)"
                    } else {
                        ""
                    }
                );
            }
            first = false;
        }
    }
    if json {
        println!("\n]}}");
    }
}

/// Batch times (ns) of one reader: `batches` timed batches of BATCH hits,
/// after batches/100 untimed ones; meanwhile `churners` threads (none:
/// the reader alone) intern and drop new strings. Returns the sorted
/// times and the churning threads' op count.
fn latency_phase(k: &[&'static str], batches: usize, churners: usize) -> (Vec<u64>, u64) {
    let churn = churners > 0;
    let stop = AtomicBool::new(false);
    let churned = AtomicU64::new(0);
    let mut times = vec![0u64; batches];
    std::thread::scope(|s| {
        for id in 0..churners {
            let (stop, churned) = (&stop, &churned);
            s.spawn(move || {
                let mut buf = [0u8; 64];
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        hit_op(fresh_name(&mut buf, false, id, n));
                        n += 1;
                    }
                    churned.fetch_add(256, Ordering::Relaxed);
                }
            });
        }
        let reader = s.spawn(|| {
            while churn && churned.load(Ordering::Relaxed) < CHURN_HEAD_START {
                std::hint::spin_loop();
            }
            let mut i = 0usize;
            let mut batch = || {
                let t0 = Instant::now();
                for _ in 0..BATCH {
                    hit_op(k[i]);
                    i += 1;
                    if i == k.len() {
                        i = 0;
                    }
                }
                t0.elapsed().as_nanos() as u64
            };
            for _ in 0..batches / 100 {
                batch();
            }
            for t in times.iter_mut() {
                *t = batch();
            }
        });
        reader.join().unwrap();
        stop.store(true, Ordering::Relaxed);
    });
    times.sort_unstable();
    (times, churned.load(Ordering::Relaxed))
}

/// Nearest-rank percentile of sorted `v`.
fn pct(v: &[u64], p: f64) -> u64 {
    let r = (p * v.len() as f64).ceil() as usize;
    v[r.clamp(1, v.len()) - 1]
}

const PCTS: [(&str, f64); 5] = [
    ("p50", 0.50),
    ("p99", 0.99),
    ("p999", 0.999),
    ("p9999", 0.9999),
    ("max", 1.0),
];

fn latency(k: &[&'static str], path: &str, batches: usize, churners: usize, json: bool) {
    let (alone, _) = latency_phase(k, batches, 0);
    let (churn, churned) = latency_phase(k, batches, churners);
    let ratio = pct(&churn, 0.9999) as f64 / pct(&alone, 0.9999) as f64;
    if json {
        let obj = |v: &[u64]| {
            PCTS.iter()
                .map(|(n, p)| format!("\"{n}\": {}", pct(v, *p)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "{{\"impl\": \"string_cache\", \"version\": \"{SC_VERSION}\", \
                  \"machine\": {{\"nproc\": {}, \"cpu\": \"{}\"}}, \
                  \"file\": \"{path}\", \"batches\": {batches}, \"batch\": {BATCH}, \
                  \"churners\": {churners}, \"unit\": \"ns\",\n  \
                  \"alone\": {{{}}},\n  \"churn\": {{{}, \"churn_ops\": {churned}}},\n  \
                  \"ratio_p9999\": {ratio:.3}}}",
            nproc(),
            cpu_model(),
            obj(&alone),
            obj(&churn)
        );
    } else {
        println!(
            "latency: string_cache {SC_VERSION}; {path}; {batches} batches of {BATCH} hits \
                  (DefaultAtom::from + drop), ns per batch; {churners} churning thread(s)"
        );
        println!(
            "{:<6} {:>8} {:>8} {:>8} {:>8} {:>9} {:>12}",
            "phase", "p50", "p99", "p99.9", "p99.99", "max", "churn ops"
        );
        for (name, v, c) in [("alone", &alone, 0), ("churn", &churn, churned)] {
            print!("{name:<6}");
            for (_, p) in PCTS {
                print!(" {:>8}", pct(v, p));
            }
            println!(" {c:>12}");
        }
        println!("p99.99 churn/alone: {ratio:.2}x");
    }
}

fn usage() -> ! {
    eprintln!("usage: atomtab-sc-bench [--threads 1,2,4,8,16] [--ms 300] [--reps 3] [--modes hit,same,mix] [--json] FILE\n       \
               atomtab-sc-bench --latency [--batches 2000000] [--churners 1] [--json] FILE\n       \
               atomtab-sc-bench --peer string_cache|ustr|lasso [--limit N] FILE\n       \
               atomtab-sc-bench --versions");
    std::process::exit(2)
}

fn num<T: std::str::FromStr>(s: Option<String>) -> T {
    s.and_then(|s| s.parse().ok()).unwrap_or_else(|| usage())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut threads, mut modes) = ("1,2,4,8,16".to_string(), "hit,same,mix".to_string());
    let (mut ms, mut reps, mut batches, mut json, mut lat) =
        (300u64, 3usize, 2_000_000usize, false, false);
    let (mut churners, mut limit, mut peer) = (1usize, usize::MAX, None::<String>);
    let mut file = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = num(args.next()),
            "--modes" => modes = num(args.next()),
            "--ms" => ms = num(args.next()),
            "--reps" => reps = num(args.next()),
            "--batches" => batches = num(args.next()),
            "--json" => json = true,
            "--latency" => lat = true,
            "--churners" => churners = num(args.next()),
            "--peer" => peer = Some(num(args.next())),
            "--limit" => limit = num(args.next()),
            "--versions" => return peers::versions(),
            _ if a.starts_with("--") || file.is_some() => usage(),
            _ => file = Some(a),
        }
    }
    let threads: Vec<usize> = threads
        .split(',')
        .filter_map(|t| t.parse().ok())
        .filter(|t| (1..=1024).contains(t))
        .collect();
    let modes: Vec<usize> = modes
        .split(',')
        .filter_map(|m| MODES.iter().position(|x| *x == m))
        .collect();
    let path = file.unwrap_or_else(|| usage());
    if threads.is_empty()
        || modes.is_empty()
        || ms < 1
        || !(1..=99).contains(&reps)
        || batches < 100
        || !(1..=1024).contains(&churners)
    {
        usage();
    }
    let k = load(&path);
    if let Some(name) = peer {
        return peers::child(&name, &k, limit); // a fresh process: nothing interned yet
    }
    if k.len() < 4 {
        die(&format!("{path} has fewer than 4 tokens"));
    }
    let distinct: HashSet<&str> = k.iter().copied().collect();
    let mut held: Vec<DefaultAtom> = distinct.into_iter().map(DefaultAtom::from).collect(); // warm: each held once
    if modes.contains(&3) {
        held.extend(SAMEDYN.iter().map(|&s| DefaultAtom::from(s)));
    }
    if lat {
        latency(&k, &path, batches, churners, json);
    } else {
        throughput(&k, &path, &threads, &modes, ms, reps, json);
    }
    drop(held);
}
