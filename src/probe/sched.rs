//! Probes of the scheduler: how fast a blocked thread or process wakes up (pipe
//! ping-pong, pinned to one CPU and to two), how fast a lock is handed over (mutex +
//! condition variable, and spin-then-park as in seed 004), and whether this process
//! gets the CPUs it is allowed (steal, cgroup throttling, a busy neighbour).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::result::ProbeResult;
use super::sample::{Budget, Measure, batched, now_ns, pin_to, pin_to_set};

fn allowed_cpus() -> Vec<usize> {
    super::fingerprint::affinity().unwrap_or_default()
}

fn pipe() -> Option<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into our array.
    (unsafe { libc::pipe(fds.as_mut_ptr()) } == 0).then_some(fds)
}

fn close(fd: libc::c_int) {
    // SAFETY: closing a descriptor we own.
    unsafe { libc::close(fd) };
}

fn put(fd: libc::c_int, b: u8) -> bool {
    // SAFETY: writes one byte from our stack.
    unsafe { libc::write(fd, (&b as *const u8).cast(), 1) == 1 }
}

fn get(fd: libc::c_int) -> Option<u8> {
    let mut b = 0u8;
    // SAFETY: reads one byte into our stack.
    (unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) } == 1).then_some(b)
}

/// The echo side of a ping-pong: read a byte, answer it, until 'q'.
fn echo(rx: libc::c_int, tx: libc::c_int) {
    while let Some(b) = get(rx) {
        if b == b'q' || !put(tx, b) {
            break;
        }
    }
}

/// Time `n` round trips over two pipes with a peer (thread or process) echoing.
fn ping(tx: libc::c_int, rx: libc::c_int, budget: &Budget, key: &str, label: &str) -> Measure {
    halved(batched(key, label, budget, |n| {
        for _ in 0..n {
            put(tx, b'x');
            get(rx);
        }
    }))
}

/// A round trip is two hand-offs: per-operation values of half the time.
fn halved(m: Measure) -> Measure {
    let samples = m.samples.iter().map(|v| v / 2.0).collect();
    Measure::new(&m.key, &m.label, &m.unit, m.batch, samples)
}

/// The echoing peer of a ping-pong: a thread, or a forked process.
enum Peer {
    Thread(std::thread::JoinHandle<()>),
    Process(libc::pid_t),
}

/// Ping-pong with a peer pinned to `cpus.1` while this thread is pinned to `cpus.0`.
fn pingpong(
    budget: &Budget,
    processes: bool,
    cpus: (usize, usize),
    key: &str,
    label: &str,
) -> Option<Measure> {
    let (a, b) = (pipe()?, pipe()?);
    let peer = if processes {
        // SAFETY: the child only pins itself, reads, writes and _exits (all
        // async-signal-safe system calls), so forking from a threaded process is sound.
        match unsafe { libc::fork() } {
            0 => {
                pin_to(cpus.1);
                echo(a[0], b[1]);
                // SAFETY: leave the child without running the parent's destructors.
                unsafe { libc::_exit(0) };
            }
            pid if pid > 0 => Some(Peer::Process(pid)),
            _ => None,
        }
    } else {
        Some(Peer::Thread(std::thread::spawn(move || {
            pin_to(cpus.1);
            echo(a[0], b[1]);
        })))
    };
    let m = peer.map(|peer| {
        let allowed = allowed_cpus();
        pin_to(cpus.0);
        let m = ping(a[1], b[0], budget, key, label);
        put(a[1], b'q');
        match peer {
            Peer::Thread(t) => {
                let _ = t.join();
            }
            Peer::Process(pid) => {
                let mut status = 0;
                // SAFETY: reaps our own child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            }
        }
        pin_to_set(&allowed);
        m
    });
    for fd in a.into_iter().chain(b) {
        close(fd);
    }
    m
}

/// Probe 4: wake-up latency by pipe ping-pong (half a round trip), threads and
/// processes, both on one CPU (a pure context switch) and on two (a cross-CPU wake-up).
pub fn ctxswitch(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("ctxswitch", "wake-up / context switch");
    let cpus = allowed_cpus();
    let Some(&first) = cpus.first() else {
        r.unavailable = Some("cannot read this process's CPU affinity".into());
        return r;
    };
    let second = cpus.get(1).copied();
    let variants = [
        (
            false,
            Some(first),
            "threads_1cpu",
            "threads, one CPU (context switch)",
        ),
        (
            false,
            second,
            "threads_2cpu",
            "threads, two CPUs (cross-CPU wake-up)",
        ),
        (true, Some(first), "procs_1cpu", "processes, one CPU"),
        (true, second, "procs_2cpu", "processes, two CPUs"),
    ];
    for (processes, other, key, label) in variants {
        if let Some(other) = other {
            r.measures
                .extend(pingpong(budget, processes, (first, other), key, label));
        }
    }
    r.fact("cpus_used", if second.is_some() { 2 } else { 1 });
    r
}

/// A mutex + condition-variable hand-off (what most runtimes' blocking queues do).
fn condvar_handoff(budget: &Budget) -> Measure {
    let state = Arc::new((Mutex::new(0u32), Condvar::new(), AtomicBool::new(false)));
    let peer_state = state.clone();
    let peer = std::thread::spawn(move || {
        let (lock, cv, stop) = &*peer_state;
        let mut turn = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            while *turn != 1 && !stop.load(Ordering::Relaxed) {
                turn = cv.wait(turn).unwrap_or_else(|e| e.into_inner());
            }
            if stop.load(Ordering::Relaxed) {
                return;
            }
            *turn = 0;
            cv.notify_all();
        }
    });
    let (lock, cv, stop) = &*state;
    let m = batched("condvar", "mutex + condvar hand-off", budget, |n| {
        let mut turn = lock.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..n {
            *turn = 1;
            cv.notify_all();
            while *turn != 0 {
                turn = cv.wait(turn).unwrap_or_else(|e| e.into_inner());
            }
        }
    });
    stop.store(true, Ordering::Relaxed);
    {
        let _g = lock.lock().unwrap_or_else(|e| e.into_inner());
        cv.notify_all();
    }
    let _ = peer.join();
    halved(m)
}

