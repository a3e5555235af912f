//! Opening one input file: transparent gzip, a sniffable head, typed open errors, and on
//! request the blake3 of the file's bytes as they are read.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes looked at to recognise a format.
pub const HEAD_BYTES: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{path}: cannot open: {source}")]
    Open { path: PathBuf, source: io::Error },
    #[error("{path}: cannot read: {source}")]
    Read { path: PathBuf, source: io::Error },
}

/// An opened input: the head already read (decompressed), then the rest of the stream.
pub struct Opened {
    pub head: Vec<u8>,
    /// Reads the whole (decompressed) stream from byte 0, head included.
    pub reader: Box<dyn Read + Send>,
    pub gzip: bool,
    /// Size of the file on disk.
    pub file_bytes: u64,
    /// Set when reading the head already failed (e.g. a gzip file cut inside its header).
    pub head_error: Option<io::Error>,
    /// The hash of the bytes read from disk so far, when asked for.
    pub hash: Option<FileHash>,
}

/// blake3 of a file's bytes on disk (before gzip), taken as the reader reads them: one pass
/// over the file instead of a second read beside it (`large.log`: a fifth of `tables`).
#[derive(Clone)]
pub struct FileHash(Arc<Mutex<(blake3::Hasher, u64)>>);

impl FileHash {
    /// The hex digest, when exactly `file_bytes` (the size at open) were read: a file read only
    /// in part (an unreadable capture, a read error) or that grew meanwhile has none.
    pub fn finish(&self, file_bytes: u64) -> Option<String> {
        let state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        (state.1 == file_bytes).then(|| state.0.finalize().to_hex().to_string())
    }
}

/// Passes reads through, hashing what they return.
struct Hashing<R> {
    inner: R,
    hash: FileHash,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut state = self.hash.0.lock().unwrap_or_else(|p| p.into_inner());
        state.0.update(&buf[..n]);
        state.1 += n as u64;
        Ok(n)
    }
}

/// Opens `path`, decompressing gzip (detected by magic bytes, not by name); with `hash`, the
/// file's bytes are hashed as they are read ([`Opened::hash`]).
pub fn open(path: &Path, hash: bool) -> Result<Opened, OpenError> {
    let file = File::open(path).map_err(|source| OpenError::Open { path: path.into(), source })?;
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let hash = hash.then(|| FileHash(Arc::new(Mutex::new((blake3::Hasher::new(), 0)))));
    let file: Box<dyn Read + Send> = match &hash {
        Some(h) => Box::new(Hashing { inner: file, hash: h.clone() }),
        None => Box::new(file),
    };
    let mut raw = BufReader::with_capacity(1 << 16, file);
    let mut magic = [0u8; 2];
    let (got, err) = read_up_to(&mut raw, &mut magic);
    if let Some(source) = err {
        return Err(OpenError::Read { path: path.into(), source });
    }
    let prefix = Cursor::new(magic[..got].to_vec());
    let gzip = got == 2 && magic == [0x1f, 0x8b];
    let mut stream: Box<dyn Read + Send> = if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(prefix.chain(raw)))
    } else {
        Box::new(prefix.chain(raw))
    };
    let mut head = vec![0u8; HEAD_BYTES];
    let (n, head_error) = read_up_to(&mut stream, &mut head);
    head.truncate(n);
    let rest: Box<dyn Read + Send> = match &head_error {
        // The stream is broken: replay the head, then report the error once.
        Some(e) => Box::new(FailOnce(Some(io::Error::new(e.kind(), e.to_string())))),
        None => stream,
    };
    let reader = Box::new(Cursor::new(head.clone()).chain(rest));
    Ok(Opened { head, reader, gzip, file_bytes, head_error, hash })
}

/// Fills `buf` as far as the reader allows; returns bytes read and the error that stopped it.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// A reader that fails once with the stored error, then reports end of input.
struct FailOnce(Option<io::Error>);

impl Read for FailOnce {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

/// Reads to the end or the first error, counting bytes: the rest of an input a reader gave up
/// on still gets its size accounted (an unrecognised file, a capture cut by a corrupt record).
pub fn drain(mut reader: impl Read) -> u64 {
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return n,
            Ok(k) => n += k as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return n,
        }
    }
}

/// Counts bytes passing through a reader.
pub struct Counting<R> {
    pub inner: R,
    pub count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
