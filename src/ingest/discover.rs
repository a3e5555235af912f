//! Turning command-line paths into captures: walking folders, pairing stdio tee files by name.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::frame::Direction;

/// One capture to ingest: a single file, or a stdio tee pair (client→server, server→client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureInput {
    File { name: String, path: PathBuf },
    StdioPair { name: String, c2s: PathBuf, s2c: PathBuf },
}

impl CaptureInput {
    pub fn name(&self) -> &str {
        match self {
            CaptureInput::File { name, .. } | CaptureInput::StdioPair { name, .. } => name,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// An explicit stdio tee pair: the client→server file and the server→client file, written
/// `C2S:S2C` on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairSpec {
    pub c2s: PathBuf,
    pub s2c: PathBuf,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("expected C2S_FILE:S2C_FILE")]
pub struct PairSpecError;

impl std::str::FromStr for PairSpec {
    type Err = PairSpecError;

    /// Splits at a `:` with a file name on both sides. When a path itself holds a colon and
    /// several splits are possible, the first split whose two files both exist wins, else the
    /// first split.
    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let splits: Vec<(&str, &str)> = spec.match_indices(':').map(|(i, _)| (&spec[..i], &spec[i + 1..])).filter(|(a, b)| !a.is_empty() && !b.is_empty()).collect();
        let exists = |(a, b): &(&str, &str)| Path::new(a).is_file() && Path::new(b).is_file();
        let (a, b) = splits.iter().find(|s| exists(s)).or(splits.first()).ok_or(PairSpecError)?;
        Ok(PairSpec { c2s: PathBuf::from(a), s2c: PathBuf::from(b) })
    }
}

/// Direction named by a file name token, and the name of the file for the other direction.
/// Tokens are split on `.`, `_` and `-`; `.gz` is ignored. `stderr` logs are never stdio.
pub fn direction_token(file_name: &str) -> Option<(Direction, Vec<String>)> {
    let base = file_name.strip_suffix(".gz").unwrap_or(file_name);
    if !is_log_like(base) {
        return None;
    }
    let tokens = split_tokens(base);
    if tokens.iter().any(|(t, _)| t.eq_ignore_ascii_case("stderr")) {
        return None;
    }
    for (i, (tok, _)) in tokens.iter().enumerate() {
        let lower = tok.to_ascii_lowercase();
        let (dir, other) = match lower.as_str() {
            "c2s" => (Direction::ClientToServer, "s2c"),
            "s2c" => (Direction::ServerToClient, "c2s"),
            "stdin" => (Direction::ClientToServer, "stdout"),
            "stdout" => (Direction::ServerToClient, "stdin"),
            "in" => (Direction::ClientToServer, "out"),
            "out" => (Direction::ServerToClient, "in"),
            "client" => (Direction::ClientToServer, "server"),
            "server" => (Direction::ServerToClient, "client"),
            _ => continue,
        };
        let mut partner = String::new();
        for (j, (t, sep)) in tokens.iter().enumerate() {
            partner.push_str(if i == j { other } else { t });
            partner.push_str(sep);
        }
        return Some((dir, vec![partner.clone(), format!("{partner}.gz")]));
    }
    None
}

/// Whether a file name looks like a log or transcript (not source code or documentation), so
/// its name may say which direction it holds.
fn is_log_like(name: &str) -> bool {
    let ext = match name.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => return true,
    };
    matches!(ext.as_str(), "log" | "txt" | "jsonl" | "ndjson" | "json" | "out" | "raw" | "tee" | "stdio" | "in" | "c2s" | "s2c" | "stdin" | "stdout")
}

/// Splits `a.b_c` into `[("a", "."), ("b", "_"), ("c", "")]`.
fn split_tokens(s: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if matches!(c, '.' | '_' | '-') {
            out.push((&s[start..i], &s[i..i + 1]));
            start = i + 1;
        }
    }
    out.push((&s[start..], ""));
    out
}

/// Expands `paths` (files and folders, walked recursively in name order) into captures.
/// What discovery found: the captures, and the symlinks that lead back into a folder being
/// walked (not followed).
#[derive(Debug, Default)]
pub struct Discovery {
    pub inputs: Vec<CaptureInput>,
    pub symlink_loops: Vec<PathBuf>,
}

