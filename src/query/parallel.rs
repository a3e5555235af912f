//! Runs a run's independent queries (its rules, each rule's pieces of a dataset, `check`'s
//! latency summary) two at a time, on threads of their own, and gives their results in the
//! order asked.
//!
//! One polars query leaves a core idle for part of its time: it plans, reads Parquet footers
//! and runs some steps on one thread. Over the fleet dataset `check` kept 1.4 of the 2 cores
//! busy running its rules one after another. Rules run side by side ([`map_ordered`]), and so
//! do a rule's pieces, but each query on a piece runs in one of [`AT_ONCE`] slots of the whole
//! process ([`in_slot`]): a query holds one piece of a dataset at a time
//! ([`super::source::each_capture`]), so memory holds at most that many pieces.
//! Written by hand: rayon's pool would start another query on a thread that waits inside
//! polars, so the number in flight (and so memory) would not be bounded.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Queries run at once in the process.
pub const AT_ONCE: usize = 2;

/// Stack of a query's thread: polars plans a query by recursion on the calling thread (the
/// main thread has 8 MiB).
const STACK_BYTES: usize = 8 << 20;

/// Free slots, and the signal that one was given back.
static FREE: Mutex<usize> = Mutex::new(AT_ONCE);
static FREED: Condvar = Condvar::new();

thread_local! {
    /// Whether this thread holds a slot (a query it starts runs in that slot).
    static HOLDS: Cell<bool> = const { Cell::new(false) };
}

/// Gives the slot back when the query ends, or unwinds.
struct Slot;

impl Drop for Slot {
    fn drop(&mut self) {
        HOLDS.set(false);
        *FREE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) += 1;
        FREED.notify_one();
    }
}

/// Runs `query` once one of the [`AT_ONCE`] slots is free (at once on a thread that holds one).
pub fn in_slot<T>(query: impl FnOnce() -> T) -> T {
    if HOLDS.get() {
        return query();
    }
    {
        let mut free = FREE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while *free == 0 {
            free = FREED.wait(free).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *free -= 1;
    }
    HOLDS.set(true);
    let _slot = Slot;
    query()
}

/// `job(0)`, ..., `job(n - 1)` on up to [`AT_ONCE`] threads, started in that order; the
/// results in index order. A job takes a slot itself where it runs a query ([`in_slot`]). On
/// a thread that holds a slot they run there, one after another (its slot is theirs: waiting
/// for threads of its own to get one could wait for itself). A job that panics panics the
/// caller once the others are done.
pub fn map_ordered<T: Send>(n: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = AT_ONCE.min(n);
    if threads <= 1 || HOLDS.get() {
        return (0..n).map(job).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        let work = || {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let result = job(i);
                *done[i].lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(result);
            }
        };
        let spawned: Vec<_> = (0..threads).map(|_| std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(scope, work)).collect();
        for thread in spawned {
            // Could not start a thread: this one works too (the others still running).
            if thread.is_err() {
                work();
            }
        }
    });
    done.into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()).expect("each index is taken by one thread, which stores its result or panics the scope"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_index_order_and_no_more_than_at_once_run_together() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let out = map_ordered(9, |i| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            // Later jobs finish sooner, so an order by completion would differ.
            std::thread::sleep(std::time::Duration::from_millis(20 - 2 * i as u64));
            running.fetch_sub(1, Ordering::SeqCst);
            i * 10
        });
        assert_eq!(out, (0..9).map(|i| i * 10).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) <= AT_ONCE, "other tests may hold slots, never more than AT_ONCE run");
    }

    #[test]
    fn a_query_in_a_slot_runs_its_jobs_itself_and_slots_bound_all_queries() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let count = |d: u64| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(d));
            running.fetch_sub(1, Ordering::SeqCst);
        };
        std::thread::scope(|scope| {
            // A query in a slot of its own beside jobs that take the slots too.
            let beside = scope.spawn(|| in_slot(|| count(30)));
            let nested = in_slot(|| map_ordered(3, |i| i * 2));
            assert_eq!(nested, vec![0, 2, 4], "jobs of a slot holder run on its thread, in order");
            map_ordered(6, |_| in_slot(|| count(10)));
            // Jobs without a query of their own, each starting queries in slots.
            map_ordered(3, |_| map_ordered(3, |_| in_slot(|| count(5))));
            beside.join().unwrap();
        });
        assert!(most.load(Ordering::SeqCst) <= AT_ONCE);
    }

    #[test]
    fn no_job_and_one_job() {
        assert!(map_ordered(0, |i| i).is_empty());
        assert_eq!(map_ordered(1, |i| i + 1), vec![1]);
    }
}
