//! Names for one TCP connection's two reassembled byte streams (connection number, side, how a
//! stream ended), shared by [`packet::tcp`](super::packet::tcp), which produces the streams, and
//! [`http`](super::http), which reads them; so `http` does not import `packet`. Types only.

/// Capture-wide connection number, 0-based, in order of first packet.
pub type ConnectionId = u64;

/// One end of a connection. `A` is the source of the first packet seen for the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// Why a direction's stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// FIN, after all bytes before it were delivered or declared lost.
    Fin,
    /// RST from either side.
    Rst,
    /// The capture ended (or the 4-tuple was reused) while the stream was open.
    CaptureEnd,
}
