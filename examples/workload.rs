//! Small workloads that reproduce, on Linux, the slowdowns of the stories
//! `tardy explain` is tested on. Used by tests/explain.rs and bench/explain.sh;
//! handy for trying `tardy explain` by hand:
//!
//!   workload sleeps 100 1           a "suite" of 100 tests that each sleep 1 ms
//!   workload spawn 50 PROGRAM ...   start PROGRAM 50 times, one after another
//!   workload fsync 200 DIR          write 4 KiB and fsync, 200 times, in DIR
//!   workload fsync-raw 200 DIR      the same through the system call itself,
//!                                   not libc's wrapper (as Go programs do)
//!   workload lock 20000 SPIN        four threads share a lock, spinning SPIN
//!                                   pause-loops (up to 20 times) before parking
//!   workload handoff ROUNDS SPIN    two threads pass a baton ROUNDS times; the
//!                                   waiter checks for it every SPIN pauses,
//!                                   20,000 pauses in all, then parks
//!                                   (Skylake-SP's story)
//!   workload compute N              N units of single-threaded arithmetic
//!   workload hog SECS THREADS       burn CPU on THREADS threads for SECS
//!   workload parallel THREADS N     N units of arithmetic on each of THREADS
//!                                   threads (joined at the end, no lock)
//!   workload mutex THREADS N        THREADS threads each take one mutex N times
//!   workload pingpong PAIRS N       PAIRS pairs of threads hand a byte back
//!                                   and forth N times over a socket pair (a
//!                                   storm of wake-ups: millions of events)
//!   workload chatter LINES          print LINES lines to stdout and to
//!                                   stderr, after reading stdin to its end

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> T {
    match args.get(i).and_then(|s| s.parse().ok()) {
        Some(v) => v,
        None => {
            eprintln!("workload: expected {what} as argument {i}");
            std::process::exit(2);
        }
    }
}

fn compute(units: u64) -> u64 {
    let mut x: u64 = 1;
    for i in 0..units * 100_000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    x
}

fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: FUTEX_WAIT_PRIVATE on a live aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

fn futex_wake_one(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE_PRIVATE on a live aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        );
    }
}

