//! Opening one input file: transparent gzip, a sniffable head, typed open errors.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

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
}

/// Opens `path`, decompressing gzip (detected by magic bytes, not by name).
pub fn open(path: &Path) -> Result<Opened, OpenError> {
    let file = File::open(path).map_err(|source| OpenError::Open { path: path.into(), source })?;
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
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
    Ok(Opened { head, reader, gzip, file_bytes, head_error })
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
