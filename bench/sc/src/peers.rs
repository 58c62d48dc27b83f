// SPDX-License-Identifier: MIT
//! The Rust side of bench/peers.c (`make bench-peers`): one peer, one
//! token file, one fresh process, the same workloads as peers.c's C
//! backends and the same one-line answer, so the driver interleaves Rust
//! and C children and compares them in one run.
//!
//! Peers, each as a new user calls it:
//!   string_cache  `DefaultAtom::from(&str)`; its release is the drop.
//!                 Without release (stream, hit) the atom is forgotten,
//!                 as atomtab's reference is kept: the count stays up
//!   ustr          `Ustr::from(&str)`: one process-wide cache, no release
//!   lasso         `Rodeo::get_or_intern(&str)` on one `Rodeo` (lasso's
//!                 single-threaded interner, default features), no release
//! Workloads (ns per op; each token is a NUL-free &str of the file):
//!   stream  a fresh table, every token in file order (ustr's and
//!           string_cache's process-wide sets are made before the clock,
//!           empty, as a C backend's table is)
//!   bytes   the heap's growth over the stream: glibc's mallinfo2()
//!           uordblks + hblkhd after it less before the first intern
//!   hit     the same ops again, no release
//!   hitrel  each op an intern and its release (peers without a release:
//!           the intern alone, what their host does)
//!   mix     as hitrel, but every 8th op interns a new string ("mix-0-N",
//!           formatted by the C library's snprintf as peers.c formats it)
//!           instead of the next token
//!   mixpre  mix with its new strings ("mix-1-N") made before the clock
//!
//! usage: atomtab-sc-bench --peer NAME FILE [--limit N]

use std::hint::black_box;
use std::time::Instant;

use lasso::Rodeo;
use string_cache::DefaultAtom;
use ustr::Ustr;

/// glibc's struct mallinfo2: ten size_t counters.
#[repr(C)]
#[derive(Default)]
struct MallInfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

extern "C" {
    fn mallinfo2() -> MallInfo2;
}

/// Live heap bytes by glibc's count: in-use arena chunks plus mmapped
/// blocks (Rust's System allocator is the C library's malloc).
fn heap_bytes() -> usize {
    // SAFETY: mallinfo2 takes no arguments and returns a plain struct.
    let m = unsafe { mallinfo2() };
    m.uordblks + m.hblkhd
}

/// One peer: intern (returning something to keep alive or to drop) and,
/// where the peer has one, release.
trait Peer {
    fn intern_keep(&mut self, s: &str); // the reference is kept
    fn intern_release(&mut self, s: &str); // interned, then released
}

struct StringCache;
impl Peer for StringCache {
    #[inline(always)]
    fn intern_keep(&mut self, s: &str) {
        std::mem::forget(black_box(DefaultAtom::from(s)));
    }
    #[inline(always)]
    fn intern_release(&mut self, s: &str) {
        drop(black_box(DefaultAtom::from(s)));
    }
}

struct UstrPeer;
impl Peer for UstrPeer {
    #[inline(always)]
    fn intern_keep(&mut self, s: &str) {
        black_box(Ustr::from(s));
    }
    #[inline(always)]
    fn intern_release(&mut self, s: &str) {
        black_box(Ustr::from(s));
    }
}

struct Lasso<S: std::hash::BuildHasher + Clone>(Rodeo<lasso::Spur, S>);
impl<S: std::hash::BuildHasher + Clone> Peer for Lasso<S> {
    #[inline(always)]
    fn intern_keep(&mut self, s: &str) {
        black_box(self.0.get_or_intern(s));
    }
    #[inline(always)]
    fn intern_release(&mut self, s: &str) {
        black_box(self.0.get_or_intern(s));
    }
}

/// "mix-0-N" in buf, by snprintf as peers.c makes it.
fn mix_name(buf: &mut [u8; 64], n: u64) -> &str {
    // SAFETY: a NUL-terminated format whose argument matches; snprintf
    // writes at most buf.len() bytes.
    let len = unsafe {
        libc::snprintf(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"mix-0-%llu".as_ptr(),
            n as libc::c_ulonglong,
        )
    };
    // SAFETY: snprintf wrote `len` (< 64) bytes of ASCII.
    unsafe { std::str::from_utf8_unchecked(&buf[..len as usize]) }
}