/// Spin up to this many `spin_loop` hints (PAUSE on x86) before parking: the fixed
/// spin count that pre-Skylake-tuned runtimes used.
const SPINS: u32 = 1000;

/// Wait until `done(turn)`: spin, then park. Returns the value seen.
fn spin_then_park(turn: &AtomicU32, done: impl Fn(u32) -> bool) -> u32 {
    for _ in 0..SPINS {
        let v = turn.load(Ordering::Acquire);
        if done(v) {
            return v;
        }
        std::hint::spin_loop();
    }
    loop {
        let v = turn.load(Ordering::Acquire);
        if done(v) {
            return v;
        }
        std::thread::park();
    }
}

/// A spin-then-park hand-off (seed 004's lock): cheap while the peer answers within
/// the spin, and a measure of the spin-wait hint's cost when it does not.
fn spin_handoff(budget: &Budget) -> Measure {
    let turn = Arc::new(AtomicU32::new(0));
    let main = std::thread::current();
    let peer_turn = turn.clone();
    let peer = std::thread::spawn(move || {
        while spin_then_park(&peer_turn, |v| v != 0) == 1 {
            peer_turn.store(0, Ordering::Release);
            main.unpark();
        }
    });
    let m = batched("spin_park", "spin-then-park hand-off", budget, |n| {
        for _ in 0..n {
            turn.store(1, Ordering::Release);
            peer.thread().unpark();
            spin_then_park(&turn, |v| v == 0);
        }
    });
    turn.store(2, Ordering::Release);
    peer.thread().unpark();
    let _ = peer.join();
    halved(m)
}

/// Probe 5: lock hand-off latency between two threads.
pub fn locks(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("locks", "lock hand-off");
    r.measures.push(condvar_handoff(budget));
    r.measures.push(spin_handoff(budget));
    r.fact("spin_count", SPINS);
    r
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn procs_running() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("procs_running "))
        .and_then(|v| v.trim().parse().ok())
}

/// Probe 11: one busy thread per allowed CPU for a short while, each measuring the
/// share of wall time it actually got on a CPU in 10 ms slices; steal, cgroup
/// throttling and the run queue are read before, during and after.
pub fn contention(budget: &Budget) -> ProbeResult {
    use super::fingerprint::{cgroup_throttling, steal_ticks};
    let mut r = ProbeResult::new("contention", "CPU contention");
    let cpus = allowed_cpus().len().max(1);
    let total_ns = budget.pick(300_000_000u64, 100_000_000);
    let slice_ns = 10_000_000u64;
    let (steal0, thr0) = (steal_ticks(), cgroup_throttling());
    let start = now_ns();
    let workers: Vec<_> = (0..cpus)
        .map(|_| {
            std::thread::spawn(move || {
                let mut shares = Vec::new();
                let (mut w0, mut c0) = (now_ns(), thread_cpu_ns());
                let mut x = 0u64;
                while now_ns() - start < total_ns {
                    for i in 0..10_000u64 {
                        x = std::hint::black_box(x.wrapping_add(i));
                    }
                    let w = now_ns();
                    if w - w0 >= slice_ns {
                        let c = thread_cpu_ns();
                        shares.push((c - c0) as f64 / (w - w0) as f64);
                        (w0, c0) = (w, c);
                    }
                }
                shares
            })
        })
        .collect();
    let mut running = Vec::new();
    while now_ns() - start < total_ns {
        std::thread::sleep(std::time::Duration::from_millis(20));
        running.extend(procs_running());
    }
    let mut shares = Vec::new();
    for w in workers {
        shares.extend(w.join().unwrap_or_default());
    }
    r.measures.push(
        Measure::new(
            "cpu_share",
            "share of wall time on a CPU, per busy thread",
            "share",
            1,
            shares,
        )
        .higher_is_better(),
    );
    r.fact("busy_threads", cpus);
    if let (Some(a), Some(b)) = (steal0, steal_ticks()) {
        r.fact("steal_ticks", b.saturating_sub(a));
    }
    if let (Some(a), Some(b)) = (thr0, cgroup_throttling()) {
        r.fact(
            "throttled_periods",
            b.nr_throttled.saturating_sub(a.nr_throttled),
        );
        r.fact(
            "throttled_us",
            b.throttled_usec.saturating_sub(a.throttled_usec),
        );
    }
    if let Some(max) = running.iter().max() {
        // Our own busy threads and the sampling thread count too.
        r.fact("max_procs_running", *max);
        r.fact("others_running", max.saturating_sub(cpus as u64 + 1));
    }
    r
}