/// Files named in the explicit `pairs` are not paired again.
pub fn discover(paths: &[PathBuf], pairs: &[PairSpec]) -> Result<Discovery, DiscoverError> {
    let mut out = Vec::new();
    let mut claimed: Vec<PathBuf> = Vec::new();
    for PairSpec { c2s, s2c } in pairs {
        let (c2s, s2c) = (c2s.clone(), s2c.clone());
        for f in [&c2s, &s2c] {
            std::fs::metadata(f).map_err(|source| DiscoverError::Io { path: f.clone(), source })?;
        }
        out.push(CaptureInput::StdioPair { name: pair_name(&c2s, &s2c), c2s: c2s.clone(), s2c: s2c.clone() });
        claimed.push(c2s);
        claimed.push(s2c);
    }
    let mut files = Vec::new();
    let mut walk = Walk::default();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| DiscoverError::Io { path: path.clone(), source })?;
        if meta.is_dir() {
            walk.dir(path, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    // Files named twice (a folder and a file in it, or one file by two links) are one capture.
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| !claimed.contains(f) && seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    out.extend(pair_up(files));
    Ok(Discovery { inputs: out, symlink_loops: walk.loops })
}

/// Captures from a listing of file paths that are not read (a remote store's listing, say):
/// the same pairing by name as [`discover`], each path once, in the listing's order.
pub fn captures_of_listing(files: Vec<PathBuf>) -> Vec<CaptureInput> {
    let mut seen = std::collections::HashSet::new();
    let files: Vec<PathBuf> = files.into_iter().filter(|f| seen.insert(f.clone())).collect();
    pair_up(files)
}

/// Folders walked so far, by their real path: a folder reached again through a symlink is not
/// walked again (so every file is read once), and one that points back to a folder being
/// walked is a loop, reported in [`Walk::loops`].
#[derive(Default)]
struct Walk {
    walked: std::collections::HashSet<PathBuf>,
    open: Vec<PathBuf>,
    loops: Vec<PathBuf>,
}

impl Walk {
    fn dir(&mut self, dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), DiscoverError> {
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if self.open.contains(&real) {
            self.loops.push(dir.to_path_buf());
            return Ok(());
        }
        if !self.walked.insert(real.clone()) {
            return Ok(());
        }
        let rd = std::fs::read_dir(dir).map_err(|source| DiscoverError::Io { path: dir.into(), source })?;
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        self.open.push(real);
        for e in entries {
            if e.is_dir() {
                self.dir(&e, files)?;
            } else {
                files.push(e);
            }
        }
        self.open.pop();
        Ok(())
    }
}

/// Groups files of one listing into pairs by direction token within the same folder.
fn pair_up(files: Vec<PathBuf>) -> Vec<CaptureInput> {
    let mut by_path: BTreeMap<PathBuf, bool> = files.iter().map(|f| (f.clone(), false)).collect();
    let mut out = Vec::new();
    for f in &files {
        if by_path.get(f) == Some(&true) {
            continue;
        }
        let file_name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let partner = direction_token(&file_name).and_then(|(dir, names)| {
            let parent = f.parent().unwrap_or(Path::new(""));
            names
                .iter()
                .map(|n| parent.join(n))
                .find(|p| p != f && by_path.get(p) == Some(&false))
                .map(|p| (dir, p))
        });
        match partner {
            Some((dir, p)) => {
                by_path.insert(f.clone(), true);
                by_path.insert(p.clone(), true);
                let (c2s, s2c) = if dir == Direction::ClientToServer { (f.clone(), p) } else { (p, f.clone()) };
                out.push(CaptureInput::StdioPair { name: pair_name(&c2s, &s2c), c2s, s2c });
            }
            None => {
                by_path.insert(f.clone(), true);
                out.push(CaptureInput::File { name: f.display().to_string(), path: f.clone() });
            }
        }
    }
    out
}

fn pair_name(c2s: &Path, s2c: &Path) -> String {
    let s2c_name = s2c.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if c2s.parent() == s2c.parent() {
        format!("{}+{}", c2s.display(), s2c_name)
    } else {
        format!("{}+{}", c2s.display(), s2c.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_pairs_like_a_walk_without_reading_a_file() {
        let listed = ["/no/such/day1/a_c2s.log", "/no/such/day1/a_s2c.log.gz", "/no/such/day1/host.log", "/no/such/day2/a_c2s.log", "/no/such/day1/a_c2s.log"];
        let got = captures_of_listing(listed.iter().map(PathBuf::from).collect());
        let names: Vec<&str> = got.iter().map(CaptureInput::name).collect();
        assert_eq!(names, vec!["/no/such/day1/a_c2s.log+a_s2c.log.gz", "/no/such/day1/host.log", "/no/such/day2/a_c2s.log"]);
    }

    #[test]
    fn tokens_pair_and_stderr_does_not() {
        let (d, names) = direction_token("c2s.log").unwrap();
        assert_eq!(d, Direction::ClientToServer);
        assert_eq!(names, vec!["s2c.log".to_string(), "s2c.log.gz".to_string()]);
        let (d, names) = direction_token("fs-stdout.jsonl.gz").unwrap();
        assert_eq!(d, Direction::ServerToClient);
        assert_eq!(names[0], "fs-stdin.jsonl");
        assert!(direction_token("server.stderr.log").is_none());
        assert!(direction_token("transcript.jsonl").is_none());
        assert!(direction_token("billing_server.py").is_none(), "source code is never a stdio log");
    }

    #[test]
    fn pairs_gzipped_partner_in_same_folder() {
        let files = vec![
            PathBuf::from("d/c2s.log"),
            PathBuf::from("d/expected.json"),
            PathBuf::from("d/s2c.log.gz"),
            PathBuf::from("e/s2c.log"),
        ];
        let got = pair_up(files);
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0],
            CaptureInput::StdioPair {
                name: "d/c2s.log+s2c.log.gz".into(),
                c2s: "d/c2s.log".into(),
                s2c: "d/s2c.log.gz".into()
            }
        );
        assert_eq!(got[2].name(), "e/s2c.log");
    }

    #[test]
    fn pair_specs_split_where_both_files_exist_even_with_colons_in_paths() {
        assert_eq!("a.log:b.log".parse::<PairSpec>(), Ok(PairSpec { c2s: "a.log".into(), s2c: "b.log".into() }));
        assert_eq!("a.log".parse::<PairSpec>(), Err(PairSpecError));
        assert_eq!(":b.log".parse::<PairSpec>(), Err(PairSpecError));
        let dir = std::env::temp_dir().join(format!("mcpsift-pairspec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (c2s, s2c) = (dir.join("run:1-c2s.log"), dir.join("run:1-s2c.log"));
        std::fs::write(&c2s, b"").unwrap();
        std::fs::write(&s2c, b"").unwrap();
        let spec = format!("{}:{}", c2s.display(), s2c.display());
        assert_eq!(spec.parse::<PairSpec>(), Ok(PairSpec { c2s: c2s.clone(), s2c: s2c.clone() }));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
