//! Development helper: `cargo run --example pcapdump -- FILE[.gz] [port...]` prints what
//! `read_capture` produced (summary, framing, skips, events, one line per frame).
use std::io::Read;

use mcpsift::ingest::accounting::CollectSink;
use mcpsift::ingest::frame::Sink;
use mcpsift::ingest::packet::pcap::{PcapOptions, read_capture};

#[derive(Default)]
struct CountingSink {
    frame_bytes: u64,
}

impl Sink for CountingSink {
    fn frame(&mut self, frame: mcpsift::ingest::frame::Frame) {
        self.frame_bytes += frame.wire_bytes;
    }
    fn event(&mut self, _: mcpsift::ingest::frame::Event) {}
    fn skip(&mut self, _: mcpsift::ingest::frame::Skip) {}
    fn framing(&mut self, _: mcpsift::ingest::frame::FramingCategory, _: u64) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: pcapdump FILE [PORT...]")?;
    let ports = args.map(|p| p.parse()).collect::<Result<Vec<u16>, _>>()?;
    let file = std::fs::File::open(&path)?;
    let reader: Box<dyn Read + Send> = if path.ends_with(".gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let opts = PcapOptions {
        ports,
        ..PcapOptions::default()
    };
    if std::env::var_os("PCAPDUMP_COUNT_ONLY").is_some() {
        // Memory/speed check: keep nothing.
        let mut counter = CountingSink::default();
        let summary = read_capture(std::io::BufReader::new(reader), &opts, &mut counter)?;
        println!("{summary:#?}\nframe bytes {}", counter.frame_bytes);
        return Ok(());
    }
    let mut sink = CollectSink::default();
    let summary = read_capture(std::io::BufReader::new(reader), &opts, &mut sink)?;
    println!("{summary:#?}");
    println!("framing: {:?}", sink.framing);
    for s in &sink.skips {
        println!("skip {} bytes={} offset={} {}", s.reason, s.bytes, s.offset, s.detail);
    }
    for e in &sink.events {
        println!("event {} {} {:?} {}", e.kind, e.level, e.session, e.text);
    }
    for f in &sink.frames {
        let h = f.http.as_ref();
        let head: String = String::from_utf8_lossy(&f.payload[..f.payload.len().min(60)]).into();
        println!(
            "frame conn={} ex={} {} {:?} {} {} status={:?} sess={:?} off={} len={} id={:?} inc={:?} {}",
            h.map_or(0, |h| h.connection),
            h.map_or(0, |h| h.exchange),
            f.direction.map_or("?", |d| d.as_str()),
            f.transport,
            h.map_or("", |h| h.method.as_str()),
            h.map_or("", |h| h.url.as_str()),
            h.and_then(|h| h.status),
            f.session,
            f.offset,
            f.wire_bytes,
            h.and_then(|h| h.sse_event_id.clone()),
            f.incomplete,
            head
        );
    }
    Ok(())
}
