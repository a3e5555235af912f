//! The writer's lock on a dataset folder (`DIR/.mcpsift.lock`, holding the writer's pid): a
//! second run writing the same folder refuses instead of interleaving parts. A lock whose
//! process is gone (a killed run) is taken over. Removed when dropped.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::error::DatasetError;

pub const LOCK: &str = ".mcpsift.lock";

pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the lock of `dir`, or says who holds it.
    pub fn take(dir: &Path) -> Result<Lock, DatasetError> {
        let path = dir.join(LOCK);
        for _ in 0..2 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default().trim().parse::<u32>().ok();
                    match holder {
                        // A pid that no longer runs: the lock of a killed run.
                        Some(pid) if !alive(pid) => {
                            let _ = std::fs::remove_file(&path);
                        }
                        _ => return Err(DatasetError::Locked { dir: dir.to_path_buf(), pid: holder }),
                    }
                }
                Err(source) => return Err(DatasetError::Io { path, source }),
            }
        }
        Err(DatasetError::Locked { dir: dir.to_path_buf(), pid: None })
    }
}

/// Whether a process runs (Linux `/proc`; elsewhere every holder counts as alive).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new(&format!("/proc/{pid}")).exists() } else { true }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_and_a_dead_ones_lock_is_taken_over() {
        let dir = std::env::temp_dir().join(format!("mcpsift-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let first = Lock::take(&dir).expect("first lock");
        assert!(matches!(Lock::take(&dir), Err(DatasetError::Locked { pid: Some(p), .. }) if p == std::process::id()));
        drop(first);
        assert!(!dir.join(LOCK).exists());
        // A pid above Linux's maximum (4,194,304) never runs: a stale lock.
        std::fs::write(dir.join(LOCK), "4194304999\n").expect("stale lock");
        let taken = Lock::take(&dir).expect("stale lock taken over");
        drop(taken);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