#[inline(never)]
fn wl_keep<P: Peer>(p: &mut P, k: &[&str]) -> f64 {
    let t0 = Instant::now();
    for s in k {
        p.intern_keep(s);
    }
    t0.elapsed().as_nanos() as f64 / k.len() as f64
}

#[inline(never)]
fn wl_hitrel<P: Peer>(p: &mut P, k: &[&str]) -> f64 {
    let t0 = Instant::now();
    for s in k {
        p.intern_release(s);
    }
    t0.elapsed().as_nanos() as f64 / k.len() as f64
}

/// k.len() ops; op j % 8 == 7 a new string, the others the next token.
#[inline(never)]
fn wl_mix<P: Peer>(p: &mut P, k: &[&str]) -> f64 {
    let mut buf = [0u8; 64];
    let (mut i, mut fresh) = (0usize, 0u64);
    let t0 = Instant::now();
    for j in 0..k.len() {
        if j & 7 == 7 {
            p.intern_release(mix_name(&mut buf, fresh));
            fresh += 1;
        } else {
            p.intern_release(k[i]);
            i += 1;
        }
    }
    t0.elapsed().as_nanos() as f64 / k.len() as f64
}

/// k.len() ops as wl_mix, the new strings ("mix-1-N") made before the
/// clock (peers.c's mixpre).
#[inline(never)]
fn wl_mixpre<P: Peer>(p: &mut P, k: &[&str]) -> f64 {
    let names: Vec<String> = (0..k.len() / 8 + 1).map(|n| format!("mix-1-{n}")).collect();
    let (mut i, mut fresh) = (0usize, 0usize);
    let t0 = Instant::now();
    for j in 0..k.len() {
        if j & 7 == 7 {
            p.intern_release(&names[fresh]);
            fresh += 1;
        } else {
            p.intern_release(k[i]);
            i += 1;
        }
    }
    t0.elapsed().as_nanos() as f64 / k.len() as f64
}

/// The workloads in peers.c's order; prints its one line.
fn measure<P: Peer>(make: impl FnOnce() -> P, k: &[&str]) {
    let before = heap_bytes();
    let mut p = make();
    let stream = wl_keep(&mut p, k);
    let bytes = heap_bytes().saturating_sub(before);
    let hit = wl_keep(&mut p, k);
    let hitrel = wl_hitrel(&mut p, k);
    let mix = wl_mix(&mut p, k);
    let mixpre = wl_mixpre(&mut p, k);
    println!(
        "stream={stream:.3} bytes={bytes} hit={hit:.3} hitrel={hitrel:.3} mix={mix:.3} \
         mixpre={mixpre:.3} ops={}",
        k.len()
    );
}

/// The versions this binary was built with, for peers.c's header.
pub fn versions() {
    println!(
        "string_cache={} ustr={} lasso={} rustc={}",
        env!("SC_VERSION"),
        env!("USTR_VERSION"),
        env!("LASSO_VERSION"),
        env!("RUSTC_VERSION_STRING").replace(' ', "_")
    );
}

/// `--peer NAME FILE [--limit N]`: runs one peer on the first N tokens
/// (all by default); exits 2 on a name it does not know.
pub fn child(name: &str, k: &[&'static str], limit: usize) {
    let k = &k[..k.len().min(limit)];
    match name {
        // The process-wide sets are made by their first use: made here,
        // before the clock, as a C backend's table is (its bytes counted
        // all the same), and left empty.
        "string_cache" => measure(
            || {
                drop(black_box(DefaultAtom::from("atomtab-sc-bench-set-up")));
                StringCache
            },
            k,
        ),
        "ustr" => measure(
            || {
                black_box(Ustr::from_existing("atomtab-sc-bench-set-up"));
                UstrPeer
            },
            k,
        ),
        "lasso" => measure(|| Lasso(Rodeo::default()), k),
        // lasso's `ahasher` feature, as a per-Rodeo choice
        "lasso-ahash" => measure(|| Lasso(Rodeo::with_hasher(ahash::RandomState::new())), k),
        _ => {
            eprintln!("atomtab-sc-bench: no peer '{name}' (string_cache, ustr, lasso, lasso-ahash)");
            std::process::exit(2)
        }
    }
}
