//! Push decoders for `Content-Encoding` (gzip, deflate): compressed pieces in, decoded bytes
//! appended to a caller's buffer. Unknown encodings are reported, never guessed.

use std::io::Write;

use flate2::write::{DeflateDecoder, GzDecoder, ZlibDecoder};

/// Decoder state for one body.
pub enum ContentDecoder {
    Identity,
    Gzip(Box<GzDecoder<Vec<u8>>>),
    /// `deflate`: zlib-wrapped per the RFC, raw deflate from some servers; chosen on the first byte.
    DeflatePending,
    Zlib(Box<ZlibDecoder<Vec<u8>>>),
    RawDeflate(Box<DeflateDecoder<Vec<u8>>>),
    /// An encoding we cannot decode (`br`, `zstd`, stacked codings): bytes are not decoded.
    Unsupported(String),
    /// Decoding failed (corrupt data, or bytes lost in a TCP gap).
    Failed(String),
}

impl std::fmt::Debug for ContentDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl ContentDecoder {
    /// From the `Content-Encoding` header value (`None`: identity).
    pub fn for_header(value: Option<&str>) -> Self {
        let Some(value) = value else {
            return ContentDecoder::Identity;
        };
        let codings: Vec<String> = value
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty() && c != "identity")
            .collect();
        match codings.as_slice() {
            [] => ContentDecoder::Identity,
            [one] if one == "gzip" || one == "x-gzip" => ContentDecoder::Gzip(Box::new(GzDecoder::new(Vec::new()))),
            [one] if one == "deflate" => ContentDecoder::DeflatePending,
            _ => ContentDecoder::Unsupported(value.trim().to_string()),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ContentDecoder::Identity => "identity",
            ContentDecoder::Gzip(_) => "gzip",
            ContentDecoder::DeflatePending | ContentDecoder::Zlib(_) | ContentDecoder::RawDeflate(_) => "deflate",
            ContentDecoder::Unsupported(_) => "unsupported",
            ContentDecoder::Failed(_) => "failed",
        }
    }

    pub fn is_identity(&self) -> bool {
        matches!(self, ContentDecoder::Identity)
    }

    /// Why nothing (more) can be decoded, if so.
    pub fn failure(&self) -> Option<String> {
        match self {
            ContentDecoder::Unsupported(name) => Some(format!("unsupported content-encoding {name:?}")),
            ContentDecoder::Failed(why) => Some(why.clone()),
            _ => None,
        }
    }

    /// Marks the stream as undecodable from here on.
    pub fn fail(&mut self, why: String) {
        if !matches!(
            self,
            ContentDecoder::Identity | ContentDecoder::Unsupported(_) | ContentDecoder::Failed(_)
        ) {
            *self = ContentDecoder::Failed(why);
        }
    }

    /// Decodes `input`, appending the result to `out`. Identity is the caller's job (no copy).
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if input.is_empty() {
            return;
        }
        if let ContentDecoder::DeflatePending = self {
            let cmf = input[0];
            // RFC 1950: CM = 8 in the low nibble; the FLG check needs a second byte we may lack.
            let zlib = cmf & 0x0f == 8
                && input
                    .get(1)
                    .is_none_or(|&flg| (u16::from(cmf) * 256 + u16::from(flg)) % 31 == 0);
            *self = if zlib {
                ContentDecoder::Zlib(Box::new(ZlibDecoder::new(Vec::new())))
            } else {
                ContentDecoder::RawDeflate(Box::new(DeflateDecoder::new(Vec::new())))
            };
        }
        let result = match self {
            ContentDecoder::Gzip(d) => write_all_into(d.as_mut(), input, out, |d| d.get_mut()),
            ContentDecoder::Zlib(d) => write_all_into(d.as_mut(), input, out, |d| d.get_mut()),
            ContentDecoder::RawDeflate(d) => write_all_into(d.as_mut(), input, out, |d| d.get_mut()),
            _ => Ok(()),
        };
        if let Err(e) = result {
            let why = format!("{} stream corrupt: {e}", self.name());
            *self = ContentDecoder::Failed(why);
        }
    }

    /// End of body: flushes what the decoder still holds. Returns an error text when the
    /// compressed stream was cut short.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Option<String> {
        let result = match self {
            ContentDecoder::Gzip(d) => d.try_finish().map(|_| out.append(d.get_mut())),
            ContentDecoder::Zlib(d) => d.try_finish().map(|_| out.append(d.get_mut())),
            ContentDecoder::RawDeflate(d) => d.try_finish().map(|_| out.append(d.get_mut())),
            _ => Ok(()),
        };
        match result {
            Ok(()) => None,
            Err(e) => {
                let why = format!("{} stream cut short: {e}", self.name());
                *self = ContentDecoder::Failed(why.clone());
                Some(why)
            }
        }
    }
}

/// Writes all of `input` into a flate2 write-decoder and moves its output into `out`.
/// Bytes after the end of the compressed stream are ignored (the decoder accepts no more).
fn write_all_into<W: Write>(
    decoder: &mut W,
    mut input: &[u8],
    out: &mut Vec<u8>,
    inner: impl Fn(&mut W) -> &mut Vec<u8>,
) -> std::io::Result<()> {
    while !input.is_empty() {
        let n = decoder.write(input)?;
        out.append(inner(decoder));
        if n == 0 {
            break;
        }
        input = &input[n..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_decodes_byte_by_byte() {
        let plain = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".repeat(20);
        let wire = gzip(&plain);
        let mut d = ContentDecoder::for_header(Some("gzip"));
        let mut out = Vec::new();
        for b in &wire {
            d.decode(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(d.finish(&mut out), None);
        assert_eq!(out, plain);
    }

    #[test]
    fn deflate_accepts_zlib_and_raw() {
        let plain = b"hello hello hello";
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(plain).unwrap();
        let mut r = flate2::write::DeflateEncoder::new(Vec::new(), Compression::default());
        r.write_all(plain).unwrap();
        for wire in [z.finish().unwrap(), r.finish().unwrap()] {
            let mut d = ContentDecoder::for_header(Some("deflate"));
            let mut out = Vec::new();
            d.decode(&wire, &mut out);
            assert_eq!(d.finish(&mut out), None);
            assert_eq!(out, plain);
        }
    }

    #[test]
    fn corrupt_and_unknown_encodings_are_reported() {
        let mut d = ContentDecoder::for_header(Some("gzip"));
        let mut out = Vec::new();
        d.decode(b"definitely not gzip", &mut out);
        assert!(d.failure().is_some());
        assert!(ContentDecoder::for_header(Some("br")).failure().is_some());
        assert!(ContentDecoder::for_header(Some("identity")).is_identity());
    }
}
