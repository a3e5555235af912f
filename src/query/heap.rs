//! Hands freed heap back to the system between the pieces of a piece-by-piece query.
//!
//! glibc's allocator keeps memory a piece's query freed in its arenas (one per thread of the
//! polars pool), scattered between live blocks, so resident memory climbs over the pieces:
//! `check` on 21 captures of 500 MB peaked at 764 MB without this and 614 MB with it (one run
//! each, 73 s and 83 s). `malloc_trim(0)` returns the free pages of every arena. No crate
//! wraps it (`libc` declares it, but adding that dependency rebuilds the tree for one
//! function), so it is declared here. The `mcpsift` binary allocates with mimalloc
//! (`src/main.rs`), which returns freed pages itself after a purge delay; this call then has
//! little to return, and is kept for library users on glibc's allocator.

/// Returns the heap freed so far to the system, where the allocator can (glibc); elsewhere
/// nothing.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim only walks glibc's own arenas under their locks; it takes no
        // pointer and is safe to call from any thread at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}