/// Four threads share one lock, as .NET's AwareLock: a thread that finds it
/// taken spins `spin` pause instructions, up to 20 times, then parks on a
/// futex; unlocking wakes one parked thread. Longer spins (a slower PAUSE)
/// burn more CPU and notice a released lock later; fewer threads park.
fn lock(handoffs: u64, spin: u64) {
    const THREADS: u64 = 4;
    // 0: free; 1: taken; 2: taken, with threads parked.
    let state = Arc::new(AtomicU32::new(0));
    let sink = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let state = Arc::clone(&state);
            let sink = Arc::clone(&sink);
            std::thread::spawn(move || {
                for _ in 0..handoffs / THREADS {
                    let mut got = false;
                    for _ in 0..20 {
                        if state
                            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                            .is_ok()
                        {
                            got = true;
                            break;
                        }
                        for _ in 0..spin {
                            std::hint::spin_loop();
                        }
                    }
                    while !got {
                        if state.swap(2, Ordering::Acquire) == 0 {
                            got = true;
                        } else {
                            futex_wait(&state, 2);
                        }
                    }
                    let mut x = 0u64;
                    for i in 0..2_000 {
                        x = x.wrapping_add(std::hint::black_box(i) * i);
                    }
                    sink.fetch_add(x, Ordering::Relaxed);
                    if state.swap(0, Ordering::Release) == 2 {
                        futex_wake_one(&state);
                    }
                    for i in 0..500 {
                        x = x.wrapping_add(std::hint::black_box(i));
                    }
                    sink.fetch_add(x, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    println!("{}", sink.load(Ordering::Relaxed));
}

/// `n` PAUSE instructions in one loop of this function, as an optimised
/// spin-wait compiles, in a debug build too (where `std::hint::spin_loop`
/// stays a call of its own).
fn pauses(n: u64) {
    let mut k = 0;
    while k < n {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: PAUSE has no operands and touches no memory.
        unsafe {
            std::arch::asm!("pause", options(nomem, nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "x86_64"))]
        std::hint::spin_loop();
        k += 1;
    }
}

/// Skylake-SP's producer and consumer: two threads pass a baton `rounds`
/// times. The holder works 20 µs (every 32nd time 0.5 ms) and
/// hands it over; the waiter checks for it after every `spin` PAUSE
/// instructions, 20,000 PAUSEs in all (a .NET lock's budget), then parks on
/// a futex. More PAUSEs a check (or a PAUSE that takes longer, as
/// Skylake-SP's) make the waiter notice the baton later and burn more CPU
/// spinning; it parks no more often (when the holder's long work outlasts
/// the budget).
fn handoff(rounds: u64, spin: u64) {
    let turn = Arc::new(AtomicU32::new(0));
    let parked = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
    let threads: Vec<_> = (0..2u32)
        .map(|me| {
            let (turn, parked) = (Arc::clone(&turn), Arc::clone(&parked));
            std::thread::spawn(move || {
                let mut x = 0u64;
                for i in 0..rounds / 2 {
                    let mut got = turn.load(Ordering::Acquire) == me;
                    let mut checks = 0;
                    while !got && checks < (20_000 / spin.max(1)).max(1) {
                        pauses(spin);
                        got = turn.load(Ordering::Acquire) == me;
                        checks += 1;
                    }
                    while !got {
                        parked[me as usize].store(1, Ordering::SeqCst);
                        if turn.load(Ordering::SeqCst) != me {
                            futex_wait(&turn, 1 - me);
                        }
                        parked[me as usize].store(0, Ordering::SeqCst);
                        got = turn.load(Ordering::Acquire) == me;
                    }
                    // Work by the clock, the same in a debug build.
                    let work = Duration::from_micros(if i % 32 == 31 { 500 } else { 20 });
                    let t0 = Instant::now();
                    while t0.elapsed() < work {
                        x = x.wrapping_add(std::hint::black_box(i));
                    }
                    turn.store(1 - me, Ordering::SeqCst);
                    if parked[(1 - me) as usize].load(Ordering::SeqCst) == 1 {
                        futex_wake_one(&turn);
                    }
                }
                x
            })
        })
        .collect();
    let mut x = 0u64;
    for t in threads {
        x = x.wrapping_add(t.join().unwrap_or(0));
    }
    println!("{x}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("sleeps") => {
            let n: u64 = arg(&args, 2, "a count");
            let ms: f64 = arg(&args, 3, "milliseconds");
            for _ in 0..n {
                std::thread::sleep(Duration::from_secs_f64(ms / 1000.0));
            }
        }
        Some("spawn") => {
            let n: u64 = arg(&args, 2, "a count");
            let Some(program) = args.get(3) else {
                eprintln!("workload spawn: give a program");
                std::process::exit(2);
            };
            for _ in 0..n {
                // TARDY_PROBE_NOOP makes tardy's own binary exit at once, so it
                // can be the large program, as in `tardy doctor`'s spawn probe.
                let status = std::process::Command::new(program)
                    .args(&args[4..])
                    .env("TARDY_PROBE_NOOP", "1")
                    .status();
                if !status.is_ok_and(|s| s.success()) {
                    eprintln!("workload spawn: {program} failed");
                    std::process::exit(1);
                }
            }
        }
        Some(mode @ ("fsync" | "fsync-raw")) => {
            let n: u64 = arg(&args, 2, "a count");
            let dir: String = arg(&args, 3, "a directory");
            let path =
                std::path::Path::new(&dir).join(format!("workload-fsync-{}", std::process::id()));
            let mut f = match std::fs::File::create(&path) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("workload fsync: {}: {e}", path.display());
                    std::process::exit(1);
                }
            };
            let block = [7u8; 4096];
            for _ in 0..n {
                let _ = f.write_all(&block);
                if mode == "fsync-raw" {
                    use std::os::fd::AsRawFd;
                    // SAFETY: fdatasync on a descriptor this function owns.
                    unsafe { libc::syscall(libc::SYS_fdatasync, f.as_raw_fd()) };
                } else {
                    let _ = f.sync_data();
                }
            }
            let _ = std::fs::remove_file(&path);
        }
        Some("lock") => lock(
            arg(&args, 2, "a hand-off count"),
            arg(&args, 3, "a spin count"),
        ),
        Some("handoff") => handoff(
            arg(&args, 2, "a round count"),
            arg(&args, 3, "a spin count"),
        ),
        Some("compute") => println!("{}", compute(arg(&args, 2, "a unit count"))),
        Some("parallel") => {
            let threads: u64 = arg(&args, 2, "a thread count");
            let units: u64 = arg(&args, 3, "a unit count");
            let workers: Vec<_> = (0..threads)
                .map(|_| std::thread::spawn(move || compute(units)))
                .collect();
            let mut x = 0u64;
            for w in workers {
                x = x.wrapping_add(w.join().unwrap_or(0));
            }
            println!("{x}");
        }
        Some("pingpong") => {
            use std::io::Read;
            use std::os::unix::net::UnixStream;
            let pairs: u64 = arg(&args, 2, "a pair count");
            let n: u64 = arg(&args, 3, "a count");
            let mut threads = Vec::new();
            for _ in 0..pairs {
                let Ok((mut a, mut b)) = UnixStream::pair() else {
                    eprintln!("workload pingpong: no socket pair");
                    std::process::exit(1);
                };
                threads.push(std::thread::spawn(move || {
                    let mut c = [0u8; 1];
                    for _ in 0..n {
                        if a.write_all(&c).is_err() || a.read_exact(&mut c).is_err() {
                            break;
                        }
                    }
                }));
                threads.push(std::thread::spawn(move || {
                    let mut c = [0u8; 1];
                    for _ in 0..n {
                        if b.read_exact(&mut c).is_err() || b.write_all(&c).is_err() {
                            break;
                        }
                    }
                }));
            }
            for t in threads {
                let _ = t.join();
            }
        }
        Some("mutex") => {
            let threads: u64 = arg(&args, 2, "a thread count");
            let n: u64 = arg(&args, 3, "a count");
            let m = Arc::new(std::sync::Mutex::new(0u64));
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let m = Arc::clone(&m);
                    std::thread::spawn(move || {
                        for i in 0..n {
                            if let Ok(mut g) = m.lock() {
                                *g = g.wrapping_add(compute(0) + i);
                            }
                        }
                    })
                })
                .collect();
            for w in workers {
                let _ = w.join();
            }
            println!("{}", m.lock().map(|g| *g).unwrap_or(0));
        }
        Some("chatter") => {
            let lines: u64 = arg(&args, 2, "a line count");
            let mut input = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut input);
            let out = std::io::stdout();
            let mut out = std::io::BufWriter::new(out.lock());
            for i in 0..lines {
                let _ = writeln!(
                    out,
                    "line {i} of {lines}, after {} bytes of stdin",
                    input.len()
                );
                if i % 4 == 0 {
                    eprintln!("warning {i}");
                }
            }
        }
        Some("hog") => {
            let secs: f64 = arg(&args, 2, "seconds");
            let n: usize = arg(&args, 3, "a thread count");
            let end = Instant::now() + Duration::from_secs_f64(secs);
            let hogs: Vec<_> = (0..n)
                .map(|_| {
                    std::thread::spawn(move || {
                        let mut x = 0u64;
                        while Instant::now() < end {
                            x = x.wrapping_add(compute(1));
                        }
                        x
                    })
                })
                .collect();
            for h in hogs {
                let _ = h.join();
            }
        }
        _ => {
            eprintln!(
                "usage: workload sleeps|spawn|fsync|fsync-raw|lock|handoff|compute|hog|parallel|mutex|pingpong|chatter ARGS (see the source)"
            );
            std::process::exit(2);
        }
    }
}
