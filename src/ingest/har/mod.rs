//! HAR 1.2 files (browser developer tools, mitmproxy, Charles, Proxyman): [`reader`] streams
//! `log.entries` one entry at a time and accounts the JSON around them; [`exchange`] turns one
//! entry into the request and response the HTTP layer reads, so a HAR gives the frames,
//! sessions and events a packet capture of the same traffic gives.

pub mod exchange;
pub mod reader;
