//! `--jobs N` as a bound on the cores a run uses, the way a user sharing a machine means it:
//! at most N captures read at once (the pipeline's pool), polars' and rayon's pools of N
//! threads, and on Linux the process confined to N of the CPUs it may run on (the least busy
//! when it starts), so the reading, model and writer threads that each capture has beside the
//! pool share those N as well. Without the confinement those threads were free to use every
//! core: on the Xeon of 2026-12-04 `--jobs 2` added only 1.16x to `--jobs 1` on 20 logs (on
//! the AMD machine of 2026-12-06 the binary before ran `--jobs 1` at about one core, 1.92x).
//!
//! Must run before any thread exists: threads inherit the affinity of the thread that starts
//! them, and the pools read their sizes when they start. Hand-written (`sched_setaffinity` and
//! a look at `/proc/stat`): the affinity crates pin one thread to one given core; none picks
//! a set of idle CPUs for a whole process.

/// Limits this process to `jobs` cores (see the module header). A user's own
/// `POLARS_MAX_THREADS` or `RAYON_NUM_THREADS` wins; an affinity that cannot be read or set
/// leaves the process as it was (the pools are still bounded).
pub fn limit(jobs: u16) {
    let jobs = usize::from(jobs.max(1));
    for key in ["POLARS_MAX_THREADS", "RAYON_NUM_THREADS"] {
        crate::set_default_env(key, &jobs.to_string());
    }
    #[cfg(target_os = "linux")]
    confine(jobs);
}

/// How long `/proc/stat` is watched to see which CPUs are busy (the kernel counts in 10 ms ticks).
#[cfg(target_os = "linux")]
const SAMPLE_MS: u64 = 40;

/// Confines the calling thread (and every thread it starts from now on) to `jobs` of the CPUs
/// it may run on ([`choose`]); nothing when it may run on no more than that.
#[cfg(target_os = "linux")]
fn confine(jobs: usize) {
    // SAFETY: cpu_set_t is plain data, all-zero is the empty set; sched_getaffinity and
    // sched_setaffinity read and write exactly size_of::<cpu_set_t>() bytes of it; pid 0 is
    // the calling thread.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &allowed)).collect();
        if cpus.len() <= jobs {
            return;
        }
        let mut chosen: libc::cpu_set_t = std::mem::zeroed();
        for c in choose(&cpus, jobs, std::process::id() as usize) {
            libc::CPU_SET(c, &mut chosen);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &chosen);
    }
}

/// The `jobs` CPUs of `allowed` to run on: the least busy over a short look at `/proc/stat`
/// (another run confined with `--jobs` keeps its CPUs busy, so one started beside it takes the
/// others), equally busy ones in a rotation that starts at `pid` (two runs started at the same
/// moment see the same idle machine, and their process ids differ).
#[cfg(target_os = "linux")]
fn choose(allowed: &[usize], jobs: usize, pid: usize) -> Vec<usize> {
    let before = busy_ticks();
    std::thread::sleep(std::time::Duration::from_millis(SAMPLE_MS));
    let after = busy_ticks();
    rank(allowed, jobs, pid, |cpu| match (before.get(&cpu), after.get(&cpu)) {
        (Some(b), Some(a)) => a.saturating_sub(*b),
        _ => 0,
    })
}

/// `choose` given each CPU's busy ticks.
#[cfg(target_os = "linux")]
fn rank(allowed: &[usize], jobs: usize, pid: usize, busy: impl Fn(usize) -> u64) -> Vec<usize> {
    let n = allowed.len().max(1);
    let start = pid % n;
    let mut order: Vec<(u64, usize, usize)> = allowed.iter().enumerate().map(|(i, &cpu)| (busy(cpu), (i + n - start) % n, cpu)).collect();
    order.sort_unstable();
    order.into_iter().take(jobs).map(|(_, _, cpu)| cpu).collect()
}

/// Ticks each CPU spent on anything but idling and waiting for I/O since boot, from
/// `/proc/stat` (`cpuN user nice system idle iowait irq softirq steal ...`); empty when
/// unreadable.
#[cfg(target_os = "linux")]
fn busy_ticks() -> std::collections::HashMap<usize, u64> {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let ticks: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
            let all: u64 = ticks.iter().take(8).sum();
            let idle = ticks.get(3).copied().unwrap_or(0) + ticks.get(4).copied().unwrap_or(0);
            Some((cpu, all.saturating_sub(idle)))
        })
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The CPUs this thread may run on, as the kernel reports them.
    fn allowed() -> usize {
        std::fs::read_to_string("/proc/thread-self/status")
            .ok()
            .and_then(|s| s.lines().find(|l| l.starts_with("Cpus_allowed_list:")).map(|l| l.to_string()))
            .map(|l| {
                l.trim_start_matches("Cpus_allowed_list:")
                    .trim()
                    .split(',')
                    .map(|r| match r.split_once('-') {
                        Some((a, b)) => b.parse::<usize>().unwrap_or(0) - a.parse::<usize>().unwrap_or(0) + 1,
                        None => 1,
                    })
                    .sum()
            })
            .unwrap_or(0)
    }

    #[test]
    fn confines_a_thread_and_the_threads_it_starts_to_one_cpu() {
        // On a thread of its own: the confinement is per thread and must not reach other tests.
        std::thread::spawn(|| {
            let before = allowed();
            super::confine(1);
            let after = allowed();
            let child = std::thread::spawn(allowed).join().unwrap_or(0);
            assert!(before >= 1);
            assert_eq!(after, 1, "the kernel reports one CPU after confine(1) (before: {before})");
            assert_eq!(child, 1, "a thread started afterwards inherits it");
        })
        .join()
        .expect("test thread");
    }

    #[test]
    fn takes_the_least_busy_cpus_and_rotates_among_equals() {
        // CPU 0 busy (another confined run on it): a one-CPU run takes CPU 1 whatever its pid.
        let busy = |cpu: usize| if cpu == 0 { 4 } else { 0 };
        assert_eq!(super::rank(&[0, 1], 1, 0, busy), vec![1]);
        assert_eq!(super::rank(&[0, 1], 1, 1, busy), vec![1]);
        // An idle machine: consecutive pids (runs started together) take different CPUs.
        let idle = |_: usize| 0;
        assert_eq!(super::rank(&[0, 1], 1, 10, idle), vec![0]);
        assert_eq!(super::rank(&[0, 1], 1, 11, idle), vec![1]);
        assert_eq!(super::rank(&[2, 5, 7], 2, 4, idle), vec![5, 7]);
        // Two of four, the two busiest left out.
        let some = |cpu: usize| [3, 0, 5, 1][cpu];
        let mut two = super::rank(&[0, 1, 2, 3], 2, 0, some);
        two.sort_unstable();
        assert_eq!(two, vec![1, 3]);
    }

    #[test]
    fn reads_busy_ticks_of_every_cpu() {
        let ticks = super::busy_ticks();
        assert!(!ticks.is_empty(), "/proc/stat lists the CPUs");
        assert!(ticks.contains_key(&0));
    }
}
