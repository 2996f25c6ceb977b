//! Messages: what `send` queues and `recv` returns.

use std::any::Any;

use bytemuck::Pod;
use serde::Serialize;

/// A received message with its payload as a vector of `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Message<T> {
    /// Pid of the sender.
    pub source: usize,
    /// The tag the sender gave.
    pub tag: u32,
    /// The payload.
    pub data: Vec<T>,
}

/// What [`crate::Ctx::peek`] tells about the first queued message (HBSPlib `get_tag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MessageInfo {
    /// Pid of the sender.
    pub source: usize,
    /// The tag the sender gave.
    pub tag: u32,
    /// Payload length in bytes.
    pub bytes: usize,
}

/// A typed payload that can also be seen as bytes, so a receiver asking for the sender's type
/// gets the vector back without a copy.
pub(crate) trait Payload: Send {
    fn bytes(&self) -> &[u8];
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Pod + Send> Payload for Vec<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A message in flight.
pub(crate) struct Envelope {
    pub source: usize,
    pub tag: u32,
    /// Sent by a collective: kept out of the user's queue.
    pub internal: bool,
    /// Collectives' side channel (e.g. the total item count of a scatter).
    pub meta: u64,
    pub payload: Box<dyn Payload>,
}

impl Envelope {
    pub fn info(&self) -> MessageInfo {
        MessageInfo {
            source: self.source,
            tag: self.tag,
            bytes: self.payload.bytes().len(),
        }
    }

    /// The payload as `Vec<T>`: moved if it was sent as `T`, copied from its bytes otherwise.
    /// The caller has checked that the length is a multiple of `size_of::<T>()`.
    pub fn into_vec<T: Pod>(self) -> Vec<T> {
        if std::mem::size_of::<T>() == 0 {
            Vec::new()
        } else if self.payload.as_any().is::<Vec<T>>() {
            *self
                .payload
                .into_any()
                .downcast::<Vec<T>>()
                .unwrap_or_default()
        } else {
            bytemuck::pod_collect_to_vec(self.payload.bytes())
        }
    }
}
