//! Packet captures: pcap/pcapng files, link-layer decoding and TCP reassembly; HTTP is in [`super::http`].

pub mod accounted;
pub mod linktype;
pub mod pcap;
pub mod tcp;
#[cfg(test)]
pub mod testpcap;
